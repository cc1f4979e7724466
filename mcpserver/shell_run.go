package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/libtmux/libtmux-mcp/internal/cursor"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/libtmux/libtmux-mcp/enroll"
	"github.com/libtmux/libtmux-mcp/live"
	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// shellRun is one framed command typed into a pane: while it runs it holds
// the pane (one framed command per pane at a time), and, on a view, it
// follows the pane's lines for its markers, keeping the first lines of its
// output as they come (the rest is in the view's ring).
type shellRun struct {
	handle   string
	pane     string
	command  string
	started  time.Time
	f        frame
	headMax  int
	view     *live.View // the view that follows it; nil without one
	shellPID int        // the pane's shell

	release func() // the view's hold
	ended   sync.Once
	unhook  func() // stops following the view's lines; under the view's lock

	mu     sync.Mutex
	begin  uint64 // line number of the begin marker; 0 until seen
	end    uint64 // line number of the status line; 0 until seen
	status int
	count  uint64   // output lines between the markers so far
	head   []string // the first headMax of them
	last   string   // the newest of them
	done   chan struct{}
	lost   string // why the run can no longer be followed ("" while it can)
	// interrupted: the shell came back to its prompt without the status
	// line (C-c ends a shell's command line there).
	interrupted bool
}

// runs is the server's registry of framed commands: the one in flight per
// pane, and every run by handle until its answer was collected or it ended
// long ago.
type runs struct {
	mu      sync.Mutex
	byPane  map[string]*shellRun
	byID    map[string]*shellRun
	expires map[string]time.Time
}

// claim reserves pane for a new run, or says which run holds it.
func (r *runs) claim(pane, command string) (*shellRun, *shellRun) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byPane == nil {
		r.byPane, r.byID, r.expires = map[string]*shellRun{}, map[string]*shellRun{}, map[string]time.Time{}
	}
	if o := r.byPane[pane]; o != nil {
		return nil, o
	}
	b := make([]byte, 6)
	rand.Read(b)
	run := &shellRun{handle: "rsc-" + hex.EncodeToString(b), pane: pane, command: command, started: time.Now(), done: make(chan struct{})}
	r.byPane[pane] = run
	r.byID[run.handle] = run
	// Forget runs ended long ago.
	now := time.Now()
	for id, t := range r.expires {
		if now.After(t) {
			delete(r.byID, id)
			delete(r.expires, id)
		}
	}
	return run, nil
}

// free lets pane take another run, and keeps run's answer for keep.
func (r *runs) free(run *shellRun, keep time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byPane[run.pane] == run {
		delete(r.byPane, run.pane)
	}
	r.expires[run.handle] = time.Now().Add(keep)
}

// lookup finds a run by handle.
func (r *runs) lookup(handle string) *shellRun {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byID[handle]
}

// busyError is the refusal of a run on a pane that has one in flight.
// Without the pane's view (handles says so) a run cannot be waited for by
// its handle, so the refusal says how to watch it instead.
func busyError(o *shellRun, handles bool) error {
	cmd := o.command
	if utf8.RuneCountInString(cmd) > 80 {
		cmd = string([]rune(cmd)[:80]) + "…"
	}
	wait := fmt.Sprintf("wait for it with run_shell_command {\"paneId\":%q,\"handle\":%q}", o.pane, o.handle)
	if !handles {
		wait = "watch it with capture_pane"
	}
	return fmt.Errorf("run_in_progress: pane %s is still running %q (handle %s, started %s ago); one command runs per pane at a time: %s, or stop it with send_keys C-c, or use another pane",
		o.pane, cmd, o.handle, time.Since(o.started).Round(time.Second), wait)
}

// onLine follows the view's lines for the run's markers. It runs inside
// the view's lock, so it only records.
func (r *shellRun) onLine(n uint64, line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.end != 0:
	case r.begin == 0:
		if line == r.f.begin {
			r.begin = n
		}
	default:
		if rest, ok := strings.CutPrefix(line, r.f.end); ok {
			if st, err := strconv.Atoi(rest); err == nil {
				r.end, r.status = n, st
				close(r.done)
				return
			}
		}
		r.count++
		r.last = line
		if len(r.head) < r.headMax {
			r.head = append(r.head, line)
		}
	}
}

