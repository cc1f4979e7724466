package mcpserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type listPanesParams struct {
	SessionID string `json:"sessionId,omitempty"`
	WindowID  string `json:"windowId,omitempty"`
}

type listPanesResult struct {
	Panes []paneRow `json:"panes"`
	Note  string    `json:"note,omitempty"`
}

func listPanesTool() tool {
	return &typedTool[listPanesParams, listPanesResult]{toolSpec: toolSpec{
		name:    "list_panes",
		toolset: Inspect,
		title:   "List panes",
		description: "Panes: id, place, size, command, pid, state; watched: a person sees it; enrollment: tmux_run's; claim: the process running a command there. " +
			`Example: {"windowId":"@1"}`,
		capability: metadataOnly,
	}, handle: (*server).listPanes}
}

func (s *server) listPanes(ctx context.Context, _ *mcp.CallToolRequest, in listPanesParams) (listPanesResult, error) {
	scope := tmux.PaneScope{SessionID: in.SessionID, WindowID: in.WindowID}
	kind, id := "session", in.SessionID
	switch {
	case in.SessionID != "" && in.WindowID != "":
		return listPanesResult{}, errors.New("give sessionId or windowId, not both; a window id already names its session")
	case in.WindowID != "":
		kind, id = "window", in.WindowID
	}
	if id != "" {
		if err := checkID(kind, id); err != nil {
			return listPanesResult{}, err
		}
	}
	snap, err := s.tmux.Snapshot(ctx, tmux.Want{Panes: true, Clients: true, Scope: scope})
	if err != nil {
		return listPanesResult{}, s.explain(ctx, err, kind, id)
	}
	res := listPanesResult{Panes: s.paneRows(snap)}
	if len(res.Panes) == 0 {
		res.Note = "the server has no sessions, so no panes"
	}
	return res, nil
}

// onePane reads pane id and the clients in one call.
func (s *server) onePane(ctx context.Context, id string) (paneRow, error) {
	if err := checkID("pane", id); err != nil {
		return paneRow{}, err
	}
	snap, err := s.tmux.Snapshot(ctx, tmux.Want{Panes: true, Clients: true, Scope: tmux.PaneScope{PaneID: id}})
	if err != nil {
		return paneRow{}, s.explain(ctx, err, "pane", id)
	}
	for _, row := range s.paneRows(snap) {
		if row.PaneID == id {
			return row, nil
		}
	}
	return paneRow{}, fmt.Errorf("no pane %s on this server; call list_panes for the panes that exist", id)
}
