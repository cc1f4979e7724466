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

// viewMaxLines bounds the lines a view keeps, whatever the pane's
// history-limit says.
const viewMaxLines = 100000

// paneView returns pane's view (see live.View), making one when it has
// none: that costs one tmux call for the pane's session and history-limit,
// and the control connection when the session has none open. keep extends
// its life. first, when not nil, runs with the lines locked before a new
// view's connection is visible (see live.Pool.View). It fails when control
// mode is off or the pane is not there. The view comes held: call release
// when done with it.
func (s *server) paneView(ctx context.Context, pane string, keep time.Duration, first func(*live.Lines)) (v *live.View, release func(), err error) {
	return s.paneViewAt(ctx, pane, keep, first, nil)
}

// paneViewAt is paneView for a caller that has just read the pane's
// position (pos): a new view then costs no tmux process.
func (s *server) paneViewAt(ctx context.Context, pane string, keep time.Duration, first func(*live.Lines), pos *tmux.Position) (v *live.View, release func(), err error) {
	if s.live == nil {
		return nil, nil, errNoLive
	}
	if v := s.live.Lookup(pane); v != nil {
		release := v.Hold()
		if v.Alive() {
			if first != nil {
				v.Read(first)
			}
			v.Keep(keep)
			return v, release, nil
		}
		release()
	}
	if pos == nil {
		p, err := s.tmux.CapturePosition(ctx, pane)
		if err != nil {
			return nil, nil, err
		}
		pos = &p
	}
	// The view keeps as many lines as tmux would (history and screen).
	v, release, _, err = s.live.View(ctx, pos.SessionID, pane, min(pos.HistoryLimit+pos.Height, viewMaxLines), keep, first)
	return v, release, err
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