// stop marks the run as no longer followed, for why, unless it ended.
func (r *shellRun) stop(why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.end == 0 && r.lost == "" {
		r.lost = why
		close(r.done)
	}
}

// newStreamFrame frames command with one subshell: the shell prints the
// begin marker, runs the command in a subshell (exit, exec, cd, export and
// traps stay inside), and prints the subshell's status after it. The
// markers are printed from two pieces, so the typed line (and so its echo)
// never holds one.
//
// When the command cannot leave the subshell (staysInSubshell) and the
// shell reads $'…', eval is given the whole subshell instead: the shell
// then execs the command's last program in the subshell's own process,
// one fork where eval inside the subshell takes two.
//
// zsh and bash print the markers with their echo builtin, which needs
// fewer characters than printf: zsh reads a pasted line one byte at a time,
// a few microseconds a byte.
func newStreamFrame(command, shell string) (frame, error) {
	nonce, quoted, printf, err := frameParts(command, shell)
	if err != nil {
		return frame{}, err
	}
	setup := subshellSetup(shell)
	run := "( " + setup + "\\eval " + quoted + " )"
	if shell != "sh" && shell != "dash" && staysInSubshell(command) {
		sub, err := quoteCommand("( "+setup+command+"\n)", shell)
		if err != nil {
			return frame{}, err
		}
		run = "\\eval " + sub
	}
	f := frame{begin: nonce + "-s", end: nonce + "-e:"}
	// A leading space keeps the line out of histories that ignore such
	// lines (HIST_IGNORE_SPACE, HISTCONTROL=ignorespace).
	switch shell {
	case "zsh", "bash":
		f.line = " builtin echo " + nonce + "''-s;" + run + ";builtin echo $'\\n'" + nonce + "''-e:$?"
	default:
		f.line = " " + printf + " '%s%s\\n' " + nonce + " -s; " + run + "; " +
			printf + " '\\n%s%s%s\\n' " + nonce + " -e: $?"
	}
	return f, nil
}

// subshellSetup is what a frame's subshell runs before the command. zsh
// looks a command up in the process that runs it and, with HASH_DIRS (on by
// default), first reads every PATH directory before the command's into its
// command table; the subshell's table ends with it, so every call paid
// that again (about 1 ms with a /usr/bin of a thousand entries). The
// subshell turns HASH_DIRS off for itself only: the command is still found
// on PATH, and the shell's own options stay as they are.
func subshellSetup(shell string) string {
	if shell == "zsh" {
		return "builtin setopt nohashdirs;"
	}
	return ""
}

