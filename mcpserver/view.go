package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/libtmux/libtmux-mcp/live"
	"github.com/libtmux/libtmux-mcp/tmux"
)

// DefaultViewKeep is how long the server goes on counting a pane's lines
// after the last capture_since, run_shell_command or wait_for_text for it (Limits.ViewKeep
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

// panePosition reads pane's position over its view's control connection when
// this server watches the pane (a round trip), else with a tmux process. A
// view whose connection fails (it ended, or tmux did not answer in time)
// leaves the answer to a process, which says what tmux says.
func (s *server) panePosition(ctx context.Context, pane string) (tmux.Position, error) {
	if s.live != nil {
		if v := s.live.Lookup(pane); v != nil {
			pos, err := v.Position(ctx)
			if err == nil || paneMissing(err) {
				return pos, err
			}
		}
	}
	return s.tmux.CapturePosition(ctx, pane)
}

// captureRows is tmux.Client.CaptureRows (CaptureRowsJoined when joined)
// over v's control connection when v is not nil: its commands run in one
// queue step there too, so the rows and the position still describe one
// moment. A failed connection leaves the read to a process, as in
// panePosition.
func (s *server) captureRows(ctx context.Context, v *live.View, pane string, from int, guess tmux.Position, joined bool) (tmux.Rows, []string, error) {
	if v != nil && v.Alive() {
		q, err := tmux.NewRowsQuery(pane, from, guess, joined)
		if err != nil {
			return tmux.Rows{}, nil, err
		}
		out, err := v.CommandList(ctx, nil, tmux.SplitList(q.Args)...)
		if err == nil {
			return q.Parse(out)
		}
		if paneMissing(err) {
			return tmux.Rows{}, nil, err
		}
	}
	if joined {
		return s.tmux.CaptureRowsJoined(ctx, pane, from, guess)
	}
	rows, err := s.tmux.CaptureRows(ctx, pane, from, guess)
	return rows, nil, err
}

// paneMissing reports whether err says the pane, or its tmux server, is gone.
func paneMissing(err error) bool {
	return errors.Is(err, tmux.ErrNotFound) || errors.Is(err, tmux.ErrNoServer)
}
