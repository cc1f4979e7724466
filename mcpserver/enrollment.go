package mcpserver

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/libtmux/libtmux-mcp/broker"
	"github.com/libtmux/libtmux-mcp/enroll"
	"github.com/libtmux/libtmux-mcp/shellsetup"
	"github.com/libtmux/libtmux-mcp/tmux"
)

// enrollment is the tmux_run machinery of a server that enabled it.
type enrollment struct {
	registry *enroll.Registry
	broker   *broker.Broker
	once     sync.Once
}

// setupFiles writes setup files that connect to the broker socket.
type setupFiles struct {
	socket, helper string
}

func (f setupFiles) Create(path, pane, token string) (func() error, error) {
	content, err := shellsetup.Render(shellsetup.Params{Socket: f.socket, Helper: f.helper, Token: token, Pane: pane})
	if err != nil {
		return nil, err
	}
	file, err := shellsetup.Create(path, content)
	if err != nil {
		return nil, err
	}
	return file.Remove, nil
}

// startEnrollment starts the broker, writes one setup file per invited pane
// and tells the operator on notice what to source where. Every invited pane
// must exist.
func (s *server) startEnrollment(ctx context.Context, notice io.Writer) error {
	if len(s.cfg.EnrollPanes) == 0 {
		return fmt.Errorf("tmux_run is enabled but no pane is invited; add --enroll-pane %%ID=FILE")
	}
	snap, err := s.tmux.Snapshot(ctx, tmux.Want{Panes: true})
	if err != nil {
		return err
	}
	exists := map[string]bool{}
	for _, p := range snap.Panes {
		exists[p.ID] = true
	}
	panes := map[string]string{}
	for _, ep := range s.cfg.EnrollPanes {
		if !exists[ep.Pane] {
			return fmt.Errorf("--enroll-pane %s: no such pane on %s; list the panes with: tmux -S %s list-panes -a", ep.Pane, s.tmux.Route().Socket(), snap.Server.SocketPath)
		}
		panes[ep.Pane] = ep.File
	}
	notify := func(msg string) { fmt.Fprintln(notice, msg) }
	ln, err := broker.Listen()
	if err != nil {
		return err
	}
	files := setupFiles{socket: ln.Path(), helper: s.cfg.Helper}
	reg, err := enroll.NewRegistry(files, panes, s.cfg.EnrollTimeout, notify)
	if err != nil {
		ln.Close()
		return err
	}
	b, err := broker.New(ln, broker.Config{
		Client:      s.tmux,
		Server:      s.info,
		Registry:    reg,
		ShellAnswer: s.cfg.ShellAnswer,
		RunTimeout:  s.cfg.RunTimeout,
		Log:         s.log,
	})
	if err != nil {
		ln.Close()
		return err
	}
	s.enroll = &enrollment{registry: reg, broker: b}
	s.runner = b
	go b.Serve(s.life)
	if _, err := reg.Invite(); err != nil {
		s.enroll.close()
		return err
	}
	return nil
}

// close retires invitations, removes this process's files and stops the
// broker; runs in flight stop their scripts first.
func (e *enrollment) close() {
	if e == nil {
		return
	}
	e.once.Do(func() {
		e.registry.Close()
		e.broker.Close()
	})
}

// reinviteOnHUP issues fresh invitations on SIGHUP until ctx ends.
func (s *server) reinviteOnHUP(ctx context.Context, notice io.Writer) {
	if s.enroll == nil {
		return
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		defer signal.Stop(hup)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				panes, err := s.enroll.registry.Invite()
				if err != nil {
					fmt.Fprintf(notice, "tmux_run: %v\n", err)
				}
				if len(panes) == 0 && err == nil {
					fmt.Fprintln(notice, "tmux_run: SIGHUP: every invited pane is enrolled or has a live invitation")
				} else if len(panes) > 0 {
					fmt.Fprintf(notice, "tmux_run: SIGHUP: invited %s again\n", strings.Join(panes, ", "))
				}
			}
		}
	}()
}

// enrollmentState reports a pane's tmux_run enrollment state.
func (s *server) enrollmentState(paneID string) string {
	if s.enroll == nil {
		return enroll.StateNone
	}
	_, state := s.enroll.registry.Lookup(paneID)
	return state
}
