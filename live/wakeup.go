package live

import (
	"context"
	"log/slog"
	"time"
)

// FallbackEvery is how often a Wakeup without a connection wakes its
// waiter (control mode forbidden, or the connection could not be opened).
const FallbackEvery = time.Second

// Wakeup wakes a wait when its pane may have changed: a Watch of the pool,
// or a slow timer when there is none, so that a wait still ends when its
// pane dies.
type Wakeup struct {
	C      <-chan struct{}
	Ended  <-chan struct{} // closed when the wake-ups stopped for good
	Stream bool            // woken by tmux (control mode), not by a timer
	Stop   func()
	// Command runs one tmux command over the control connection (a round
	// trip, not a process); nil without one. It quotes every argument, so
	// it cannot carry a ";" command list.
	Command func(ctx context.Context, args ...string) (string, error)
}

// WatchOrTick registers for pane in session with p (see Pool.Watch); with
// output, the pane's output wakes the wait, else only changes that may end
// the pane. Without a pool (p nil) or a session, or when the connection
// cannot be opened (logged to log at debug level), it falls back to a
// timer that fires every FallbackEvery.
func WatchOrTick(ctx context.Context, p *Pool, log *slog.Logger, session, pane string, output bool) Wakeup {
	if p != nil && session != "" {
		w, err := p.Watch(ctx, session, pane, output)
		if err == nil {
			return Wakeup{C: w.C(), Ended: w.Ended(), Stream: true, Stop: w.Close, Command: w.Command}
		}
		log.Debug("control-mode watch failed; re-checking the pane every second instead", "pane", pane, "err", err)
	}
	t := time.NewTicker(FallbackEvery)
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
	return Wakeup{C: wake, Stop: func() { t.Stop(); close(done) }}
}
