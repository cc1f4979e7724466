package shellrun

import (
	"context"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/fgproc"
	"github.com/libtmux/libtmux-mcp/tmux"
)

// startupGrace is how old a pane's shell may be and still be waited for
// when it is not at its prompt yet and its pane shows nothing: a shell
// reads its startup files first, and those often run programs without a
// word (pyenv, nvm or conda set-ups take up to a second or two), so a
// run_shell_command sent right after the pane was made would otherwise be
// refused. A pane that shows anything (a prompt, a typed command, a
// message of the startup files) is not waited for: nothing tells a
// startup file's program from a command typed into a young shell except
// that nothing has been drawn yet.
const startupGrace = 10 * time.Second

// awaitStartup waits, when pane p shows nothing yet (its cursor at the
// top left, no history) and its process (p.PID, its shell) started less
// than startupGrace ago, until the shell holds its terminal's foreground
// with no child there (fgproc: at its prompt, or about to draw it),
// looking every readingPoll, until the shell is startupGrace old or ctx
// ends. It reports whether the shell got there, so the caller checks the
// pane again; false for a pane that shows something, an older process, a
// shell started with a command string (-c), one whose facts cannot be
// read, or one that did not get there in time (the caller's refusal
// stands).
func (e *Engine) awaitStartup(ctx context.Context, p tmux.Pane) bool {
	if p.CursorX != 0 || p.CursorY != 0 || p.HistorySize != 0 {
		return false
	}
	age, err := fgproc.Age(p.PID)
	if err != nil || age >= startupGrace {
		return false
	}
	// A shell started with a command string (bash -c '…') reads no
	// startup files and never shows a prompt: its child is its work.
	if cs, err := fgproc.CommandString(p.PID); err != nil || cs {
		return false
	}
	start := time.Now()
	until := start.Add(startupGrace - age)
	timer := time.NewTimer(readingFirstPoll)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-timer.C:
		}
		st, err := fgproc.Look(p.PID)
		if err != nil {
			return false
		}
		if st == fgproc.AtPrompt {
			e.log.Debug("waited for a shell reading its startup files", "pane", p.ID, "for", time.Since(start))
			return true
		}
		left := time.Until(until)
		if left <= 0 {
			return false
		}
		timer.Reset(min(readingPoll, left))
	}
}
