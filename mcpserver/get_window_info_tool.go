package mcpserver

import (
	"context"
	"fmt"

	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type windowInfoParams struct {
	WindowID string `json:"windowId"`
}

type windowInfoResult struct {
	Window windowRow `json:"window"`
	Panes  []paneRow `json:"panes"`
}

func getWindowInfoTool() tool {
	return &typedTool[windowInfoParams, windowInfoResult]{toolSpec: toolSpec{
		name:    "get_window_info",
		toolset: Inspect,
		title:   "Window info",
		description: "One window and its panes. " +
			`Example: {"windowId":"@1"}`,
		capability: metadataOnly,
	}, handle: (*server).windowInfo}
}

func (s *server) windowInfo(ctx context.Context, _ *mcp.CallToolRequest, in windowInfoParams) (windowInfoResult, error) {
	if err := checkID("window", in.WindowID); err != nil {
		return windowInfoResult{}, err
	}
	scope := tmux.PaneScope{WindowID: in.WindowID}
	snap, err := s.tmux.Snapshot(ctx, tmux.Want{Windows: true, Panes: true, Clients: true, Scope: scope})
	if err != nil {
		return windowInfoResult{}, s.explain(ctx, err, "window", in.WindowID)
	}
	for _, w := range snap.Windows {
		if w.ID == in.WindowID {
			return windowInfoResult{Window: toWindowRow(w), Panes: s.paneRows(snap)}, nil
		}
	}
	return windowInfoResult{}, fmt.Errorf("no window %s on this server; call list_windows for the %d that exist", in.WindowID, len(snap.Windows))
}
