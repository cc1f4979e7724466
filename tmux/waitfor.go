package tmux

import (
	"context"
	"time"
)

// WaitFor blocks in wait-for channel until the channel is signalled, ctx
// ends or timeout passes, and returns the identity of the server it waited
// on, read in the same invocation just before the wait began (one tmux
// process, where reading the identity first took two). The identity is
// the zero ServerInfo when the wait never began (no server, say).
//
// wait-for also returns, with status 0, when the server is killed:
// kill-server wakes every waiter and the rest of its command list runs. So
// a caller that must tell a signal from a killed server reads the
// identity again after the wait and compares generations.
func (c *Client) WaitFor(ctx context.Context, timeout time.Duration, channel string) (ServerInfo, error) {
	seps := NewSeparators()
	args, err := snapshotArgs(Want{}, seps)
	if err != nil {
		return ServerInfo{}, err
	}
	out, runErr := c.RunFor(ctx, timeout, append(args, ";", "wait-for", channel)...)
	// The identity is printed before the wait began, whatever ended it.
	snap, _, _, parseErr := parseSnapshot(out, seps)
	if parseErr != nil {
		snap = Snapshot{}
	}
	if runErr != nil {
		return snap.Server, runErr
	}
	return snap.Server, parseErr
}
