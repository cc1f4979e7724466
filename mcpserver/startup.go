package mcpserver

import (
	"context"
	"fmt"

	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// awaitPending settles the server's identity: at once when d.Startup is
// given (or d.Pending has already returned), else in the background, so
// that New returns and the handshake proceeds while tmux is read.
func (s *server) awaitPending(ctx context.Context, d Deps) {
	if d.Pending == nil {
		s.settle(d.Startup, nil)
		return
	}
	select {
	case <-d.Pending.Done():
		s.settle(d.Pending.Wait(ctx))
	default:
		go func() { s.settle(d.Pending.Wait(ctx)) }()
	}
}

// settle records what Ensure returned and opens the gate.
func (s *server) settle(st tmux.Startup, err error) {
	if err != nil {
		s.startErr = fmt.Errorf("the tmux server could not be read: %w", err)
	} else {
		s.startup, s.prov = st, st.Provenance
		s.caller = newCaller(s.deps.CallerTMUX, s.deps.CallerPane, st.Snapshot.Server)
	}
	close(s.ready)
}

// awaitStartup is the receiving middleware that holds tool calls and
// resource reads until the server's identity is known; the handshake and
// the listings need nothing of tmux and pass at once.
func (s *server) awaitStartup(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/call" && method != "resources/read" {
			return next(ctx, method, req)
		}
		select {
		case <-s.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if s.startErr != nil {
			return nil, s.startErr
		}
		return next(ctx, method, req)
	}
}
