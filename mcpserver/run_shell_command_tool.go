package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"github.com/libtmux/libtmux-mcp/internal/panerecord"
	"strings"
	"time"

	"github.com/libtmux/libtmux-mcp/enroll"
	"github.com/libtmux/libtmux-mcp/internal/shellrun"
	"github.com/libtmux/libtmux-mcp/live"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type runShellCommandParams struct {
	PaneID    string `json:"paneId" jsonschema:"a shell at its prompt"`
	Command   string `json:"command"`
	TimeoutMs *int64 `json:"timeoutMs,omitempty"`
	Force     string `json:"force,omitempty"`
}

type runShellCommandResult struct {
	Outcome            string   `json:"outcome"`
	ExitStatus         *int     `json:"exitStatus"`
	Output             []string `json:"output"`
	DroppedLines       int      `json:"droppedLines"`
	DroppedChars       int      `json:"droppedChars"`
	Cursor             string   `json:"cursor,omitempty"`
	Handle             string   `json:"handle,omitempty"`
	EffectiveTimeoutMs int64    `json:"effectiveTimeoutMs"`
	Note               string   `json:"note,omitempty"`
}

func runShellCommandTool() tool {
	return &typedTool[runShellCommandParams, runShellCommandResult]{toolSpec: toolSpec{
		name:    "run_shell_command",
		blocks:  true,
		toolset: Execute,
		title:   "Run shell command",
		description: "Runs a command line in a pane's shell (a subshell) and waits; answers exit status, output (head and tail past the budget), a capture_since cursor. One per pane at a time; on timed_out, its handle is for wait_for_run, cancel_run. " +
			`Example: {"paneId":"%3","command":"make test"}`,
		capability: Capability{
			ProcessReach:        ReachPaneCommand,
			Effects:             []Effect{EffectObserve, EffectChange},
			Outputs:             []Output{OutputTerminalContent},
			InputLiteralization: map[string]Literalization{"command": litLiteral},
		},
	}, handle: (*server).runShellCommand}
}

// maxCommandBytes bounds what run_shell_command types.
const maxCommandBytes = 16384

// runShellCommand checks the arguments and hands the run to the engine
// (package shellrun), with this call's wait: its clamp, its deadline and
// its progress notifications.
func (s *server) runShellCommand(ctx context.Context, req *mcp.CallToolRequest, in runShellCommandParams) (runShellCommandResult, error) {
	if err := checkID("pane", in.PaneID); err != nil {
		return runShellCommandResult{}, err
	}
	switch {
	case strings.TrimSpace(in.Command) == "":
		return runShellCommandResult{}, errors.New("command is empty; give the shell command line to run (to wait for an earlier one, call wait_for_run with its handle)")
	case len(in.Command) > maxCommandBytes:
		return runShellCommandResult{}, fmt.Errorf("command is %d bytes; at most %d can be typed; put longer scripts in a file and run that", len(in.Command), maxCommandBytes)
	case strings.ContainsRune(in.Command, 0):
		return runShellCommandResult{}, errors.New("command contains a NUL byte, which a terminal cannot carry; remove it")
	}
	eff := s.effectiveTimeout(in.TimeoutMs)
	r := shellrun.Request{Pane: in.PaneID, Command: in.Command, Force: in.Force,
		Wait: func(ctx context.Context) (context.Context, time.Duration, func()) {
			wctx, w := s.startWait(ctx, req, in.TimeoutMs, "run_shell_command")
			return wctx, w.effective, w.end
		}}
	if in.TimeoutMs != nil && *in.TimeoutMs > eff.Milliseconds() {
		r.Clamped = fmt.Sprintf("timeoutMs %d was clamped to %d, the wait ceiling (LIBTMUX_MCP_WAIT_MAX_MS)", *in.TimeoutMs, eff.Milliseconds())
	}
	res, err := s.shell.Run(ctx, r)
	if err != nil {
		return runShellCommandResult{}, err
	}
	return runShellCommandResult{Outcome: string(res.Outcome), ExitStatus: res.ExitStatus, Output: res.Output,
		DroppedLines: res.DroppedLines, DroppedChars: res.DroppedChars, Cursor: res.Cursor, Handle: res.Handle,
		EffectiveTimeoutMs: eff.Milliseconds(), Note: res.Note}, nil
}

// shellHost is what run_shell_command's engine asks of the server: its
// protections, its views and watches, and its words for tmux failures.
type shellHost struct{ s *server }

func (h shellHost) Check(ctx context.Context, run func(ctx context.Context, args ...string) (string, error), pane, force string) (shellrun.Checked, error) {
	var c checked
	var err error
	if run == nil {
		c, err = h.s.protect(ctx, "pane", pane, force, forCommand)
	} else {
		c, err = h.s.protectVia(ctx, run, "pane", pane, force, forCommand)
	}
	return shellrun.Checked{Pane: c.pane, Snapshot: c.snap}, err
}

func (h shellHost) Allowed(pane string, serverPID int, generation string) bool {
	return !h.s.caller.is(pane, serverPID) && h.s.enrollmentState(pane, generation) != enroll.StateInvited
}

func (h shellHost) InputTo(pane string) func() { return h.s.inputTo(pane) }

func (h shellHost) PaneRecords() *panerecord.Set { return h.s.paneRecords() }

func (h shellHost) Explain(ctx context.Context, err error, pane string) error {
	return h.s.explain(ctx, err, "pane", pane)
}

func (h shellHost) View(ctx context.Context, pane string) (*live.View, func(), error) {
	return h.s.paneView(ctx, pane, h.s.viewKeep(), nil, nil)
}

func (h shellHost) Watch(ctx context.Context, session, pane string) shellrun.Watch {
	w := h.s.watchPane(ctx, session, pane, false)
	return shellrun.Watch{Wake: w.C, Ended: w.Ended, Stop: w.Stop, Command: w.Command}
}
