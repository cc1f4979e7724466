package shellrun

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/fgproc"
	"github.com/libtmux/libtmux-mcp/live"
	"github.com/libtmux/libtmux-mcp/tmux"
)

// runOnView runs in.Command on the pane's view: the protection check and
// the typing go over the control connection, completion and status come
// from the pane's lines. ok is false when no view can be had (the caller
// takes the process path).
//
// A pane whose last check passed (see typingGuard) is not checked again:
// its command is typed under that check's guard, in the same control-mode
// line, and only when the guard missed is the pane checked in full.
func (e *Engine) runOnView(ctx context.Context, in Request, run *shellRun) (res Result, err error, ok bool) {
	v, hold, err := e.host.View(ctx, in.Pane)
	if err != nil {
		if errors.Is(err, tmux.ErrNotFound) || errors.Is(err, tmux.ErrNoServer) {
			e.runs.free(run, 0)
			return res, e.host.Explain(ctx, err, in.Pane), true
		}
		return res, nil, false
	}
	abandon := func() { hold(); e.runs.free(run, 0) }
	settle := time.Now().Add(readingSettles) // this call's looks at a shell reading input
	g, guarded := e.guards.get(in.Pane)
	guarded = guarded && in.Force == "" && g.session == v.Session() && e.guardUsable(ctx, in.Pane, g, settle)
	waited := false // for the shell's startup files, once
	for {
		at := g
		if !guarded {
			c, err := e.host.Check(ctx, func(ctx context.Context, args ...string) (string, error) {
				return v.CommandList(ctx, nil, tmux.SplitList(args)...)
			}, in.Pane, in.Force)
			if err != nil {
				abandon()
				return res, err, true
			}
			if c.Pane.SessionID != v.Session() {
				// The pane moved to another session since its view began: its
				// output goes to that session's clients. A new view.
				v.End()
				hold()
				if v, hold, err = e.host.View(ctx, in.Pane); err != nil {
					e.runs.free(run, 0)
					return res, e.host.Explain(ctx, err, in.Pane), true
				}
			}
			if err := e.promptCheck(ctx, v, in.Pane, c.Pane.CurrentCommand, c.Pane.PID, c.Pane.TTY, settle); err != nil {
				if !waited && e.awaitStartup(ctx, c.Pane) {
					// At its prompt now: the pane is checked again.
					waited, settle = true, time.Now().Add(readingSettles)
					continue
				}
				abandon()
				return res, err, true
			}
			at = typingGuard{shellPID: c.Pane.PID, command: c.Pane.CurrentCommand, session: c.Pane.SessionID, tty: c.Pane.TTY}
			if in.Force == "" {
				g, ok := typingGuardFrom(c, e.attended)
				e.guards.keep(in.Pane, g, ok)
			}
		}
		f, err := newStreamFrame(in.Command, strings.TrimPrefix(at.command, "-"))
		if err != nil {
			abandon()
			return res, err, true
		}
		run.f, run.headMax, run.view, run.shellPID = f, max(e.budget.Lines, 1), v, at.shellPID
		run.release = hold
		v.Read(func(l *live.Lines) { run.unhook = l.OnLine(run.onLine) })
		cond := ""
		if guarded {
			cond = at.condition()
		}
		missed, err := e.typeFrame(ctx, v, in.Pane, f, cond)
		if err != nil {
			e.endRun(v, run, "the command could not be typed")
			if ctx.Err() != nil || e.life.Err() != nil {
				// tmux may have typed the line before its answer came: not an
				// error, and not "nothing ran".
				return cancelledWhileTyping(in.Pane), nil, true
			}
			return res, e.host.Explain(ctx, err, in.Pane), true
		}
		if !missed {
			if guarded {
				e.log.Debug("command typed under the guard of the pane's last check", "pane", in.Pane)
			}
			break
		}
		// Nothing was typed: something the guard kept changed.
		e.log.Debug("the guard of the pane's last check missed; checking the pane in full", "pane", in.Pane)
		v.Read(func(*live.Lines) { run.unhook(); run.unhook = nil })
		e.guards.keep(in.Pane, typingGuard{}, false)
		guarded = false
	}
	e.typed.noteTyped(in.Pane, run.f.line)
	// The run is followed until it ends, whoever waits for it.
	go e.follow(v, run, v.Session())
	return e.awaitRun(ctx, in, v, run), nil, true
}

