package shellrun

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/fgproc"
	"github.com/libtmux/libtmux-mcp/live"
)

// promptCheck refuses a pane whose foreground program is not a shell, or
// whose shell is not at its prompt (fgproc: it does not own the terminal's
// foreground, or waits for a child there, or, for zsh and bash, reads its
// terminal without its line editor: the read builtin). Where the facts
// cannot be read it refuses too, and says that it could not tell: typing a
// command into what may be another program is worse than not typing it.
// Each refusal names the foreground program and what would help.
//
// A shell that has just taken its terminal back from a command sets its
// line editor's modes a moment later, so a shell reading input is looked
// at again until settle (settleReading) before it is refused; a shell in
// any other state is refused at once.
func (e *Engine) promptCheck(ctx context.Context, v *live.View, pane, current string, pid int, tty string, settle time.Time) error {
	name := strings.TrimPrefix(current, "-")
	if !shells[name] {
		return e.notAtPrompt(pane, current, pid, fgproc.ChildInForeground)
	}
	st, err := lookShell(name, pid, tty)
	if st == fgproc.ReadingInput && err == nil {
		st, err = e.settleReading(ctx, pane, name, pid, tty, settle)
	}
	switch {
	case err != nil:
		fix := "check that ps works for this user"
		if errors.Is(err, fgproc.ErrModes) {
			fix = "check that this user can open the pane's terminal " + tty
		}
		return fmt.Errorf("pane %s runs %q, but whether it is at its prompt cannot be told (%w), so nothing was typed; "+
			"%s, or type on purpose with send_keys", pane, current, err, fix)
	case st == fgproc.ReadingInput:
		return readingInput(pane, name, v)
	case st != fgproc.AtPrompt:
		return e.notAtPrompt(pane, current, pid, st)
	}
	return nil
}

// lookShell is fgproc's look at shell name (process pid, on terminal
// tty): with its terminal's modes for the shells that edit their command
// line (zle, readline), from process facts alone for the others, whose
// prompt reads a line as the read builtin does.
func lookShell(name string, pid int, tty string) (fgproc.State, error) {
	if lineEditors[name] {
		return fgproc.LookAt(pid, tty)
	}
	return fgproc.Look(pid)
}

// lineEditors are the shells whose prompt is a line editor by default,
// which keeps the terminal raw (zsh's zle, bash's readline).
var lineEditors = map[string]bool{"zsh": true, "bash": true}

// settleReading looks at a shell reading input again, sooner at first
// (the moment between a command's end and the editor's modes is a
// millisecond or two) and every readingPoll after, until it is in another
// state, until passed or ctx ended; it answers the last look. One call's
// looks share one until (readingSettles after it began), so that a
// refusal comes within a second whichever checks looked.
func (e *Engine) settleReading(ctx context.Context, pane, name string, pid int, tty string, until time.Time) (fgproc.State, error) {
	start := time.Now()
	wait := min(readingFirstPoll, max(time.Until(until), 0))
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return fgproc.ReadingInput, nil
		case <-timer.C:
		}
		st, err := lookShell(name, pid, tty)
		if err != nil || st != fgproc.ReadingInput {
			e.log.Debug("the shell's terminal was not its line editor's for a moment", "pane", pane, "for", time.Since(start), "then", st, "err", err)
			return st, err
		}
		left := time.Until(until)
		if left <= 0 {
			return fgproc.ReadingInput, nil
		}
		wait = min(2*wait, readingPoll, left)
		timer.Reset(wait)
	}
}

// readingSettles bounds how long a call gives a shell that reads input to
// show its prompt (a refusal comes within a second); it is looked at
// after readingFirstPoll, then at doubling intervals up to readingPoll.
const (
	readingSettles   = 750 * time.Millisecond
	readingFirstPoll = 2 * time.Millisecond
	readingPoll      = 50 * time.Millisecond
)

