package shellrun

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/cursor"
	"github.com/libtmux/libtmux-mcp/tmux"
)

// runByProcess runs in.Command without a view: the protection check and
// the typing are tmux processes (or lines of a watch's connection),
// completion comes from a wait-for process signalled by the frame's exit
// trap, and the output is read from the pane's grid afterwards.
func (e *Engine) runByProcess(ctx context.Context, in Request, run *shellRun) (Result, error) {
	defer e.runs.free(run, 0)
	c, err := e.host.Check(ctx, nil, in.Pane, in.Force)
	if err != nil {
		return Result{}, err
	}
	defer e.host.InputTo(in.Pane)()
	if err := e.promptCheck(ctx, nil, in.Pane, c.Pane.CurrentCommand, c.Pane.PID, c.Pane.TTY, time.Now().Add(readingSettles)); err != nil {
		// A shell still reading its startup files: once at its prompt,
		// the pane is checked again from the start.
		if !e.awaitStartup(ctx, c.Pane) {
			return Result{}, err
		}
		if c, err = e.host.Check(ctx, nil, in.Pane, in.Force); err != nil {
			return Result{}, err
		}
		if err := e.promptCheck(ctx, nil, in.Pane, c.Pane.CurrentCommand, c.Pane.PID, c.Pane.TTY, time.Now().Add(readingSettles)); err != nil {
			return Result{}, err
		}
	}
	shell := strings.TrimPrefix(c.Pane.CurrentCommand, "-")
	exe, err := e.tmux.Executable()
	if err != nil {
		return Result{}, fmt.Errorf("find the tmux program for the completion signal: %w", err)
	}
	f, err := newFrame(exe, c.Snapshot.Server.SocketPath, in.Pane, in.Command, shell)
	if err != nil {
		return Result{}, err
	}
	start := c.Pane.HistorySize + c.Pane.CursorY
	guess := tmux.Position{HistorySize: c.Pane.HistorySize, CursorY: c.Pane.CursorY, Height: c.Pane.Height}

	wctx, length, stopWait := in.Wait(ctx)
	defer stopWait()
	watch := e.host.Watch(wctx, c.Pane.SessionID, in.Pane)
	defer func() { watch.Stop() }()

	// The completion signal is remembered by tmux when it comes before
	// the waiter, so the waiter can start after the command is typed.
	// Over a control connection each command is its own line (commands on
	// it run in order); without one, one tmux process sends both.
	if watch.Command != nil {
		if _, err = watch.Command(ctx, "send-keys", "-t", in.Pane, "-l", f.line); err == nil {
			_, err = watch.Command(ctx, "send-keys", "-t", in.Pane, "Enter")
		}
	} else {
		_, err = e.tmux.Run(ctx, "send-keys", "-t", in.Pane, "-l", f.line, ";", "send-keys", "-t", in.Pane, "Enter")
	}
	if err != nil {
		if ctx.Err() != nil || e.life.Err() != nil {
			return cancelledWhileTyping(in.Pane), nil
		}
		return Result{}, e.host.Explain(ctx, err, in.Pane)
	}
	e.typed.noteTyped(in.Pane, f.line)
	// The waiter reads the status the frame's exit trap stored in a pane
	// option before it signalled, so the status never depends on the screen.
	signalled := make(chan error, 1)
	var option string // the waiter's output: the option's value
	go func() {
		out, err := e.tmux.RunFor(wctx, length+time.Second, "wait-for", f.channel, ";", "show-options", "-p", "-t", in.Pane, "-v", StatusOption)
		option = out
		signalled <- err
	}()

	outcome := Outcome("")
	var stored *int // the status the exit trap stored
	for outcome == "" {
		select {
		case err := <-signalled:
			if err != nil {
				outcome = ended(wctx, ctx)
				if outcome == "" { // wait-for failed on its own: the server went away
					outcome = PaneDied
				}
				break
			}
			stored = f.storedStatus(option)
			outcome = Completed
		case <-watch.Wake:
			if e.paneGone(ctx, in.Pane) {
				outcome = PaneDied
			}
		case <-watch.Ended:
			// The connection ended (its session may be gone): check, and
			// watch anew.
			watch.Stop()
			watch = e.host.Watch(wctx, c.Pane.SessionID, in.Pane)
			if e.paneGone(ctx, in.Pane) {
				outcome = PaneDied
			}
		case <-wctx.Done():
			outcome = ended(wctx, ctx)
		}
	}
	res := Result{Outcome: outcome, Output: []string{}}
	if outcome == Cancelled && ctx.Err() != nil {
		// The server is shutting down (or the client gave up, and gets no
		// answer): read nothing more from tmux.
		res.Note = "the wait was cancelled; the command may still be running in " + in.Pane
		return res, nil
	}
	if outcome == Completed {
		settle(ctx, c.Pane.PID)
	}
	e.frameResult(ctx, in.Pane, f, start, guess, stored, &res)
	if in.Clamped != "" {
		res.Note = strings.TrimPrefix(res.Note+"; "+in.Clamped, "; ")
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
	for !ShellAtPrompt(pid) && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(2 * time.Millisecond) // the subshell is exiting; no event tells
	}
}

// frameResult fills res from the pane: the lines strictly between the
// frame's markers, the exit status and a cursor. stored, when not nil, is
// the status the frame's exit trap stored: it stands whatever the screen
// kept of the run.
func (e *Engine) frameResult(ctx context.Context, pane string, f frame, start int, guess tmux.Position, stored *int, res *Result) {
	capture := func(from int, guess tmux.Position) (tmux.Rows, []string, error) {
		q, err := tmux.NewRowsQuery(pane, from, guess, true)
		if err != nil {
			return tmux.Rows{}, nil, err
		}
		// One tmux process: its commands run in one queue step, so the
		// position and the rows describe one moment.
		out, err := e.tmux.Run(ctx, q.Args...)
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
		if res.Outcome == Completed {
			res.Outcome = PaneDied
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
	case res.Outcome == Completed && stored != nil:
		status = *stored
	case res.Outcome == Completed && !sawEnd:
		// The signal came but no status line: the server or pane ended.
		res.Outcome = PaneDied
	}
	if res.Outcome == Completed {
		res.ExitStatus = &status
	}
	t := e.budget.KeepNewest(out)
	res.Output, res.DroppedLines, res.DroppedChars = t.Lines, t.DroppedLines, t.DroppedChars
	if a, ok := cursor.AnchorAt(pane, rows); ok {
		res.Cursor = a.String()
	}
	var notes []string
	switch res.Outcome {
	case TimedOut:
		notes = append(notes, "the command may still be running: keep observing it with capture_since (cursor) or wait_for_text; do not run it again")
	case PaneDied:
		notes = append(notes, fmt.Sprintf("pane %s died before the command finished; retrying there cannot produce more output", pane))
	case Cancelled:
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

// paneGone reports whether pane no longer exists, is dead, or its server
// stopped.
func (e *Engine) paneGone(ctx context.Context, pane string) bool {
	pos, err := e.tmux.CapturePosition(ctx, pane)
	if err != nil {
		return errors.Is(err, tmux.ErrNotFound) || errors.Is(err, tmux.ErrNoServer)
	}
	return pos.Dead
}
