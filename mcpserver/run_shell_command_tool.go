package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"github.com/libtmux/libtmux-mcp/internal/cursor"
	"strconv"
	"strings"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/fgproc"
	"github.com/libtmux/libtmux-mcp/live"
	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type runShellCommandParams struct {
	PaneID    string `json:"paneId" jsonschema:"pane id (%3), a shell at its prompt"`
	Command   string `json:"command,omitempty" jsonschema:"shell command line"`
	Handle    string `json:"handle,omitempty" jsonschema:"a timed_out answer's handle, instead of command"`
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
		description: "Runs a command line in a pane's shell (in a subshell), waits, answers exit status, output (head and tail past the budget) and a capture_since cursor. One per pane at a time; pass a timed_out answer's handle instead of command to wait again. " +
			`Example: {"paneId":"%3","command":"make test"}.`,
		capability: Capability{
			ProcessReach:        ReachPaneCommand,
			Effects:             []Effect{EffectObserve, EffectChange},
			Outputs:             []Output{OutputTerminalContent},
			InputLiteralization: map[string]Literalization{"command": litLiteral},
		},
	}, handle: (*server).runShellCommand}
}

// shells are the foreground programs run_shell_command types into.
var shells = map[string]bool{"bash": true, "zsh": true, "sh": true, "dash": true, "ksh": true, "mksh": true, "ksh93": true}

// maxCommandBytes bounds what run_shell_command types.
const maxCommandBytes = 16384

