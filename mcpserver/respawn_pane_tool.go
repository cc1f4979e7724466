package mcpserver

import (
	"context"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type respawnPaneParams struct {
	PaneID string `json:"paneId"`
	Force  string `json:"force,omitempty"`
}

type respawnPaneResult struct {
	PaneID      string `json:"paneId"`
	PID         int    `json:"pid"`
	PreviousPID int    `json:"previousPid"`
}

func respawnPaneTool() tool {
	return &typedTool[respawnPaneParams, respawnPaneResult]{toolSpec: toolSpec{
		name:    "respawn_pane",
		toolset: Manage,
		title:   "Respawn pane",
		description: "Kills a pane's program and starts its command again; the id stays. " +
			`Example: {"paneId":"%3"}`,
		capability: Capability{
			ProcessReach:        ReachConfiguredProcess,
			Effects:             []Effect{EffectChange},
			Outputs:             []Output{OutputTmuxMetadata},
			InputLiteralization: map[string]Literalization{},
		},
	}, handle: (*server).respawnPane}
}

func (s *server) respawnPane(ctx context.Context, _ *mcp.CallToolRequest, in respawnPaneParams) (respawnPaneResult, error) {
	c, err := s.protect(ctx, "pane", in.PaneID, in.Force, forTeardown)
	if err != nil {
		return respawnPaneResult{}, err
	}
	v, err := s.tmux.RunThenRead(ctx, []string{"respawn-pane", "-k", "-t", in.PaneID}, in.PaneID, "pane_pid")
	if err != nil {
		return respawnPaneResult{}, s.explainTargets(ctx, err, target{"pane", in.PaneID})
	}
	pid, _ := strconv.Atoi(v[0])
	return respawnPaneResult{PaneID: in.PaneID, PID: pid, PreviousPID: c.pane.PID}, nil
}
