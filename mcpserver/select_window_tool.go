package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type selectWindowParams struct {
	WindowID string `json:"windowId"`
}

type selectWindowResult struct {
	WindowID  string `json:"windowId"`
	SessionID string `json:"sessionId"`
	Active    bool   `json:"active"`
}

func selectWindowTool() tool {
	return &typedTool[selectWindowParams, selectWindowResult]{toolSpec: toolSpec{
		name:    "select_window",
		toolset: Manage,
		title:   "Select window",
		description: "Makes a window its session's current one. " +
			`Example: {"windowId":"@2"}`,
		capability: Capability{
			ProcessReach:        ReachNone,
			Effects:             []Effect{EffectChange},
			Outputs:             []Output{OutputTmuxMetadata},
			InputLiteralization: map[string]Literalization{},
		},
	}, handle: (*server).selectWindow}
}

func (s *server) selectWindow(ctx context.Context, _ *mcp.CallToolRequest, in selectWindowParams) (selectWindowResult, error) {
	if err := checkID("window", in.WindowID); err != nil {
		return selectWindowResult{}, err
	}
	v, err := s.tmux.RunThenRead(ctx, []string{"select-window", "-t", in.WindowID}, in.WindowID, "session_id", "window_active")
	if err != nil {
		return selectWindowResult{}, s.explainTargets(ctx, err, target{"window", in.WindowID})
	}
	return selectWindowResult{WindowID: in.WindowID, SessionID: v[0], Active: v[1] == "1"}, nil
}