// readingInput is the refusal of a pane whose shell reads its terminal
// itself: what the pane shows last (from its view, when there is one) and
// how to answer it.
func readingInput(pane, shell string, v *live.View) error {
	shows := ""
	if last := lastShown(v); last != "" {
		shows = fmt.Sprintf("; the pane's last line is %q", last)
	}
	return fmt.Errorf("pane %s: its shell (%s) is reading input itself (the read builtin, or a script's prompt), not waiting at its prompt, so nothing was typed%s. "+
		"Answer it with send_keys (the text, then Enter), or stop it with send_keys C-c; run_shell_command works again once the shell is back at its prompt. "+
		"(A shell without a line editor, such as bash --noediting, reads its command lines this way too: type into it with send_keys.)", pane, shell, shows)
}

// lastShown is the last line with text that the view holds (the line
// being written first, a prompt such as "Name? "), cut to
// lastShownRunes; "" without a view, or when it holds none.
func lastShown(v *live.View) string {
	if v == nil {
		return ""
	}
	var last string
	v.Read(func(l *live.Lines) {
		if last = strings.TrimSpace(l.Unfinished()); last != "" {
			return
		}
		for n := l.Newest(); n >= l.Oldest() && n > 0 && l.Newest()-n < lastShownLook; n-- {
			if got := l.Get(n, n); len(got) == 1 && strings.TrimSpace(got[0]) != "" {
				last = strings.TrimSpace(got[0])
				return
			}
		}
	})
	if r := []rune(last); len(r) > lastShownRunes {
		last = string(r[:lastShownRunes]) + "…"
	}
	return last
}

// lastShownRunes bounds the line a refusal quotes; lastShownLook is how
// many lines back it is looked for.
const (
	lastShownRunes = 200
	lastShownLook  = 50
)

// ShellAtPrompt reports whether the pane's own process (its shell) owns the
// terminal's foreground, so no job (not even a subshell, which tmux names
// like the shell) is running. Where that cannot be told it says no.
func ShellAtPrompt(pid int) bool {
	ok, err := fgproc.ShellAtPrompt(pid)
	return ok && err == nil
}

// notAtPrompt is the refusal of a pane whose shell (process pid) is not
// waiting for a command line: what runs there, and the advice that fits
// it.
func (e *Engine) notAtPrompt(pane, current string, pid int, st fgproc.State) error {
	what := fmt.Sprintf("pane %s runs %q, not a shell at its prompt", pane, current)
	if since, ok := e.interrupts.since(pane); ok && since < interruptSettles {
		return fmt.Errorf("%s: an interrupt (C-c) was sent to it %s ago and it has not ended yet; retry in about a second", what, since.Round(time.Millisecond))
	}
	name := strings.TrimPrefix(current, "-")
	if st == fgproc.NotForeground && shells[name] {
		return fmt.Errorf("%s: the shell does not hold its terminal yet (it may still be reading its startup files); retry in a moment, or look at the pane with capture_pane", what)
	}
	names := foregroundNames(name, pid)
	if advice := foregroundAdvice(pane, names); advice != "" {
		return fmt.Errorf("%s: %s", what, advice)
	}
	if young := startupAdvice(name, pid, st, names[1:]); young != "" {
		return fmt.Errorf("%s: %s", what, young)
	}
	if shells[name] {
		return fmt.Errorf("%s: the shell runs a command in the foreground (a subshell or a program it started); wait for it to finish (wait_for_text with a cursor from capture_since), or stop it with send_keys C-c", what)
	}
	return fmt.Errorf("%s; wait for it to finish (wait_for_text with a cursor from capture_since), or stop it with send_keys C-c", what)
}

// youngShell is how young a shell must be for a refusal to say it may still be running its
// startup files.
const youngShell = 30 * time.Second

// foregroundNames is current (the pane's program, as tmux names it) and the programs of the
// foreground group of the terminal the shell pid controls, as far as they can be read (advice
// only: without them, tmux's name alone).
func foregroundNames(current string, pid int) []string {
	names := []string{current}
	if more, err := fgproc.ForegroundNames(pid); err == nil {
		names = append(names, more...)
	}
	return names
}

