package mcpserver

import (
	"context"

	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type setSynchronizePanesParams struct {
	WindowID string `json:"windowId"`
	Enabled  bool   `json:"enabled"`
}

type setSynchronizePanesResult struct {
	WindowID string `json:"windowId"`
	Enabled  bool   `json:"enabled"`
}

func setSynchronizePanesTool() tool {
	return &typedTool[setSynchronizePanesParams, setSynchronizePanesResult]{toolSpec: toolSpec{
		name:    "set_synchronize_panes",
		toolset: Manage,
		title:   "Set synchronize-panes",
		description: "While on, keys to one pane of the window reach all its panes. " +
			`Example: {"windowId":"@2","enabled":false}`,
		capability: Capability{
			ProcessReach:        ReachNone,
			Effects:             []Effect{EffectChange},
			Outputs:             []Output{OutputTmuxMetadata},
			InputLiteralization: map[string]Literalization{"enabled": litValidated},
		},
	}, handle: (*server).setSynchronizePanes}
}

func (s *server) setSynchronizePanes(ctx context.Context, _ *mcp.CallToolRequest, in setSynchronizePanesParams) (setSynchronizePanesResult, error) {
	if err := checkID("window", in.WindowID); err != nil {
		return setSynchronizePanesResult{}, err
	}
	out, err := s.tmux.Run(ctx, "set-option", "-w", "-t", in.WindowID, "synchronize-panes", tmux.OnOff(in.Enabled),
		";", "show-options", "-w", "-v", "-t", in.WindowID, "synchronize-panes")
	if err != nil {
		return setSynchronizePanesResult{}, s.explainTargets(ctx, err, target{"window", in.WindowID})
	}
	v, err := tmux.ParseOnOff(out)
	return setSynchronizePanesResult{WindowID: in.WindowID, Enabled: v}, err
}
