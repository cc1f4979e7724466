package request

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/libtmux/libtmux-mcp/broker"
	"github.com/libtmux/libtmux-mcp/broker/peercred"
	"github.com/libtmux/libtmux-mcp/enroll"
	"github.com/libtmux/libtmux-mcp/tmux"
)

// Server answers enrollment and status requests for one server process.
type Server struct {
	Registry *enroll.Registry
	Client   *tmux.Client
	Tmux     tmux.ServerInfo // the tmux server the broker serves
	Dir      string          // the broker's private directory: invitations are written there
	// Record is the server's record as of now (its client name changes after initialize).
	Record func() Record
	// History returns a pane's recent runs; nil reports none.
	History func(pane string) []broker.RunRecord
	Log     *slog.Logger
	// Peer reads a connection's credentials; peercred.FromConn when nil.
	Peer func(*net.UnixConn) (peercred.Peer, error)

	wg sync.WaitGroup
}

// Listen listens on dir's request socket (dir is the broker's private 0700 directory).
func Listen(dir string) (*net.UnixListener, error) {
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(dir, SocketName), Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("tmux_run: listen on the request socket: %w", err)
	}
	ln.SetUnlinkOnClose(true)
	return ln, nil
}

// Run answers requests on ln until ctx ends, then closes ln, waits for the requests in flight
// and returns ctx.Err().
func (s *Server) Run(ctx context.Context, ln *net.UnixListener) error {
	if s.Log == nil {
		s.Log = slog.New(slog.DiscardHandler)
	}
	if s.Peer == nil {
		s.Peer = peercred.FromConn
	}
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	defer s.wg.Wait()
	for {
		conn, err := ln.AcceptUnix()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			s.Log.Warn("tmux_run request accept", slog.Any("err", err))
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(10 * time.Second))
			a := s.serve(ctx, conn)
			b, _ := json.Marshal(a)
			conn.Write(append(b, '\n'))
		}()
	}
}

