package mcpserver

import (
	"context"

	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type listWindowsParams struct {
	SessionID string `json:"sessionId,omitempty"`
}

type listWindowsResult struct {
	Windows []windowRow `json:"windows"`
	Note    string      `json:"note,omitempty"`
}

func listWindowsTool() tool {
	return &typedTool[listWindowsParams, listWindowsResult]{toolSpec: toolSpec{
		name:    "list_windows",
		toolset: Inspect,
		title:   "List windows",
		description: "Windows: id, session, index, name, size, layout. " +
			`Example: {"sessionId":"$0"}`,
		capability: metadataOnly,
	}, handle: (*server).listWindows}
}

func (s *server) listWindows(ctx context.Context, _ *mcp.CallToolRequest, in listWindowsParams) (listWindowsResult, error) {
	if in.SessionID != "" {
		if err := checkID("session", in.SessionID); err != nil {
			return listWindowsResult{}, err
		}
	}
	snap, err := s.tmux.Snapshot(ctx, tmux.Want{Windows: true, Scope: tmux.PaneScope{SessionID: in.SessionID}})
	if err != nil {
		return listWindowsResult{}, s.explain(ctx, err, "session", in.SessionID)
	}
	res := listWindowsResult{Windows: make([]windowRow, 0, len(snap.Windows))}
	for _, w := range snap.Windows {
		res.Windows = append(res.Windows, toWindowRow(w))
	}
	if len(res.Windows) == 0 {
		res.Note = "the server has no sessions, so no windows"
	}
	return res, nil
}