// runOnView runs in.Command on the pane's view: the protection check and
// the typing go over the control connection, completion and status come
// from the pane's lines. ok is false when no view can be had (the caller
// takes the process path).
//
// A pane whose last check passed (see commandGuard) is not checked again:
// its command is typed under that check's guard, in the same control-mode
// line, and only when the guard missed is the pane checked in full.
func (s *server) runOnView(ctx context.Context, req *mcp.CallToolRequest, in runShellCommandParams, run *shellRun) (res runShellCommandResult, err error, ok bool) {
	v, hold, err := s.paneView(ctx, in.PaneID, s.viewKeep(), nil)
	if err != nil {
		if errors.Is(err, tmux.ErrNotFound) || errors.Is(err, tmux.ErrNoServer) {
			s.runs.free(run, 0)
			return res, s.explain(ctx, err, "pane", in.PaneID), true
		}
		return res, nil, false
	}
	abandon := func() { hold(); s.runs.free(run, 0) }
	g, guarded := s.guards.get(in.PaneID)
	guarded = guarded && in.Force == "" && g.session == v.Session() && s.guardUsable(in.PaneID, g)
	for {
		at := g
		if !guarded {
			c, err := s.protectVia(ctx, func(ctx context.Context, args ...string) (string, error) {
				return v.CommandList(ctx, nil, tmux.SplitList(args)...)
			}, "pane", in.PaneID, in.Force, forCommand)
			if err != nil {
				abandon()
				return res, err, true
			}
			if c.pane.SessionID != v.Session() {
				// The pane moved to another session since its view began: its
				// output goes to that session's clients. A new view.
				v.End()
				hold()
				if v, hold, err = s.paneView(ctx, in.PaneID, s.viewKeep(), nil); err != nil {
					s.runs.free(run, 0)
					return res, s.explain(ctx, err, "pane", in.PaneID), true
				}
			}
			if err := promptCheck(in.PaneID, c.pane.CurrentCommand, c.pane.PID); err != nil {
				abandon()
				return res, err, true
			}
			at = commandGuard{shellPID: c.pane.PID, command: c.pane.CurrentCommand, session: c.pane.SessionID}
			if in.Force == "" {
				g, ok := guardFrom(c, s.deps.Limits.Attended)
				s.guards.keep(in.PaneID, g, ok)
			}
		}
		f, err := newStreamFrame(in.Command, strings.TrimPrefix(at.command, "-"))
		if err != nil {
			abandon()
			return res, err, true
		}
		run.f, run.headMax, run.view, run.shellPID = f, max(s.budget.Lines, 1), v, at.shellPID
		run.release = hold
		v.Read(func(l *live.Lines) { run.unhook = l.OnLine(run.onLine) })
		cond := ""
		if guarded {
			cond = at.guardCondition()
		}
		missed, err := s.typeFrame(ctx, v, in.PaneID, f, cond)
		if err != nil {
			s.endRun(v, run, "the command could not be typed")
			return res, s.explain(ctx, err, "pane", in.PaneID), true
		}
		if !missed {
			if guarded {
				s.log.Debug("command typed under the guard of the pane's last check", "pane", in.PaneID)
			}
			break
		}
		// Nothing was typed: something the guard kept changed.
		s.log.Debug("the guard of the pane's last check missed; checking the pane in full", "pane", in.PaneID)
		v.Read(func(*live.Lines) { run.unhook(); run.unhook = nil })
		s.guards.keep(in.PaneID, commandGuard{}, false)
		guarded = false
	}
	s.noteTyped(in.PaneID, run.f.line)
	// The run is followed until it ends, whoever waits for it.
	go s.follow(v, run, v.Session())
	return s.awaitRun(ctx, req, in.TimeoutMs, v, run), nil, true
}

// guardUsable reports whether what g kept that is this process's own
// still allows a command on pane: not the caller's pane, no pending
// tmux_run invitation, and the shell at its prompt.
func (s *server) guardUsable(pane string, g commandGuard) bool {
	return !s.caller.is(pane, g.serverPID) &&
		s.enrollmentState(pane, g.generation) != enroll.StateInvited &&
		promptCheck(pane, g.command, g.shellPID) == nil
}

// guardMissed is what typeFrame's guarded line prints when its guard
// did not hold.
const guardMissed = "ltmcp-guard-missed"

// typeFrame pastes f's line into pane and presses Enter, in one
// control-mode line. The paste is bracketed, where the shell asked for
// it, so a line editor takes the line in one piece instead of a key at a
// time, from a private buffer that the paste deletes. With cond (a
// guardCondition), tmux types only when cond holds; missed reports that it
// did not, and that nothing was typed.
func (s *server) typeFrame(ctx context.Context, v *live.View, pane string, f frame, cond string) (missed bool, err error) {
	defer s.inputTo(pane)()
	buf := "ltmcp-" + f.begin
	set := []string{"set-buffer", "-b", buf, "--", f.line}
	paste := []string{"paste-buffer", "-p", "-d", "-b", buf, "-t", pane}
	enter := []string{"send-keys", "-t", pane, "Enter"}
	var out string
	if cond == "" {
		out, err = v.CommandList(ctx, nil, set, paste, enter)
	} else {
		var typeIt, skip string
		if typeIt, err = tmux.CommandListText(paste, enter); err != nil {
			return false, err
		}
		if skip, err = tmux.CommandListText([]string{"delete-buffer", "-b", buf}, []string{"display-message", "-p", guardMissed}); err != nil {
			return false, err
		}
		out, err = v.CommandList(ctx, nil, set, []string{"if-shell", "-F", "-t", pane, cond, typeIt, skip})
	}
	if err != nil {
		// tmux skipped the rest of the line at the failure: the buffer may
		// be left.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		if _, derr := v.CommandList(dctx, nil, []string{"delete-buffer", "-b", buf}); derr != nil {
			s.log.Debug("the command's buffer could not be deleted (it may never have been set)", "buffer", buf, "err", derr)
		}
		return false, err
	}
	return strings.Contains(out, guardMissed), nil
}

