package mcpserver

import (
	"context"
	"fmt"
	"time"

	"github.com/libtmux/libtmux-mcp/live"
	"github.com/libtmux/libtmux-mcp/tmux"
)

// DefaultViewKeep is how long the server goes on counting a pane's lines
// after the last capture_since or run_shell_command for it (Limits.ViewKeep
// when set).
const DefaultViewKeep = 5 * time.Minute

// paneView returns pane's view, made when it has none (see
// live.Pool.Open: pos, when not nil, saves a new view a tmux call). keep
// extends its life; first, when not nil, runs with the lines locked before
// a new view's connection is visible (see live.Pool.View). It fails when
// control mode is off or the pane is not there. The view comes held: call
// release when done with it.
func (s *server) paneView(ctx context.Context, pane string, keep time.Duration, first func(*live.Lines), pos *tmux.Position) (v *live.View, release func(), err error) {
	if s.live == nil {
		return nil, nil, errNoLive
	}
	return s.live.Open(ctx, s.tmux, pane, keep, first, pos)
}

// watchPane is live.WatchOrTick with the server's pool and log.
func (s *server) watchPane(ctx context.Context, session, pane string, output bool) live.Wakeup {
	return live.WatchOrTick(ctx, s.live, s.log, session, pane, output)
}

var errNoLive = fmt.Errorf("LIBTMUX_MCP_LIVE=0 forbids control-mode connections")

// viewKeep is how long a cursor keeps its pane watched.
func (s *server) viewKeep() time.Duration {
	if s.deps.Limits.ViewKeep > 0 {
		return s.deps.Limits.ViewKeep
	}
	return DefaultViewKeep
}