// guardUsable reports whether what g kept that is this process's own
// still allows a command on pane: not the caller's pane, no pending
// tmux_run invitation, and the shell at its prompt (a shell reading input
// is looked at again until settle, as promptCheck does: right after a
// command it is one about to show its prompt). A shell that is not gets
// the full check, whose refusal says why.
func (e *Engine) guardUsable(ctx context.Context, pane string, g typingGuard, settle time.Time) bool {
	name := strings.TrimPrefix(g.command, "-")
	if !e.host.Allowed(pane, g.serverPID, g.generation) || !shells[name] {
		return false
	}
	st, err := lookShell(name, g.shellPID, g.tty)
	if err == nil && st == fgproc.ReadingInput {
		st, err = e.settleReading(ctx, pane, name, g.shellPID, g.tty, settle)
	}
	return err == nil && st == fgproc.AtPrompt
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
func (e *Engine) typeFrame(ctx context.Context, v *live.View, pane string, f frame, cond string) (missed bool, err error) {
	defer e.host.InputTo(pane)()
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
			e.log.Debug("the command's buffer could not be deleted (it may never have been set)", "buffer", buf, "err", derr)
		}
		return false, err
	}
	return strings.Contains(out, guardMissed), nil
}

// follow ends the run's claim when its status line came, or when it can no
// longer be followed: the view ended, or the pane died.
func (e *Engine) follow(v *live.View, run *shellRun, session string) {
	w := e.host.Watch(e.life, session, run.pane)
	defer func() { w.Stop() }()
	// A command interrupted (C-c) ends its shell's line without the status
	// line: the shell is back at its prompt with no status. Seen twice,
	// interruptGrace apart (the shell prints the status just after it takes
	// the terminal back), with the view caught up, that ends the run. The
	// first look comes promptPoll after a change of the view, not at each
	// change: a look reads /proc, and a command that prints in many pieces
	// would pay it for each while it runs.
	var grace, poll *time.Timer
	var graceC, pollC <-chan time.Time
	looks := 0 // looks since the last change of the view
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
		return begun && ShellAtPrompt(run.shellPID)
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
			e.endRun(v, run, "")
			return
		case <-v.Ended():
			e.endRun(v, run, "the server's view of the pane ended (its session or server went away)")
			return
		case <-e.life.Done():
			e.endRun(v, run, "the server is shutting down")
			return
		case <-w.Ended:
			w.Stop()
			w = e.host.Watch(e.life, session, run.pane)
			if e.paneGoneOnView(v, run.pane) {
				e.endRun(v, run, "the pane died")
				return
			}
		case <-w.Wake:
			if e.paneGoneOnView(v, run.pane) {
				e.endRun(v, run, "the pane died")
				return
			}
		case <-changed:
			poll = time.NewTimer(promptPoll)
			pollC = poll.C
			looks = 0
		case <-pollC:
			pollC = nil
			switch {
			case graceC != nil:
			case backAtPrompt():
				grace = time.NewTimer(interruptGrace)
				graceC = grace.C
			case looks < promptLooks:
				// The prompt can be drawn before the shell takes its
				// terminal back (a loaded machine): look again, as no
				// change of the view may come to wake this loop.
				looks++
				poll = time.NewTimer(promptPoll)
				pollC = poll.C
			}
		case <-graceC:
			graceC = nil
			if backAtPrompt() {
				v.Position(e.life) // the view holds what tmux read so far
				select {
				case <-run.done:
				default:
					run.mu.Lock()
					run.interrupted = true
					run.mu.Unlock()
					e.endRun(v, run, "the shell came back to its prompt without the command's status line (interrupted, C-c?)")
					return
				}
			}
		}
	}
}

// endRun stops following run (why is "" when it ended with its status)
// and frees its pane.
func (e *Engine) endRun(v *live.View, run *shellRun, why string) {
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
		e.runs.free(run, e.viewKeep)
		run.release()
	})
}

// interruptGrace is how long a shell back at its prompt without the
// command's status line has to print it before the run counts as
// interrupted.
const interruptGrace = time.Second

// promptPoll is how long after a change of the view a run looks whether
// its shell is back at its prompt (see follow).
const promptPoll = 100 * time.Millisecond

// promptLooks is how many more looks follow a change of the view while the
// shell is not back at its prompt: 5 s of them.
const promptLooks = 50

// paneGoneOnView is paneGone asked over the view's control connection, so
// that an event during a run (a layout change, the dead-pane subscription's
// report) costs no tmux process; when the connection cannot answer, tmux
// is asked directly.
func (e *Engine) paneGoneOnView(v *live.View, pane string) bool {
	pos, err := v.Position(e.life)
	switch {
	case err == nil:
		return pos.Dead
	case errors.Is(err, tmux.ErrNotFound) || errors.Is(err, tmux.ErrNoServer):
		return true
	}
	return e.paneGone(e.life, pane)
}
