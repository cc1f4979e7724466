package shellrun

import (
	"fmt"
	"strings"

	"github.com/libtmux/libtmux-mcp/internal/fgproc"
)

// promptCheck refuses a pane whose foreground program is not a shell, or
// whose shell is not at its prompt (fgproc: it does not own the terminal's
// foreground, or waits for a child there). Where the process facts cannot
// be read it refuses too, and says that it could not tell: typing a command
// into what may be another program is worse than not typing it.
func promptCheck(pane, current string, pid int) error {
	if !shells[strings.TrimPrefix(current, "-")] {
		return notAtPrompt(pane, current)
	}
	ok, err := fgproc.ShellAtPrompt(pid)
	if err != nil {
		return fmt.Errorf("pane %s runs %q, but whether it is at its prompt cannot be told (%w), so nothing was typed; "+
			"check that ps works for this user, or type on purpose with send_keys", pane, current, err)
	}
	if !ok {
		return notAtPrompt(pane, current)
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

// notAtPrompt is the refusal of a pane whose shell is not waiting for a
// command line.
func notAtPrompt(pane, current string) error {
	return fmt.Errorf("pane %s runs %q, not a shell at its prompt; wait for it to finish (wait_for_text), or use send_keys to drive it", pane, current)
}

// shells are the foreground programs a command is typed into.
var shells = map[string]bool{"bash": true, "zsh": true, "sh": true, "dash": true, "ksh": true, "mksh": true, "ksh93": true}

// AtPrompt reports whether a pane whose foreground program is current
// (pane_current_command) and whose own process is pid is a shell waiting
// at its prompt; where that cannot be told it says no.
func AtPrompt(current string, pid int) bool {
	return shells[strings.TrimPrefix(current, "-")] && ShellAtPrompt(pid)
}
