package tmux

import "context"

// PendingStartup is an Ensure running in the background: the process can
// answer its client's handshake while tmux is read, and whatever needs the
// server's identity waits for it.
type PendingStartup struct {
	done chan struct{}
	st   Startup
	err  error
}

// EnsureLater starts Ensure(ctx, want) and returns at once.
func (c *Client) EnsureLater(ctx context.Context, want Want) *PendingStartup {
	p := &PendingStartup{done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.st, p.err = c.Ensure(ctx, want)
	}()
	return p
}

// Known returns a PendingStartup that is already settled with st.
func Known(st Startup) *PendingStartup {
	p := &PendingStartup{done: make(chan struct{}), st: st}
	close(p.done)
	return p
}

// Done is closed once Ensure has returned.
func (p *PendingStartup) Done() <-chan struct{} { return p.done }

// Wait returns what Ensure returned, or ctx's error if ctx ends first.
func (p *PendingStartup) Wait(ctx context.Context) (Startup, error) {
	select {
	case <-p.done:
		return p.st, p.err
	case <-ctx.Done():
		return Startup{}, ctx.Err()
	}
}
