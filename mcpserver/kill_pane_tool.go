package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type killPaneParams struct {
	PaneID string `json:"paneId"`
	Force  string `json:"force,omitempty"`
}

func killPaneTool() tool {
	return &typedTool[killPaneParams, removedResult]{toolSpec: toolSpec{
		name:    "kill_pane",
		toolset: Teardown,
		title:   "Kill pane",
		description: "Kills a pane; answers the ids removed. " +
			`Example: {"paneId":"%3"}`,
		capability: teardownCapability,
	}, handle: (*server).killPane}
}

func (s *server) killPane(ctx context.Context, _ *mcp.CallToolRequest, in killPaneParams) (removedResult, error) {
	c, err := s.protect(ctx, "pane", in.PaneID, in.Force, forTeardown)
	if err != nil {
		return removedResult{}, err
	}
	if _, err := s.tmux.Run(ctx, "kill-pane", "-t", in.PaneID); err != nil {
		return removedResult{}, s.explainTargets(ctx, err, target{"pane", in.PaneID})
	}
	res := removedResult{Removed: []string{in.PaneID}}
	// protect read the panes of the target's window.
	if len(c.snap.Panes) == 1 {
		res.Removed = append(res.Removed, c.pane.WindowID)
	}
	return s.sessionsGone(ctx, res, c.pane.SessionID), nil
}
