package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/shellrun"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type waitForRunParams struct {
	Handle    string `json:"handle"`
	TimeoutMs *int64 `json:"timeoutMs,omitempty"`
	Cursor    string `json:"cursor,omitempty"`
}

// runWaitResult is what wait_for_run and cancel_run answer of a run.
type runWaitResult struct {
	Handle string `json:"handle"`
	// State is running, or how the run ended.
	State              string   `json:"state"`
	ExitStatus         *int     `json:"exitStatus"`
	Output             []string `json:"output"`
	DroppedLines       int      `json:"droppedLines"`
	DroppedChars       int      `json:"droppedChars"`
	Cursor             string   `json:"cursor"`
	PaneCursor         string   `json:"paneCursor,omitempty"`
	EffectiveTimeoutMs int64    `json:"effectiveTimeoutMs"`
	Note               string   `json:"note,omitempty"`
}

func waitForRunTool() tool {
	return &typedTool[waitForRunParams, runWaitResult]{toolSpec: toolSpec{
		name:    "wait_for_run",
		blocks:  true,
		toolset: Execute,
		title:   "Wait for run",
		description: "Waits for a run by handle: state (running, completed, interrupted, pane_died), exitStatus, output after cursor (head and tail past the budget), next cursor. " +
			`Example: {"handle":"rsc-0123456789ab","cursor":"L40"}`,
		capability: Capability{
			ProcessReach:        ReachNone,
			Effects:             []Effect{EffectObserve},
			Outputs:             []Output{OutputTerminalContent},
			InputLiteralization: map[string]Literalization{"handle": litNotSent, "cursor": litNotSent},
		},
	}, handle: (*server).waitForRun}
}

func (s *server) waitForRun(ctx context.Context, req *mcp.CallToolRequest, in waitForRunParams) (runWaitResult, error) {
	r, err := s.runRequest(req, in.Handle, in.Cursor, in.TimeoutMs, "wait_for_run")
	if err != nil {
		return runWaitResult{}, err
	}
	res, err := s.shell.Collect(ctx, r)
	if err != nil {
		return runWaitResult{}, err
	}
	return handleAnswer(in.Handle, res, s.effectiveTimeout(in.TimeoutMs)), nil
}

// runRequest is the engine's request for a run by handle, from cursor,
// with this call's wait.
func (s *server) runRequest(req *mcp.CallToolRequest, handle, cur string, timeoutMs *int64, what string) (shellrun.Request, error) {
	if handle == "" {
		return shellrun.Request{}, errors.New("handle is empty; give a run's handle (from run_shell_command's timed_out answer, or list_runs)")
	}
	if s.live == nil {
		return shellrun.Request{}, errors.New("no_stream: runs have no handles without the control-mode connection that LIBTMUX_MCP_LIVE=0 forbids; read the pane with capture_since")
	}
	from, err := shellrun.ParseCursor(cur)
	if err != nil {
		return shellrun.Request{}, err
	}
	r := shellrun.Request{Handle: handle, From: from,
		Wait: func(ctx context.Context) (context.Context, time.Duration, func()) {
			wctx, w := s.startWait(ctx, req, timeoutMs, what)
			return wctx, w.effective, w.end
		}}
	if eff := s.effectiveTimeout(timeoutMs); timeoutMs != nil && *timeoutMs > eff.Milliseconds() {
		r.Clamped = fmt.Sprintf("timeoutMs %d was clamped to %d, the wait ceiling (LIBTMUX_MCP_WAIT_MAX_MS)", *timeoutMs, eff.Milliseconds())
	}
	return r, nil
}

// handleAnswer is the published form of a run's wait.
func handleAnswer(handle string, res shellrun.Result, eff time.Duration) runWaitResult {
	state := string(res.Outcome)
	if res.Outcome == shellrun.TimedOut || res.Outcome == shellrun.Cancelled {
		state = "running"
	}
	return runWaitResult{Handle: handle, State: state, ExitStatus: res.ExitStatus, Output: nonNil(res.Output),
		DroppedLines: res.DroppedLines, DroppedChars: res.DroppedChars, Cursor: shellrun.FormatCursor(res.Next),
		PaneCursor: res.Cursor, EffectiveTimeoutMs: eff.Milliseconds(), Note: res.Note}
}
