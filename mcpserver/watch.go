package mcpserver

import (
	"context"
	"time"
)

// fallbackEvery is how often a wait re-checks a pane when it cannot be told
// (LIBTMUX_MCP_LIVE=0, or the control connection could not be opened).
const fallbackEvery = time.Second

// paneWatch wakes a wait when its pane may have changed.
type paneWatch struct {
	wake   <-chan struct{}
	ended  <-chan struct{} // closed when the wake-ups stopped for good
	stream bool            // woken by tmux (control mode), not by a timer
	stop   func()
	// command runs one tmux command over the control connection (a round
	// trip, not a process); nil without one. It quotes every argument, so
	// it cannot carry a ";" command list.
	command func(ctx context.Context, args ...string) (string, error)
}

// watchPane registers for pane in session with the live pool; with output,
// the pane's output wakes the wait, else only changes that may end the
// pane. Without one
// (or when the connection cannot be opened) it falls back to a slow timer,
// so a wait still ends when its pane dies.
func (s *server) watchPane(ctx context.Context, session, pane string, output bool) paneWatch {
	if s.live != nil && session != "" {
		w, err := s.live.Watch(ctx, session, pane, output)
		if err == nil {
			return paneWatch{wake: w.C(), ended: w.Ended(), stream: true, stop: w.Close, command: w.Command}
		}
		s.log.Debug("control-mode watch failed; re-checking the pane every second instead", "pane", pane, "err", err)
	}
	t := time.NewTicker(fallbackEvery)
	wake := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-t.C:
				select {
				case wake <- struct{}{}:
				default:
				}
			case <-done:
				return
			}
		}
	}()
	return paneWatch{wake: wake, stop: func() { t.Stop(); close(done) }}
}