// follow ends the run's claim when its status line came, or when it can no
// longer be followed: the view ended, or the pane died.
func (s *server) follow(v *live.View, run *shellRun, session string) {
	w := s.watchPane(s.life, session, run.pane, false)
	defer func() { w.stop() }()
	// A command interrupted (C-c) ends its shell's line without the status
	// line: the shell is back at its prompt with no status. Seen twice,
	// interruptGrace apart (the shell prints the status just after it takes
	// the terminal back), with the view caught up, that ends the run. The
	// first look comes promptPoll after a change of the view, not at each
	// change: a look reads /proc, and a command that prints in many pieces
	// would pay it for each while it runs.
	var grace, poll *time.Timer
	var graceC, pollC <-chan time.Time
	defer func() {
		for _, t := range []*time.Timer{grace, poll} {
			if t != nil {
				t.Stop()
			}
		}
	}()
	backAtPrompt := func() bool {
		run.mu.Lock()
		begun := run.begin != 0
		run.mu.Unlock()
		return begun && atPrompt(run.shellPID)
	}
	for {
		// Changes matter only while no look is due: a command that prints
		// in many pieces then wakes this loop once per promptPoll, not
		// once per piece.
		var changed <-chan struct{}
		if pollC == nil && graceC == nil {
			changed = v.Changed()
		}
		select {
		case <-run.done:
			s.endRun(v, run, "")
			return
		case <-v.Ended():
			s.endRun(v, run, "the server's view of the pane ended (its session or server went away)")
			return
		case <-s.life.Done():
			s.endRun(v, run, "the server is shutting down")
			return
		case <-w.ended:
			w.stop()
			w = s.watchPane(s.life, session, run.pane, false)
			if s.paneGone(s.life, run.pane) {
				s.endRun(v, run, "the pane died")
				return
			}
		case <-w.wake:
			if s.paneGone(s.life, run.pane) {
				s.endRun(v, run, "the pane died")
				return
			}
		case <-changed:
			poll = time.NewTimer(promptPoll)
			pollC = poll.C
		case <-pollC:
			pollC = nil
			if graceC == nil && backAtPrompt() {
				grace = time.NewTimer(interruptGrace)
				graceC = grace.C
			}
		case <-graceC:
			graceC = nil
			if backAtPrompt() {
				s.viewPosition(s.life, v) // the view holds what tmux read so far
				select {
				case <-run.done:
				default:
					run.mu.Lock()
					run.interrupted = true
					run.mu.Unlock()
					s.endRun(v, run, "the shell came back to its prompt without the command's status line (interrupted, C-c?)")
					return
				}
			}
		}
	}
}

// endRun stops following run (why is "" when it ended with its status)
// and frees its pane.
func (s *server) endRun(v *live.View, run *shellRun, why string) {
	if why != "" {
		run.stop(why)
	}
	run.ended.Do(func() {
		v.Read(func(*live.Lines) {
			if run.unhook != nil {
				run.unhook()
				run.unhook = nil
			}
		})
		s.runs.free(run, s.viewKeep())
		run.release()
	})
}

// outcomeInterrupted is run_shell_command's answer for a command whose
// shell came back to its prompt without its status line.
const outcomeInterrupted = "interrupted"

