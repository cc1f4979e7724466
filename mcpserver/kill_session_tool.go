package mcpserver

import (
	"context"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type killSessionParams struct {
	sessionRef
	Force string `json:"force,omitempty"`
}

func killSessionTool() tool {
	return &typedTool[killSessionParams, removedResult]{toolSpec: toolSpec{
		name:    "kill_session",
		toolset: Teardown,
		title:   "Kill session",
		description: "Kills a session; answers the ids removed. " +
			`Example: {"sessionName":"build"}`,
		capability: Capability{
			ProcessReach:        ReachNone,
			Effects:             []Effect{EffectDelete},
			Outputs:             []Output{OutputTmuxMetadata},
			InputLiteralization: map[string]Literalization{"sessionName": litTarget},
		},
	}, handle: (*server).killSession}
}

func (s *server) killSession(ctx context.Context, _ *mcp.CallToolRequest, in killSessionParams) (removedResult, error) {
	id, err := s.resolveSession(ctx, in.sessionRef)
	if err != nil {
		return removedResult{}, err
	}
	c, err := s.protect(ctx, "session", id, in.Force, forTeardown)
	if err != nil {
		return removedResult{}, err
	}
	if _, err := s.tmux.Run(ctx, "kill-session", "-t", id); err != nil {
		return removedResult{}, s.explainTargets(ctx, err, target{"session", id})
	}
	var res removedResult
	var windows []string
	for _, p := range c.panes {
		res.Removed = append(res.Removed, p.ID)
		if !slices.Contains(windows, p.WindowID) {
			windows = append(windows, p.WindowID)
		}
	}
	res.Removed = append(append(res.Removed, windows...), id)
	return res, nil
}
