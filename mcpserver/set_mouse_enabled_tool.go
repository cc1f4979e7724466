package mcpserver

import (
	"context"

	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type setMouseEnabledParams struct {
	SessionID string `json:"sessionId,omitempty" jsonschema:"omitted: every session"`
	Enabled   bool   `json:"enabled"`
}

type setMouseEnabledResult struct {
	Scope   string `json:"scope"`
	Enabled bool   `json:"enabled"`
}

func setMouseEnabledTool() tool {
	return &typedTool[setMouseEnabledParams, setMouseEnabledResult]{toolSpec: toolSpec{
		name:    "set_mouse_enabled",
		toolset: Manage,
		title:   "Set mouse",
		description: "Turns tmux mouse support on or off. " +
			`Example: {"enabled":true}`,
		capability: Capability{
			ProcessReach:        ReachNone,
			Effects:             []Effect{EffectChange},
			Outputs:             []Output{OutputTmuxMetadata},
			InputLiteralization: map[string]Literalization{"enabled": litValidated},
		},
	}, handle: (*server).setMouseEnabled}
}

func (s *server) setMouseEnabled(ctx context.Context, _ *mcp.CallToolRequest, in setMouseEnabledParams) (setMouseEnabledResult, error) {
	scope, err := s.setSessionOption(ctx, in.SessionID, "mouse", tmux.OnOff(in.Enabled))
	if err != nil {
		return setMouseEnabledResult{}, err
	}
	v, err := tmux.ParseOnOff(scope.value)
	return setMouseEnabledResult{Scope: scope.name, Enabled: v}, err
}