func (s *server) runShellCommand(ctx context.Context, req *mcp.CallToolRequest, in runShellCommandParams) (runShellCommandResult, error) {
	if err := checkID("pane", in.PaneID); err != nil {
		return runShellCommandResult{}, err
	}
	if in.Handle != "" {
		if in.Command != "" {
			return runShellCommandResult{}, errors.New("give command (to run one) or handle (to wait for one that timed out), not both")
		}
		if s.live == nil {
			return runShellCommandResult{}, errors.New("no_stream: waiting for a command by its handle needs the control-mode connection that LIBTMUX_MCP_LIVE=0 forbids; read the pane with capture_since")
		}
		return s.collectRun(ctx, req, in)
	}
	switch {
	case strings.TrimSpace(in.Command) == "":
		return runShellCommandResult{}, errors.New("command is empty; give the shell command line to run (or handle, to wait for an earlier one)")
	case len(in.Command) > maxCommandBytes:
		return runShellCommandResult{}, fmt.Errorf("command is %d bytes; at most %d can be typed; put longer scripts in a file and run that", len(in.Command), maxCommandBytes)
	case strings.ContainsRune(in.Command, 0):
		return runShellCommandResult{}, errors.New("command contains a NUL byte, which a terminal cannot carry; remove it")
	}
	var view *live.View
	if s.live != nil {
		view = s.live.Lookup(in.PaneID)
	}
	if err := s.unentered.refusal(in.PaneID, view); err != nil {
		return runShellCommandResult{}, err
	}
	run, busy := s.runs.claim(in.PaneID, in.Command)
	if busy != nil {
		return runShellCommandResult{}, busyError(busy, s.live != nil)
	}
	run.release = func() {}
	if s.live != nil {
		if res, err, ok := s.runOnView(ctx, req, in, run); ok {
			return res, err
		}
	}
	// Without a view: completion by a wait-for process, output from the grid.
	defer s.runs.free(run, 0)
	c, err := s.protect(ctx, "pane", in.PaneID, in.Force, forCommand)
	if err != nil {
		return runShellCommandResult{}, err
	}
	defer s.inputTo(in.PaneID)()
	shell := strings.TrimPrefix(c.pane.CurrentCommand, "-")
	if err := promptCheck(in.PaneID, c.pane.CurrentCommand, c.pane.PID); err != nil {
		return runShellCommandResult{}, err
	}
	exe, err := s.tmux.Executable()
	if err != nil {
		return runShellCommandResult{}, fmt.Errorf("find the tmux program for the completion signal: %w", err)
	}
	f, err := newFrame(exe, c.snap.Server.SocketPath, in.PaneID, in.Command, shell)
	if err != nil {
		return runShellCommandResult{}, err
	}
	start := c.pane.HistorySize + c.pane.CursorY
	guess := tmux.Position{HistorySize: c.pane.HistorySize, CursorY: c.pane.CursorY, Height: c.pane.Height}

	wctx, w := s.startWait(ctx, req, in.TimeoutMs, "run_shell_command")
	defer w.end()
	watch := s.watchPane(wctx, c.pane.SessionID, in.PaneID, false)
	defer func() { watch.stop() }()

	// The completion signal is remembered by tmux when it comes before
	// the waiter, so the waiter can start after the command is typed.
	// Over a control connection each command is its own line (commands on
	// it run in order); without one, one tmux process sends both.
	if watch.command != nil {
		if _, err = watch.command(ctx, "send-keys", "-t", in.PaneID, "-l", f.line); err == nil {
			_, err = watch.command(ctx, "send-keys", "-t", in.PaneID, "Enter")
		}
	} else {
		_, err = s.tmux.Run(ctx, "send-keys", "-t", in.PaneID, "-l", f.line, ";", "send-keys", "-t", in.PaneID, "Enter")
	}
	if err != nil {
		return runShellCommandResult{}, s.explain(ctx, err, "pane", in.PaneID)
	}
	s.noteTyped(in.PaneID, f.line)
	// The waiter reads the status the frame's exit trap stored in a pane
	// option before it signalled, so the status never depends on the screen.
	signalled := make(chan error, 1)
	var option string // the waiter's output: the option's value
	go func() {
		out, err := s.tmux.RunFor(wctx, w.effective+time.Second, "wait-for", f.channel, ";", "show-options", "-p", "-t", in.PaneID, "-v", statusOption)
		option = out
		signalled <- err
	}()

	outcome := ""
	var stored *int // the status the exit trap stored
	for outcome == "" {
		select {
		case err := <-signalled:
			if err != nil {
				outcome = s.ended(wctx, ctx)
				if outcome == "" { // wait-for failed on its own: the server went away
					outcome = outcomePaneDied
				}
				break
			}
			stored = f.storedStatus(option)
			outcome = "completed"
		case <-watch.wake:
			if s.paneGone(ctx, in.PaneID) {
				outcome = outcomePaneDied
			}
		case <-watch.ended:
			// The connection ended (its session may be gone): check, and
			// watch anew.
			watch.stop()
			watch = s.watchPane(wctx, c.pane.SessionID, in.PaneID, false)
			if s.paneGone(ctx, in.PaneID) {
				outcome = outcomePaneDied
			}
		case <-wctx.Done():
			outcome = s.ended(wctx, ctx)
		}
	}
	res := runShellCommandResult{Outcome: outcome, EffectiveTimeoutMs: w.ms(), Output: []string{}}
	if outcome == outcomeCancelled && ctx.Err() != nil {
		// The server is shutting down (or the client gave up, and gets no
		// answer): read nothing more from tmux.
		res.Note = "the wait was cancelled; the command may still be running in " + in.PaneID
		return res, nil
	}
	if outcome == "completed" {
		settle(ctx, c.pane.PID)
	}
	s.frameResult(ctx, in.PaneID, f, start, guess, stored, &res)
	if in.TimeoutMs != nil && *in.TimeoutMs > w.ms() {
		res.Note = strings.TrimPrefix(res.Note+"; "+fmt.Sprintf("timeoutMs %d was clamped to %d, the wait ceiling (LIBTMUX_MCP_WAIT_MAX_MS)", *in.TimeoutMs, w.ms()), "; ")
	}
	return res, nil
}

// settleFor bounds how long a completed command's subshell may take to
// exit after its exit trap signalled.
const settleFor = time.Second

// settle waits, briefly, until the shell has the terminal's foreground
// again: the exit trap signals just before the subshell exits, and a next
// command must find the shell at its prompt.
func settle(ctx context.Context, pid int) {
	deadline := time.Now().Add(settleFor)
	for !atPrompt(pid) && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(2 * time.Millisecond) // the subshell is exiting; no event tells
	}
}

