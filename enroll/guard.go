package enroll

import (
	"context"
	"strings"

	"github.com/libtmux/libtmux-mcp/tmux"
)

// RunOption is the pane option stamped with the last run a shell agreed to.
const RunOption = "@libtmux_mcp_run"

// Stamp records runID on pane, in one tmux command-queue step and only if the pane still runs
// process pid and is alive (tmux.GuardCommand), so a stamp never lands on a respawned pane. The
// broker calls it only once the shell has agreed to the run, off the run's path: it is a record
// for people (tmux show-options -p @libtmux_mcp_run), not the authorization. It reports whether
// the stamp was written.
func Stamp(ctx context.Context, c *tmux.Client, pane string, pid int, runID string) (bool, error) {
	nonce := newID()
	args, err := tmux.GuardCommand(pane, pid, RunOption, runID, nonce)
	if err != nil {
		return false, err
	}
	out, err := c.Run(ctx, args...)
	if err != nil {
		return false, err
	}
	return strings.Contains(out, "OK-"+nonce+"\n"), nil
}
