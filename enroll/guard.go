package enroll

import (
	"context"
	"fmt"
	"strconv"

	"github.com/libtmux/libtmux-mcp/tmux"
)

// RunOption is the pane option stamped with the last run a shell agreed to.
const RunOption = "@libtmux_mcp_run"

// Stamp records runID on pane, in one tmux command-queue step and only if the pane still runs
// process pid and is alive, so a stamp never lands on a respawned pane. The broker calls it only
// once the shell has agreed to the run, off the run's path: it is a record for people
// (tmux show-options -p @libtmux_mcp_run), not the authorization.
func Stamp(ctx context.Context, c *tmux.Client, pane string, pid int, runID string) error {
	if !tmux.ValidPaneID(pane) {
		return fmt.Errorf("pane id %q is not of the form %%N", pane)
	}
	cond := "#{&&:#{==:#{pane_pid}," + strconv.Itoa(pid) + "},#{!=:#{pane_dead},1}}"
	_, err := c.Run(ctx, "if-shell", "-F", "-t", pane, cond, "set -p -t "+pane+" "+RunOption+" "+runID)
	return err
}