// interruptGrace is how long a shell back at its prompt without the
// command's status line has to print it before the run counts as
// interrupted.
const interruptGrace = time.Second

// promptPoll is how long after a change of the view a run looks whether
// its shell is back at its prompt (see follow).
const promptPoll = 100 * time.Millisecond

// awaitRun waits for run within timeoutMs and answers what is known.
func (s *server) awaitRun(ctx context.Context, req *mcp.CallToolRequest, timeoutMs *int64, v *live.View, run *shellRun) runShellCommandResult {
	wctx, w := s.startWait(ctx, req, timeoutMs, "run_shell_command")
	defer w.end()
	outcome := ""
	select {
	case <-run.done:
	case <-wctx.Done():
		select { // an end already here wins over a deadline just passed
		case <-run.done:
		default:
			outcome = s.ended(wctx, ctx)
		}
	}
	if ctx.Err() != nil || s.life.Err() != nil {
		outcome = outcomeCancelled // shutdown, or the client gave up
	}
	res := runShellCommandResult{EffectiveTimeoutMs: w.ms(), Output: []string{}}
	var notes []string
	if timeoutMs != nil && *timeoutMs > w.ms() {
		notes = append(notes, fmt.Sprintf("timeoutMs %d was clamped to %d, the wait ceiling (LIBTMUX_MCP_WAIT_MAX_MS)", *timeoutMs, w.ms()))
	}
	if outcome == outcomeCancelled && ctx.Err() != nil {
		res.Outcome = outcome
		res.Handle = run.handle
		res.Note = "the wait was cancelled; the command may still be running in " + run.pane
		return res
	}
	run.mu.Lock()
	lost, end, interrupted := run.lost, run.end, run.interrupted
	run.mu.Unlock()
	if end != 0 {
		s.endRun(v, run, "") // free the pane before answering
	}
	switch {
	case outcome != "":
		res.Outcome = outcome
	case interrupted:
		res.Outcome = outcomeInterrupted
	case lost != "":
		res.Outcome = outcomePaneDied
	default:
		res.Outcome = "completed"
	}
	s.runOutput(v, run, &res, &notes)
	switch res.Outcome {
	case "completed":
		st := run.status
		res.ExitStatus = &st
		res.Cursor = cursor.Stream{Pane: run.pane, Epoch: v.Epoch(), Line: end}.String()
	case outcomeTimedOut:
		res.Handle = run.handle
		notes = append([]string{fmt.Sprintf("the command is still running (handle %s): call run_shell_command with {\"paneId\":%q,\"handle\":%q} to wait for it and get its exit status and output; do not run it again", run.handle, run.pane, run.handle)}, notes...)
	case outcomeCancelled:
		res.Handle = run.handle
		notes = append([]string{"the wait was cancelled; the command may still be running (handle " + run.handle + ")"}, notes...)
	case outcomePaneDied, outcomeInterrupted:
		notes = append([]string{fmt.Sprintf("no exit status: %s", lost)}, notes...)
	}
	res.Note = strings.Join(notes, "; ")
	return res
}

