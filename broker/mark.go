package broker

import (
	"context"
	"log/slog"
	"os"
	"strconv"
	"time"
)

// EnrolledOption is the pane option the broker sets on a pane while its shell is enrolled, to
// the pid of the server process it is enrolled with, and unsets when the enrollment ends, so a
// person can show it in pane-border-format or the status line
// (#{?@libtmux_mcp_enrolled,[lent to tmux_run] ,}), and another server asked to invite the pane
// can tell that it is lent already.
const EnrolledOption = "@libtmux_mcp_enrolled"

// markTimeout bounds one tmux call that sets or unsets EnrolledOption.
const markTimeout = 5 * time.Second

// mark brings pane's EnrolledOption in line with whether it has an enrolled shell now. Calls are
// serialized, and each sets what is true when it runs, so the last one leaves the option right
// whatever order enrollments and losses came in. A pane that is gone is not an error.
func (b *Broker) mark(pane string) {
	if b.cfg.Client == nil {
		return
	}
	b.markMu.Lock()
	defer b.markMu.Unlock()
	b.mu.Lock()
	sh := b.shells[pane]
	enrolled := !b.closed && sh != nil && !sh.e.Lost()
	b.mu.Unlock()
	args := []string{"set-option", "-p", "-t", pane, EnrolledOption, strconv.Itoa(os.Getpid())}
	if !enrolled {
		args = []string{"set-option", "-p", "-u", "-t", pane, EnrolledOption}
	}
	ctx, cancel := context.WithTimeout(context.Background(), markTimeout)
	defer cancel()
	if _, err := b.cfg.Client.Run(ctx, args...); err != nil {
		b.cfg.Log.Debug("tmux_run pane option", slog.String("pane", pane), slog.Any("err", err))
	}
}