// refuse is a refusal answer.
func refuse(reason, format string, args ...any) answer {
	return answer{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// serve reads one request from conn, whose peer it checks first, and decides it.
func (s *Server) serve(ctx context.Context, conn *net.UnixConn) answer {
	peer, err := s.Peer(conn)
	if err != nil {
		return refuse(reasonFailed, "cannot read the requesting process's credentials: %v", err)
	}
	defer peer.Close()
	if int(peer.UID) != os.Getuid() {
		return refuse(enroll.ReasonWrongUID, "this server runs as another user")
	}
	line, err := bufio.NewReaderSize(conn, maxLine).ReadSlice('\n')
	if err != nil {
		return refuse(reasonBadRequest, "the request is not one line of at most %d bytes", maxLine)
	}
	var m message
	if err := json.Unmarshal(line, &m); err != nil || m.V != 1 {
		return refuse(reasonBadRequest, "the request is not a version 1 request; use the libtmux-mcp of this server (%s)", s.record().Version)
	}
	switch m.Op {
	case opEnroll:
		return s.enroll(ctx, peer, m)
	case opStatus:
		return answer{OK: true, Status: s.status()}
	}
	return refuse(reasonBadRequest, "unknown request %q", m.Op)
}

func (s *Server) record() Record {
	if s.Record == nil {
		return Record{}
	}
	return s.Record()
}

// shellStartMargin widens "since the pane's shell started" back by this much, so input sent a
// moment before the shell's start time (counted in clock ticks) still refuses.
const shellStartMargin = time.Second

// enroll checks that the request is the person's own act in the pane it names and, if so,
// invites the pane.
func (s *Server) enroll(ctx context.Context, peer peercred.Peer, m message) answer {
	if sys == nil {
		return refuse(reasonFailed, "%v", peercred.ErrNotSupported)
	}
	env, ok := tmux.ParseTMUX(m.TMUX)
	if !ok || !env.Names(s.Tmux) {
		return refuse(enroll.ReasonWrongServer, "this server serves the tmux server at %s (pid %d), not this pane's", s.Tmux.SocketPath, s.Tmux.PID)
	}
	if !tmux.ValidPaneID(m.Pane) {
		return refuse(reasonBadRequest, "%q is not a pane id such as %%3", m.Pane)
	}
	vals, err := s.Client.Displayed(ctx, m.Pane, []string{"pane_id", "pane_pid", "pane_tty", "pane_dead", broker.EnrolledOption})
	if err != nil || len(vals) != 5 || vals[0] != m.Pane {
		return refuse(reasonNoPane, "tmux has no pane %s", m.Pane)
	}
	// A pane another live server's tmux_run holds is not invited again (its mark is that
	// server's pid); a mark left by a server that is gone is no one's.
	if other, _ := strconv.Atoi(vals[4]); other > 0 && other != os.Getpid() && isServer(other) {
		return refuse(reasonLentElsewhere, "pane %s is lent to the tmux_run of libtmux-mcp process %d already; run libtmux_mcp_unenroll in it first, then run this command again (libtmux-mcp status lists the servers)", m.Pane, other)
	}
	shellPID, _ := strconv.Atoi(vals[1])
	if vals[3] == "1" || shellPID <= 0 {
		return refuse(reasonNoPane, "pane %s is dead", m.Pane)
	}
	tty, err := sys.ttyDev(vals[2])
	if err != nil {
		return refuse(reasonFailed, "cannot read pane %s's terminal %s: %v", m.Pane, vals[2], err)
	}

	// The requester: a process in the pane's terminal, in its foreground process group.
	st, err := peercred.ReadStat(peer.PID)
	switch {
	case err != nil:
		return refuse(reasonFailed, "cannot read the requesting process: %v", err)
	case st.TTY != tty || st.PGRP <= 0 || st.PGRP != st.TPGID:
		return refuse(reasonNotForeground, "the request did not come from the foreground job of pane %s's terminal; type eval \"$(libtmux-mcp enroll)\" at that pane's zsh prompt", m.Pane)
	}
	// The shell that will source the invitation: the pane's own process, a zsh.
	sh, err := peercred.ReadStat(shellPID)
	if err != nil {
		return refuse(reasonFailed, "cannot read pane %s's shell (pid %d): %v", m.Pane, shellPID, err)
	}
	if !strings.HasPrefix(sh.Comm, "zsh") {
		return refuse(reasonNotZsh, "pane %s runs %s, not zsh: tmux_run enrolls only zsh; start zsh in the pane (exec zsh) and run eval \"$(libtmux-mcp enroll)\" again", m.Pane, sh.Comm)
	}
	if !peercred.Alive(peer.PidFD) {
		return refuse(reasonFailed, "the requesting process exited before it could be checked")
	}
	boot, err := sys.bootTime()
	if err != nil {
		return refuse(reasonFailed, "cannot read the boot time: %v", err)
	}
	since := boot.Add(time.Duration(sh.StartTime) * time.Second / time.Duration(sys.clockTicks)).Add(-shellStartMargin)

	file := filepath.Join(s.Dir, "enroll-"+strings.TrimPrefix(m.Pane, "%")+"-"+enroll.NewRunID()[:8]+".zsh")
	lifetime, err := s.Registry.Request(m.Pane, file, since)
	if err != nil {
		var re *enroll.RequestError
		if errors.As(err, &re) {
			s.Log.Info("tmux_run enrollment request refused", slog.String("pane", m.Pane), slog.String("reason", re.Reason))
			return refuse(re.Reason, "%s", re.Error())
		}
		return refuse(reasonFailed, "%v", err)
	}
	s.Log.Info("tmux_run pane invited on request", slog.String("pane", m.Pane), slog.Int("pid", peer.PID))
	return answer{OK: true, File: file, LifetimeMS: lifetime.Milliseconds()}
}

// isServer reports whether process pid is alive and runs libtmux-mcp.
func isServer(pid int) bool {
	st, err := peercred.ReadStat(pid)
	return err == nil && strings.HasPrefix(st.Comm, "libtmux-mcp")
}

// status reports the registry's panes and their recent runs.
func (s *Server) status() *Status {
	st := &Status{Server: s.record(), Panes: []PaneStatus{}}
	for _, p := range s.Registry.Panes() {
		ps := PaneStatus{Pane: p.Pane, State: p.State, PID: p.PID}
		if s.History != nil {
			for _, r := range s.History(p.Pane) {
				rs := RunStatus{Start: r.Start, DurationMS: r.Duration.Milliseconds(), FirstLine: r.FirstLine, Digest: r.Digest, Code: string(r.Code), Running: r.Running}
				if c := r.Completion; c != nil && c.Signaled {
					rs.Signal = c.Signal
				} else if c != nil {
					v := c.Status
					rs.Exit = &v
				}
				ps.Runs = append(ps.Runs, rs)
			}
		}
		st.Panes = append(st.Panes, ps)
	}
	return st
}