// runOutput fills res's output: all of it when it fits the read budget,
// else its head and its tail, with the exact count of lines left between
// (those still kept, readable with a capture_since cursor, and those lost).
func (s *server) runOutput(v *live.View, run *shellRun, res *runShellCommandResult, notes *[]string) {
	run.mu.Lock()
	begin, end, count, last := run.begin, run.end, run.count, run.last
	head := append([]string{}, run.head...)
	run.mu.Unlock()
	if begin == 0 {
		if res.Outcome != outcomeTimedOut {
			*notes = append(*notes, "the command's output never started (its begin line was not seen)")
		}
		return
	}
	// The status line follows a line feed of its own: an empty last line
	// is the frame's.
	if end != 0 && count > 0 && last == "" {
		count--
	}
	lastLine := begin + count // line number of the last output line
	total := int(count)
	if total <= len(head) {
		t := s.budget.KeepOldest(head[:total])
		if t.DroppedLines == 0 && t.DroppedChars == 0 {
			res.Output = t.Lines
			return
		}
	}
	// Over the budget: the head and the tail, half the budget each.
	hl := min(s.budget.Lines/2, len(head), total)
	tl := min(s.budget.Lines-hl, total-hl)
	var tail []string
	var oldest uint64
	v.Read(func(l *live.Lines) {
		tail = l.Get(lastLine-uint64(tl)+1, lastLine)
		oldest = l.Oldest()
	})
	hb := budget{Lines: hl, Chars: s.budget.Chars / 2}.KeepOldest(head[:hl])
	tb := budget{Lines: len(tail), Chars: s.budget.Chars - s.budget.Chars/2}.KeepNewest(tail)
	res.Output = append(hb.Lines, tb.Lines...)
	kept := len(hb.Lines)
	gapFrom := begin + uint64(kept) + 1       // first line left out
	gapTo := lastLine - uint64(len(tb.Lines)) // last line left out
	res.DroppedLines = total - len(res.Output)
	res.DroppedChars = hb.DroppedChars + tb.DroppedChars // tail lines dropped whole are counted below
	if gapFrom > gapTo {
		return
	}
	readable := uint64(0)
	if gapTo >= oldest {
		readable = gapTo - max(gapFrom, oldest) + 1
	}
	lostN := (gapTo - gapFrom + 1) - readable
	v.Read(func(l *live.Lines) { res.DroppedChars += l.RuneCount(max(gapFrom, oldest), gapTo) })
	msg := fmt.Sprintf("the output has %d lines; the first %d and the last %d are returned, the %d between (lines %d-%d of the pane's output) were left out to stay within the read budget", total, kept, len(tb.Lines), gapTo-gapFrom+1, gapFrom, gapTo)
	if readable > 0 {
		c := cursor.Stream{Pane: run.pane, Epoch: v.Epoch(), Line: max(gapFrom, oldest) - 1}
		msg += fmt.Sprintf("; %d of them are still kept: call capture_since with {\"paneId\":%q,\"cursor\":%q} (oldest first, repeat with each new cursor) to read them", readable, run.pane, c.String())
	}
	if lostN > 0 {
		msg += fmt.Sprintf("; %d of them are lost: they left the lines kept for the pane (as many as its history-limit), and droppedChars does not count their characters", lostN)
	}
	*notes = append(*notes, msg)
}

// collectRun answers a run by its handle: it waits for it (within
// timeoutMs) and answers its status and the output still kept.
func (s *server) collectRun(ctx context.Context, req *mcp.CallToolRequest, in runShellCommandParams) (runShellCommandResult, error) {
	run := s.runs.lookup(in.Handle)
	if run == nil || run.pane != in.PaneID {
		return runShellCommandResult{}, fmt.Errorf("no command with handle %q in pane %s: handles come from run_shell_command answers and are kept %s after their command ended; read the pane with capture_since or capture_pane", in.Handle, in.PaneID, s.viewKeep())
	}
	if run.view == nil {
		return runShellCommandResult{}, fmt.Errorf("handle %q is of a command run without a control connection, which cannot be waited for again; read the pane with capture_since or capture_pane", in.Handle)
	}
	return s.awaitRun(ctx, req, in.TimeoutMs, run.view, run), nil
}

// notAtPrompt is the refusal of a pane whose shell is not waiting for a
// command line.
func notAtPrompt(pane, current string) error {
	return fmt.Errorf("pane %s runs %q, not a shell at its prompt; wait for it to finish (wait_for_text), or use send_keys to drive it", pane, current)
}

// frameParts are what every frame is made of: a fresh nonce for its
// markers, the command quoted for eval, and the shell's own printf (zsh's
// `command` would run the external one: a process more per marker).
func frameParts(command, shell string) (nonce, quoted, printf string, err error) {
	b := make([]byte, 6)
	rand.Read(b)
	nonce = "lt" + hex.EncodeToString(b)
	quoted, err = quoteCommand(command, shell)
	printf = "\\command printf"
	if shell == "zsh" {
		printf = "builtin printf"
	}
	return nonce, quoted, printf, err
}
