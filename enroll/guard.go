package enroll

import (
	"context"
	"fmt"
	"strings"

	"github.com/libtmux/libtmux-mcp/tmux"
)

// RunOption is the pane option the guard stamps with the authorized run.
const RunOption = "@libtmux_mcp_run"

// Guard asks tmux, in one command-queue step, whether pane still runs
// process pid and is alive, and if so records runID on the pane. Only the
// OK line with this call's nonce authorizes; a missing pane takes the false
// branch (tmux exits 0 either way, so the exit code proves nothing).
func Guard(ctx context.Context, c *tmux.Client, pane string, pid int, runID string) (bool, error) {
	nonce := newID()
	args, err := tmux.GuardCommand(pane, pid, RunOption, runID, nonce)
	if err != nil {
		return false, err
	}
	out, err := c.Run(ctx, args...)
	if err != nil {
		return false, err
	}
	for _, line := range strings.Split(out, "\n") {
		switch line {
		case "OK-" + nonce:
			return true, nil
		case "NO-" + nonce:
			return false, nil
		}
	}
	return false, fmt.Errorf("the tmux guard for pane %s answered neither OK nor NO: %q", pane, out)
}
