package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/libtmux/libtmux-mcp/tmux"
)

// checkID refuses an id of the wrong shape before tmux sees it.
func checkID(kind, id string) error {
	var ok bool
	var example string
	switch kind {
	case "pane":
		ok, example = tmux.ValidPaneID(id), "%3"
	case "window":
		ok, example = tmux.ValidWindowID(id), "@2"
	case "session":
		ok, example = tmux.ValidSessionID(id), "$1"
	}
	if !ok {
		return fmt.Errorf("%s id %q is not a tmux %s id (like %s); call list_%ss for the ids that exist", kind, id, kind, example, kind)
	}
	return nil
}

// explain turns a tmux failure about target id into an error that names
// the recovery: how many of that kind exist and which tool lists them.
func (s *server) explain(ctx context.Context, err error, kind, id string) error {
	var te *tmux.Error
	if !errors.As(err, &te) {
		return err
	}
	if errors.Is(err, tmux.ErrNoServer) {
		return fmt.Errorf("the tmux server on %s is not running (%s); start it again, or restart libtmux-mcp to start one", s.tmux.Route().Socket(), strings.TrimSpace(te.Stderr))
	}
	if !errors.Is(err, tmux.ErrNotFound) {
		return err
	}
	snap, serr := s.tmux.Snapshot(ctx, tmux.Want{Sessions: true, Windows: true, Panes: true})
	if serr != nil {
		return fmt.Errorf("no %s %s on this server; call list_%ss for those that exist", kind, id, kind)
	}
	n := map[string]int{"pane": len(snap.Panes), "window": len(snap.Windows), "session": len(snap.Sessions)}[kind]
	return fmt.Errorf("no %s %s on this server; call list_%ss for the %d that exist", kind, id, kind, n)
}

// fail wraps a tmux error that is not about a target.
func (s *server) fail(err error) error {
	if errors.Is(err, tmux.ErrNoServer) {
		return fmt.Errorf("the tmux server on %s is not running; start it again, or restart libtmux-mcp to start one: %w", s.tmux.Route().Socket(), err)
	}
	return err
}
