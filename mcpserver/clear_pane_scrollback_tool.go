package mcpserver

import (
	"context"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type clearPaneScrollbackParams struct {
	PaneID string `json:"paneId"`
	Force  string `json:"force,omitempty"`
}

type clearPaneScrollbackResult struct {
	PaneID       string `json:"paneId"`
	ClearedLines int    `json:"clearedLines"`
}

func clearPaneScrollbackTool() tool {
	return &typedTool[clearPaneScrollbackParams, clearPaneScrollbackResult]{toolSpec: toolSpec{
		name:    "clear_pane_scrollback",
		toolset: Teardown,
		title:   "Clear scrollback",
		description: "Deletes a pane's scrollback; the screen stays. " +
			`Example: {"paneId":"%3"}`,
		capability: teardownCapability,
	}, handle: (*server).clearPaneScrollback}
}

func (s *server) clearPaneScrollback(ctx context.Context, _ *mcp.CallToolRequest, in clearPaneScrollbackParams) (clearPaneScrollbackResult, error) {
	c, err := s.protect(ctx, "pane", in.PaneID, in.Force, forTeardown)
	if err != nil {
		return clearPaneScrollbackResult{}, err
	}
	v, err := s.tmux.RunThenRead(ctx, []string{"clear-history", "-t", in.PaneID}, in.PaneID, "history_size")
	if err != nil {
		return clearPaneScrollbackResult{}, s.explainTargets(ctx, err, target{"pane", in.PaneID})
	}
	after, _ := strconv.Atoi(v[0])
	return clearPaneScrollbackResult{PaneID: in.PaneID, ClearedLines: max(c.pane.HistorySize-after, 0)}, nil
}
