package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"

	"github.com/libtmux/libtmux-mcp/broker"
	"github.com/libtmux/libtmux-mcp/enroll"
	"github.com/libtmux/libtmux-mcp/enroll/request"
	"github.com/libtmux/libtmux-mcp/internal/config"
	"github.com/libtmux/libtmux-mcp/internal/panerecord"
	"github.com/libtmux/libtmux-mcp/shellsetup"
	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// tmuxRun is the tmux_run machinery: the broker enrolled shells connect to
// and the registry of invitations and enrollments. This process owns both.
type tmuxRun struct {
	registry *enroll.Registry
	broker   *broker.Broker
	dir      string // the broker's private directory, where the server record is
	once     sync.Once
	reqStop  context.CancelFunc // stops the request server
	reqDone  chan struct{}

	mu     sync.Mutex
	record request.Record
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

// startTmuxRun checks every invited pane exists, starts the broker, writes
// one setup file per --enroll-pane and tells the operator on notice what to
// source where. With no --enroll-pane nothing is invited: a person asks for
// an invitation from the pane (libtmux-mcp enroll). The broker serves until
// ctx ends or close.
func startTmuxRun(ctx context.Context, cfg config.Config, client *tmux.Client, st tmux.Startup, log *slog.Logger, notice io.Writer) (*tmuxRun, error) {
	exists := map[string]bool{}
	for _, p := range st.Snapshot.Panes {
		exists[p.ID] = true
	}
	for _, ep := range cfg.EnrollPanes {
		if !exists[ep.Pane] {
			return nil, fmt.Errorf("--enroll-pane %s: no such pane on %s; list the panes with: tmux -S %s list-panes -a", ep.Pane, cfg.Route.Socket(), st.Snapshot.Server.SocketPath)
		}
	}
	ln, err := broker.Listen()
	if err != nil {
		return nil, err
	}
	panes := map[string]string{}
	for _, ep := range cfg.EnrollPanes {
		panes[ep.Pane] = ep.File
		if ep.File == "" {
			// In the broker's private directory: only this user can read it or swap it.
			panes[ep.Pane] = filepath.Join(ln.Dir(), "enroll-"+strings.TrimPrefix(ep.Pane, "%")+".zsh")
		}
	}
	files := setupFiles{socket: ln.Path(), helper: cfg.Helper}
	reg, err := enroll.NewRegistry(files, panes, cfg.EnrollTimeout, func(msg string) { fmt.Fprintln(notice, msg) })
	if err != nil {
		ln.Close()
		return nil, err
	}
	// Input any libtmux-mcp process on this tmux server sent a pane refuses its enrollment.
	if records, err := panerecord.For(st.Snapshot.Server.SocketPath, st.Snapshot.Server.PID); err != nil {
		log.Warn("tmux_run: other processes' input to panes cannot be seen; only this server's refuses an enrollment", "err", err)
	} else {
		reg.SeeOthersInput(records.InputSince)
	}
	b, err := broker.New(ln, broker.Config{
		Client:   client,
		Server:   st.Snapshot.Server,
		Registry: reg,
		Limits:   broker.Limits(cfg.Broker),
		Log:      log,
	})
	if err != nil {
		ln.Close()
		return nil, err
	}
	r := &tmuxRun{registry: reg, broker: b, dir: ln.Dir(), reqDone: make(chan struct{})}
	go b.Serve(ctx)
	if err := r.serveRequests(ctx, cfg, client, st, log); err != nil {
		close(r.reqDone)
		r.close()
		return nil, err
	}
	if _, err := reg.Invite(); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

// close retires invitations, removes this process's files and stops the
// broker; runs in flight stop their scripts first.
func (r *tmuxRun) close() {
	if r == nil {
		return
	}
	r.once.Do(func() {
		if r.reqStop != nil {
			r.reqStop()
		}
		<-r.reqDone
		r.registry.Close()
		r.broker.Close()
	})
}

// reinviteOnHUP issues fresh invitations on SIGHUP until ctx ends. The
// handler is installed before it returns, so a SIGHUP sent once the
// startup line is out never kills the process.
func (r *tmuxRun) reinviteOnHUP(ctx context.Context, notice io.Writer) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go r.reinvite(ctx, hup, notice)
}

func (r *tmuxRun) reinvite(ctx context.Context, hup chan os.Signal, notice io.Writer) {
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			panes, err := r.registry.Invite()
			switch {
			case err != nil:
				fmt.Fprintf(notice, "tmux_run: %v\n", err)
			case len(panes) == 0:
				fmt.Fprintln(notice, "tmux_run: SIGHUP: every invited pane is enrolled or has a live invitation")
			default:
				fmt.Fprintf(notice, "tmux_run: SIGHUP: invited %s again\n", strings.Join(panes, ", "))
			}
		}
	}
}

// serveRequests writes this server's record in the broker directory and answers the enroll and
// status commands a person types in a pane (package enroll/request) on its request socket.
func (r *tmuxRun) serveRequests(ctx context.Context, cfg config.Config, client *tmux.Client, st tmux.Startup, log *slog.Logger) error {
	ln, err := request.Listen(r.dir)
	if err != nil {
		return err
	}
	r.record = request.Record{
		PID: os.Getpid(), Started: time.Now(), TmuxSocket: st.Snapshot.Server.SocketPath, TmuxPID: st.Snapshot.Server.PID,
		Socket: ln.Addr().String(), Version: cfg.Version,
	}
	if err := request.WriteRecord(r.dir, r.record); err != nil {
		ln.Close()
		return err
	}
	srv := &request.Server{
		Registry: r.registry, Client: client, Tmux: st.Snapshot.Server, Dir: r.dir,
		Record: r.currentRecord, History: r.broker.History, Log: log,
	}
	ctx, r.reqStop = context.WithCancel(ctx)
	go func() { defer close(r.reqDone); srv.Run(ctx, ln) }()
	return nil
}

func (r *tmuxRun) currentRecord() request.Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.record
}

// setClient names the MCP client (from initialize) in the server record.
func (r *tmuxRun) setClient(name string) {
	name = strings.Map(func(c rune) rune {
		if unicode.IsPrint(c) {
			return c
		}
		return -1
	}, name) // it is printed on a person's terminal
	if len(name) > 64 {
		name = name[:64]
	}
	if r == nil || name == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.record.Client == name {
		return
	}
	r.record.Client = name
	request.WriteRecord(r.dir, r.record) // best effort: the record is for listing only
}

// clientName is middleware that names the client of initialize in the server record, for a
// person choosing among servers (libtmux-mcp enroll lists them).
func (r *tmuxRun) clientName(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "initialize" {
			if p, ok := req.GetParams().(*mcp.InitializeParams); ok && p != nil && p.ClientInfo != nil {
				r.setClient(p.ClientInfo.Name)
			}
		}
		return next(ctx, method, req)
	}
}