// frameResult fills res from the pane: the lines strictly between the
// frame's markers, the exit status and a cursor. stored, when not nil, is
// the status the frame's exit trap stored: it stands whatever the screen
// kept of the run.
func (s *server) frameResult(ctx context.Context, pane string, f frame, start int, guess tmux.Position, stored *int, res *runShellCommandResult) {
	capture := func(from int, guess tmux.Position) (tmux.Rows, []string, error) {
		q, err := tmux.NewRowsQuery(pane, from, guess, true)
		if err != nil {
			return tmux.Rows{}, nil, err
		}
		// One tmux process: its commands run in one queue step, so the
		// position and the rows describe one moment.
		out, err := s.tmux.Run(ctx, q.Args...)
		if err != nil {
			return tmux.Rows{}, nil, err
		}
		return q.Parse(out)
	}
	rows, joined, err := capture(start, guess)
	if err == nil && rows.First > start {
		// Output scrolled the grid between the reads: read from further back.
		rows, joined, err = capture(start-(rows.First-start)-cursor.Margin, rows.Position)
	}
	if err != nil {
		if res.Outcome == "completed" {
			res.Outcome = outcomePaneDied
		}
		res.Note = fmt.Sprintf("pane %s could not be read after the wait (%v); it is gone or the server stopped", pane, err)
		return
	}
	out, status, sawStart, sawEnd := f.parse(joined)
	if (!sawStart || !sawEnd) && (stored != nil || rows.HistorySize+rows.Height >= rows.HistoryLimit-rows.Trim()) {
		// tmux dropped old history during the command, moving every row up
		// by whole trims, or the screen was cleared (the command ended, so
		// its status line was printed): read the whole history once. What
		// it holds is all from after the begin marker, when that is gone.
		if r, j, err := capture(0, rows.Position); err == nil {
			rows, joined = r, j
			out, status, sawStart, sawEnd = f.parse(joined)
		}
	}
	switch {
	case res.Outcome == "completed" && stored != nil:
		status = *stored
	case res.Outcome == "completed" && !sawEnd:
		// The signal came but no status line: the server or pane ended.
		res.Outcome = outcomePaneDied
	}
	if res.Outcome == "completed" {
		res.ExitStatus = &status
	}
	t := s.budget.KeepNewest(out)
	res.Output, res.DroppedLines, res.DroppedChars = t.Lines, t.DroppedLines, t.DroppedChars
	if a, ok := cursor.AnchorAt(pane, rows); ok {
		res.Cursor = a.String()
	}
	var notes []string
	switch res.Outcome {
	case outcomeTimedOut:
		notes = append(notes, "the command may still be running: keep observing it with capture_since (cursor) or wait_for_text; do not run it again")
	case outcomePaneDied:
		notes = append(notes, fmt.Sprintf("pane %s died before the command finished; retrying there cannot produce more output", pane))
	case outcomeCancelled:
		notes = append(notes, "the wait was cancelled; the command may still be running")
	}
	if !sawStart {
		notes = append(notes, "the start of the output is no longer in the pane (the screen was cleared, or the output was longer than history-limit): older lines are lost")
	}
	if res.DroppedLines > 0 || res.DroppedChars > 0 {
		notes = append(notes, "older output was left out to stay within the read budget")
	}
	res.Note = strings.Join(notes, "; ")
}

// atPrompt reports whether the pane's own process (its shell) owns the
// terminal's foreground, so no job (not even a subshell, which tmux names
// like the shell) is running. Where that cannot be told it says no.
func atPrompt(pid int) bool {
	ok, err := fgproc.ShellAtPrompt(pid)
	return ok && err == nil
}

// paneGone reports whether pane no longer exists, is dead, or its server
// stopped.
func (s *server) paneGone(ctx context.Context, pane string) bool {
	pos, err := s.tmux.CapturePosition(ctx, pane)
	if err != nil {
		return errors.Is(err, tmux.ErrNotFound) || errors.Is(err, tmux.ErrNoServer)
	}
	return pos.Dead
}

// frame is one framed command: the line typed, its markers and its private
// completion channel.
type frame struct {
	line    string
	begin   string // the line printed before the command's output
	end     string // the status line's prefix; the status follows it
	channel string
	nonce   string
}

// statusOption is the pane option where a frame's exit trap stores
// "<nonce>:<status>" for the server to read (process path only).
const statusOption = "@libtmux_mcp_status"

// storedStatus reads the status the frame's exit trap stored (the waiter's
// output: the option's value); nil when the value is another run's or not
// a status.
func (f frame) storedStatus(value string) *int {
	rest, found := strings.CutPrefix(strings.TrimSpace(value), f.nonce+":")
	if !found {
		return nil
	}
	n, err := strconv.Atoi(rest)
	if err != nil {
		return nil
	}
	return &n
}

