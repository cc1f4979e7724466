package shellrun

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/fgproc"
)

// promptCheck refuses a pane whose foreground program is not a shell, or
// whose shell is not at its prompt (fgproc: it does not own the terminal's
// foreground, or waits for a child there). Where the process facts cannot
// be read it refuses too, and says that it could not tell: typing a command
// into what may be another program is worse than not typing it. Each
// refusal names the foreground program and what would help.
func (e *Engine) promptCheck(pane, current string, pid int) error {
	if !shells[strings.TrimPrefix(current, "-")] {
		return e.notAtPrompt(pane, current, pid, fgproc.ChildInForeground)
	}
	st, err := fgproc.Look(pid)
	if err != nil {
		return fmt.Errorf("pane %s runs %q, but whether it is at its prompt cannot be told (%w), so nothing was typed; "+
			"check that ps works for this user, or type on purpose with send_keys", pane, current, err)
	}
	if st != fgproc.AtPrompt {
		return e.notAtPrompt(pane, current, pid, st)
	}
	return nil
}

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
	if advice := foregroundAdvice(pane, name, pid); advice != "" {
		return fmt.Errorf("%s: %s", what, advice)
	}
	if shells[name] {
		return fmt.Errorf("%s: the shell runs a command in the foreground (a subshell or a program it started); wait for it to finish (wait_for_text with a cursor from capture_since), or stop it with send_keys C-c", what)
	}
	return fmt.Errorf("%s; wait for it to finish (wait_for_text with a cursor from capture_since), or stop it with send_keys C-c", what)
}

// foregroundAdvice says what ends a program that waits for keys in pane's
// foreground (current, as tmux names it, or a program of the foreground
// group of the shell pid): a pager or a full-screen program. "" for any
// other.
func foregroundAdvice(pane, current string, pid int) string {
	names := []string{current}
	if more, err := fgproc.ForegroundNames(pid); err == nil { // advice only: without the names, tmux's one
		names = append(names, more...)
	}
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
