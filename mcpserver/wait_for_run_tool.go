package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/libtmux/libtmux-mcp/broker"
	"github.com/libtmux/libtmux-mcp/internal/shellrun"
	"github.com/libtmux/libtmux-mcp/internal/spool"
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
	// A tmux_run_start run's streams, apart, in place of output.
	Signal        *int   `json:"signal,omitempty"`
	Stdout        string `json:"stdout,omitempty"`
	Stderr        string `json:"stderr,omitempty"`
	StdoutDropped int64  `json:"stdoutDropped,omitempty"`
	StderrDropped int64  `json:"stderrDropped,omitempty"`
	// Survivors counts what a tmux_run_start script left running in its process group.
	Survivors *int `json:"survivors,omitempty"`
}

func waitForRunTool() tool {
	return &typedTool[waitForRunParams, runWaitResult]{toolSpec: toolSpec{
		name:    "wait_for_run",
		blocks:  true,
		toolset: Execute,
		title:   "Wait for run",
		description: "Waits for a run by handle: state (running, completed, interrupted, pane_died, cancelled, timed_out, failed), exitStatus or signal, output after cursor (head and tail past the budget; tmux_run_start: stdout, stderr apart), next cursor. " +
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
	if strings.HasPrefix(in.Handle, broker.HandlePrefix) {
		return s.backgroundRun(ctx, req, in.Handle, in.Cursor, in.TimeoutMs, false)
	}
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

// backgroundRun answers wait_for_run (or cancel_run, when cancel) for a tmux_run_start handle:
// the run's state and each stream after cursor, within half the read budget each.
func (s *server) backgroundRun(ctx context.Context, req *mcp.CallToolRequest, handle, cur string, timeoutMs *int64, cancel bool) (runWaitResult, error) {
	if s.runner == nil {
		return runWaitResult{}, fmt.Errorf("no run has handle %q: tmux_run_start is not enabled on this server, so it has no background runs", handle)
	}
	from, err := parseStreamCursor(cur)
	if err != nil {
		return runWaitResult{}, err
	}
	budget := max(s.budget.Chars/2, 1024)
	wctx, w := s.startWait(ctx, req, timeoutMs, "wait_for_run")
	defer w.end()
	var v broker.BackgroundView
	if cancel {
		v, err = s.runner.CancelBackground(wctx, handle, from, budget)
	} else {
		v, err = s.runner.WaitBackground(wctx, handle, from, budget)
	}
	if err != nil {
		return runWaitResult{}, err
	}
	res := runWaitResult{Handle: handle, State: backgroundState(v), Output: []string{}, EffectiveTimeoutMs: w.ms(),
		Cursor: fmt.Sprintf("B%d:%d", v.Stdout.Next, v.Stderr.Next), StdoutDropped: v.Stdout.Dropped, StderrDropped: v.Stderr.Dropped}
	if c := v.Completion; c != nil && c.Signaled {
		res.Signal = &c.Signal
	} else if c != nil {
		res.ExitStatus = &c.Status
	}
	var notes []string
	if v.Message != "" {
		notes = append(notes, v.Message)
	}
	if left := v.Survivors; left != nil {
		res.Survivors = &left.Count
		notes = append(notes, left.String())
	}
	for _, st := range []struct {
		name string
		part spool.Part
		text *string
	}{{"stdout", v.Stdout, &res.Stdout}, {"stderr", v.Stderr, &res.Stderr}} {
		*st.text = streamText(st.part)
		if !utf8.ValidString(*st.text) {
			*st.text = strings.ToValidUTF8(*st.text, "\uFFFD")
			notes = append(notes, st.name+" is not UTF-8 text; bytes that are not are shown as U+FFFD")
		}
		if st.part.Err != nil {
			notes = append(notes, fmt.Sprintf("%s could not all be kept: %v", st.name, st.part.Err))
		}
	}
	if v.Running && !cancel {
		notes = append(notes, "still running: call wait_for_run again with this cursor")
	}
	if eff := s.effectiveTimeout(timeoutMs); timeoutMs != nil && *timeoutMs > eff.Milliseconds() {
		notes = append(notes, fmt.Sprintf("timeoutMs %d was clamped to %d, the wait ceiling (LIBTMUX_MCP_WAIT_MAX_MS)", *timeoutMs, eff.Milliseconds()))
	}
	res.Note = strings.Join(notes, "; ")
	return res, nil
}

// streamText is a stream's head and tail, with the bytes left out between them named.
func streamText(p spool.Part) string {
	if p.Dropped == 0 {
		return string(p.Head) + string(p.Tail)
	}
	return string(p.Head) + fmt.Sprintf("\n[… %d bytes left out …]\n", p.Dropped) + string(p.Tail)
}

// backgroundState is a background run's state as wait_for_run names it.
func backgroundState(v broker.BackgroundView) string {
	switch {
	case v.Running:
		return "running"
	case v.Code == "":
		return "completed"
	case v.Code == broker.CodeCancelled || v.Code == broker.CodeBrokerUnavailable:
		return "cancelled"
	case v.Code == broker.CodeTimedOut:
		return "timed_out"
	}
	return "failed"
}

// parseStreamCursor reads a background run's cursor, "B<stdout offset>:<stderr offset>"; empty
// is the start of both streams.
func parseStreamCursor(cur string) ([2]int64, error) {
	if cur == "" {
		return [2]int64{}, nil
	}
	bad := fmt.Errorf("cursor %q is not a tmux_run_start cursor like B1024:0; pass the cursor of the last wait_for_run answer for this handle, or none for the whole output", cur)
	o, e, ok := strings.Cut(strings.TrimPrefix(cur, "B"), ":")
	if !ok || !strings.HasPrefix(cur, "B") {
		return [2]int64{}, bad
	}
	out, err1 := strconv.ParseInt(o, 10, 64)
	errs, err2 := strconv.ParseInt(e, 10, 64)
	if err1 != nil || err2 != nil || out < 0 || errs < 0 {
		return [2]int64{}, bad
	}
	return [2]int64{out, errs}, nil
}
