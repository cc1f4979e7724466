package mcpserver

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
