package mcpserver

import (
	"context"
	"strings"

	"github.com/libtmux/libtmux-mcp/broker"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type cancelRunParams struct {
	Handle string `json:"handle"`
}

func cancelRunTool() tool {
	return &typedTool[cancelRunParams, runWaitResult]{toolSpec: toolSpec{
		name:    "cancel_run",
		blocks:  true,
		toolset: Execute,
		title:   "Cancel run",
		description: "Stops a run: run_shell_command's by C-c while it is its pane's foreground job (else refuses), tmux_run_start's process group (TERM, then KILL). Answers as wait_for_run. " +
			`Example: {"handle":"rsc-0123456789ab"}`,
		capability: Capability{
			ProcessReach:        ReachPaneInput,
			Effects:             []Effect{EffectObserve, EffectChange},
			Outputs:             []Output{OutputTerminalContent},
			InputLiteralization: map[string]Literalization{"handle": litNotSent},
		},
	}, handle: (*server).cancelRun}
}

func (s *server) cancelRun(ctx context.Context, req *mcp.CallToolRequest, in cancelRunParams) (runWaitResult, error) {
	if strings.HasPrefix(in.Handle, broker.HandlePrefix) {
		return s.backgroundRun(ctx, req, in.Handle, "", nil, true)
	}
	r, err := s.runRequest(req, in.Handle, "", nil, "cancel_run")
	if err != nil {
		return runWaitResult{}, err
	}
	res, err := s.shell.Cancel(ctx, r)
	if err != nil {
		return runWaitResult{}, err
	}
	return handleAnswer(in.Handle, res, s.effectiveTimeout(nil)), nil
}
