package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type killWindowParams struct {
	WindowID string `json:"windowId"`
	Force    string `json:"force,omitempty"`
}

func killWindowTool() tool {
	return &typedTool[killWindowParams, removedResult]{toolSpec: toolSpec{
		name:    "kill_window",
		toolset: Teardown,
		title:   "Kill window",
		description: "Kills a window and its panes; answers the ids removed. " +
			`Example: {"windowId":"@2"}`,
		capability: teardownCapability,
	}, handle: (*server).killWindow}
}

func (s *server) killWindow(ctx context.Context, _ *mcp.CallToolRequest, in killWindowParams) (removedResult, error) {
	c, err := s.protect(ctx, "window", in.WindowID, in.Force, forTeardown)
	if err != nil {
		return removedResult{}, err
	}
	if _, err := s.tmux.Run(ctx, "kill-window", "-t", in.WindowID); err != nil {
		return removedResult{}, s.explainTargets(ctx, err, target{"window", in.WindowID})
	}
	var res removedResult
	for _, p := range c.panes {
		res.Removed = append(res.Removed, p.ID)
	}
	res.Removed = append(res.Removed, in.WindowID)
	return s.sessionsGone(ctx, res, c.pane.SessionID), nil
}