// newFrame frames command for a POSIX shell. The markers are printed from
// two pieces, so the typed line (and so its echo, however it wraps) never
// contains a marker: only the printed lines can equal one. The command runs
// in an inner subshell of an outer subshell whose exit trap prints the
// status and signals the channel; exit, cd and export stay inside.
func newFrame(exe, socket, pane, command, shell string) (frame, error) {
	for _, v := range []struct{ what, value string }{{"tmux program", exe}, {"socket path", socket}} {
		if strings.ContainsAny(v.value, "'\"\\$`!") {
			return frame{}, fmt.Errorf("the %s %q contains a quote, backslash, $, ` or !, which the command frame cannot carry; use a plainer path", v.what, v.value)
		}
		if err := tmux.CheckPrintable(v.what, v.value); err != nil {
			return frame{}, err
		}
	}
	nonce, quoted, printf, err := frameParts(command, shell)
	if err != nil {
		return frame{}, err
	}
	if !tmux.ValidPaneID(pane) {
		return frame{}, fmt.Errorf("pane id %q is not of the form %%N", pane)
	}
	f := frame{begin: nonce + "-s", end: nonce + "-e:", channel: "ltmcp-" + nonce, nonce: nonce}
	// A leading space keeps the line out of histories that ignore such
	// lines (HIST_IGNORE_SPACE, HISTCONTROL=ignorespace). The exit trap
	// stores the status in the pane's option and signals, in one tmux call.
	f.line = " ( \\trap 'st=$?; " + printf + " \"\\n%s%s\\n\" " + nonce + " \"-e:$st\"; \"" + exe + "\" -S \"" + socket + "\" set-option -p -t " + pane + " " + statusOption + " \"" + nonce + ":$st\" \\; wait-for -S " + f.channel + "; \\exit 0' 0; " +
		printf + " '%s%s\\n' " + nonce + " -s; ( " + subshellSetup(shell) + "\\eval " + quoted + " ) )"
	return f, nil
}

// quoteCommand quotes command as one shell word: single quotes for text
// without control characters, else $'…' with octal escapes (bash, zsh and
// ksh; a tab typed into an editor would trigger completion).
func quoteCommand(command, shell string) (string, error) {
	plain := true
	for i := 0; i < len(command); i++ {
		if c := command[i]; c < 0x20 || c == 0x7f {
			plain = false
		}
	}
	if plain {
		return "'" + strings.ReplaceAll(command, "'", `'\''`) + "'", nil
	}
	if shell == "sh" || shell == "dash" {
		return "", fmt.Errorf("command contains control characters (newline, tab…), which %s cannot take in one line; join the lines with ; or run a script file", shell)
	}
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(command); i++ {
		c := command[i]
		switch {
		case c == '\'' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c == 0x7f:
			b.WriteString("\\" + fmt.Sprintf("%03o", c))
		default:
			b.WriteByte(c)
		}
	}
	b.WriteString("'")
	return b.String(), nil
}

// parse finds the frame's lines in a joined capture: the first begin line,
// the last status line after it, and the lines strictly between. The status
// line is printed after a newline, so a final empty line before it is the
// frame's and is dropped.
func (f frame) parse(lines []string) (out []string, status int, sawBegin, sawEnd bool) {
	begin := -1
	for i, l := range lines {
		if l == f.begin {
			begin = i
			break
		}
	}
	sawBegin = begin >= 0
	endAt := -1
	for i := len(lines) - 1; i > begin; i-- {
		if rest, ok := strings.CutPrefix(lines[i], f.end); ok {
			if n, err := strconv.Atoi(rest); err == nil {
				endAt, status = i, n
				break
			}
		}
	}
	sawEnd = endAt >= 0
	if !sawEnd {
		// Still running (or gone): everything after the begin line, less
		// the blank rows below the cursor.
		out = splitCapture(strings.Join(lines[begin+1:], "\n"))
		if len(out) == 1 && out[0] == "" {
			out = nil
		}
		return out, 0, sawBegin, false
	}
	out = lines[begin+1 : endAt]
	if n := len(out); n > 0 && out[n-1] == "" {
		out = out[:n-1]
	}
	return append([]string{}, out...), status, sawBegin, true
}