// startupAdvice says, for a pane whose own process (pid) started less than youngShell ago and
// has a program of its own in the terminal's foreground (current is what tmux names; group, the
// foreground group's programs), that a shell there may still be running its startup files: a
// run sent right after the pane was made meets them when they print something first (so
// awaitStartup does not wait) or take longer than startupGrace. "" otherwise.
func startupAdvice(current string, pid int, st fgproc.State, group []string) string {
	if !shells[current] && st != fgproc.ChildInForeground {
		return ""
	}
	age, err := fgproc.Age(pid)
	if err != nil || age >= youngShell {
		return ""
	}
	if len(group) == 0 && !shells[current] {
		group = []string{current}
	}
	who := "the pane's shell"
	if !shells[current] {
		who = "the pane's process"
	}
	progs, holds := programs(group)
	return fmt.Sprintf("%s started %s ago and %s %s its terminal: a shell may still be running its startup files (.bashrc, .zshrc and the like); wait for its prompt (wait_for_text with a cursor from capture_since, or look with capture_pane), then call again",
		who, age.Round(time.Second), progs, holds)
}

// programs names the programs of a foreground group for a message, with the verb that fits:
// the shells among them (a subshell leading the group) left out when other programs are there,
// "a program" when none is known.
func programs(names []string) (who, holds string) {
	var quoted []string
	for _, n := range names {
		if !shells[strings.TrimPrefix(n, "-")] {
			quoted = append(quoted, strconv.Quote(n))
		}
	}
	if len(quoted) == 0 {
		for _, n := range names {
			quoted = append(quoted, strconv.Quote(n))
		}
	}
	switch len(quoted) {
	case 0:
		return "a program", "holds"
	case 1:
		return quoted[0], "holds"
	}
	return strings.Join(quoted, ", "), "hold"
}

// foregroundAdvice says what ends a program that waits for keys in pane's foreground (names:
// foregroundNames): a pager or a full-screen program. "" for any other.
func foregroundAdvice(pane string, names []string) string {
	for _, n := range names {
		switch {
		case pagers[n]:
			return fmt.Sprintf("%s is a pager, waiting for a key, so waiting cannot help: send q (send_keys {\"paneId\":%q,\"keys\":[\"q\"]}); for a command that pages its output, pass --no-pager or set PAGER=cat (git: GIT_PAGER=cat)", n, pane)
		case fullScreen[n]:
			return fmt.Sprintf("%s is a full-screen program, waiting for keys; quit it with send_keys (vi: Escape then :q Enter; top, htop: q), or drive it with send_keys", n)
		}
	}
	return ""
}

// shells are the foreground programs a command is typed into.
var shells = map[string]bool{"bash": true, "zsh": true, "sh": true, "dash": true, "ksh": true, "mksh": true, "ksh93": true}

// pagers wait for a key at the end of every page.
var pagers = map[string]bool{"less": true, "more": true, "most": true, "pg": true, "man": true}

// fullScreen programs own the screen until told to quit.
var fullScreen = map[string]bool{"vi": true, "vim": true, "nvim": true, "view": true, "nano": true, "emacs": true, "top": true, "htop": true, "btop": true, "watch": true, "mc": true, "tig": true}

// AtPrompt reports whether a pane whose foreground program is current
// (pane_current_command) and whose own process is pid is a shell waiting
// at its prompt; where that cannot be told it says no.
func AtPrompt(current string, pid int) bool {
	return shells[strings.TrimPrefix(current, "-")] && ShellAtPrompt(pid)
}

// interruptSettles is how long after an interrupt this server sent a
// program still running is taken for one that is ending.
const interruptSettles = 3 * time.Second

// interrupts remembers when this server last sent each pane an interrupt.
type interrupts struct {
	mu     sync.Mutex
	byPane map[string]time.Time
}

func (i *interrupts) note(pane string) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.byPane == nil || len(i.byPane) >= maxGuards {
		i.byPane = map[string]time.Time{}
	}
	i.byPane[pane] = time.Now()
}

func (i *interrupts) since(pane string) (time.Duration, bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	at, ok := i.byPane[pane]
	return time.Since(at), ok
}
