package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/config"
	"github.com/libtmux/libtmux-mcp/internal/frame"
	"github.com/libtmux/libtmux-mcp/internal/stdio"
	"github.com/libtmux/libtmux-mcp/mcpserver"
	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serve builds the pieces in order (tmux client, tmux server, selection,
// the tmux_run broker and its invitations, the MCP server), prints the
// startup line on stderr once the tmux server is known, and serves t until
// the client goes away (stdin EOF) or ctx ends, which are both a clean
// stop.
func serve(ctx context.Context, cfg config.Config, t mcp.Transport, stderr io.Writer) error {
	return serveWith(ctx, cfg, func(ctx context.Context, srv *mcp.Server, screen *frame.Screen, stopHandlers func()) error {
		if st, ok := t.(*stdio.Transport); ok {
			st.Screen = screen
		}
		return serveSession(ctx, srv, t, stopHandlers)
	}, stderr)
}

// serveWith is serve with the serving left to run (Streamable HTTP serves
// many sessions this way), which returns when the clients are gone or ctx
// ends; stopHandlers ends every handler in flight, and screen is for the
// transport to answer the calls refused for their arguments before go-sdk
// decodes them.
func serveWith(ctx context.Context, cfg config.Config, run func(ctx context.Context, srv *mcp.Server, screen *frame.Screen, stopHandlers func()) error, stderr io.Writer) error {
	log := newLogger(stderr, cfg)
	// Names are checked before tmux is contacted. Off the default socket,
	// or with the toolsets given, this is already the selection.
	sel, err := mcpserver.Select(tmux.Provenance{}, cfg.Toolsets, cfg.EnableTools, cfg.ExcludeTools)
	if err != nil {
		return err
	}
	client, err := tmux.NewClient(cfg.Route, cfg.CommandTimeout)
	if err != nil {
		return err
	}
	client = client.Without(config.SecretVariables...)
	pending, sel, err := ensure(ctx, cfg, client, sel)
	if err != nil {
		return err
	}

	// Handlers and runs end with life: go-sdk does not end them when Run
	// returns, so the server's end is ours to signal.
	life, stop := context.WithCancel(ctx)
	defer stop()
	deps := mcpserver.Deps{
		Version:   cfg.Version,
		Tmux:      client,
		Pending:   pending,
		Selection: sel,
		Limits:    mcpserver.Limits(cfg.Server), // the same fields (see package config)
		Log:       log,
	}
	if cfg.HTTPAddr == "" {
		// Under HTTP no pane is the caller's: a client of the port is not
		// inside the pane this process was started from.
		deps.CallerTMUX, deps.CallerPane = cfg.CallerTMUX, cfg.CallerPane
	}

	var runs *tmuxRun
	if usesBroker(sel) {
		startup, err := pending.Wait(ctx) // settled before tmux_run: see ensure
		if err != nil {
			return err
		}
		runs, err = startTmuxRun(life, cfg, client, startup, log, stderr)
		if err != nil {
			return err
		}
		defer runs.close()
		deps.Enrollments, deps.Runner = runs.registry, runs.broker
		runs.reinviteOnHUP(life, stderr)
	}

	if !cfg.Server.NoLive {
		// Control-mode connections for waits; closed (and their tmux
		// clients reaped) before serve returns.
		deps.Live = mcpserver.NewLivePool(client)
		defer deps.Live.Close()
	}

	srv := mcpserver.New(life, deps)
	srv.AddReceivingMiddleware(frame.EncodableErrors(log))
	if runs != nil {
		srv.AddReceivingMiddleware(runs.clientName)
	}
	// A server that cannot be read ends the process: the handshake may
	// have been answered meanwhile, tool calls answer the error until then.
	serving, failed := context.WithCancelCause(ctx)
	defer failed(nil)
	go func() {
		st, err := pending.Wait(life)
		switch {
		case err == nil:
			fmt.Fprintln(stderr, startupLine(cfg, st, sel))
		case life.Err() == nil: // not the end of serving (stdin EOF, a signal)
			failed(err)
		}
	}()
	err = run(serving, srv, &frame.Screen{Server: srv, Refuse: sel.ArgumentRefusal}, stop)
	// Handlers end with life; runs in flight stop their scripts before the
	// broker closes and the setup files are removed.
	stop()
	runs.close()
	if ctx.Err() == nil && serving.Err() != nil {
		return context.Cause(serving)
	}
	if ctx.Err() != nil || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// ensure reads (or starts) the route's tmux server. When what it finds
// cannot change the selection (see tmux.Route.MayStartMinimal) and
// tmux_run, which needs the server's identity to start, is off, it runs
// in the background while the client's handshake goes on; otherwise it
// runs first and the selection is made for the provenance it found.
func ensure(ctx context.Context, cfg config.Config, client *tmux.Client, sel mcpserver.Selection) (*tmux.PendingStartup, mcpserver.Selection, error) {
	want := tmux.Want{Panes: len(cfg.EnrollPanes) > 0}
	early := cfg.Toolsets != nil || !cfg.Route.MayStartMinimal()
	if early && !usesBroker(sel) {
		return client.EnsureLater(ctx, want), sel, nil
	}
	startup, err := client.Ensure(ctx, want)
	if err != nil {
		return nil, sel, err
	}
	sel, err = mcpserver.Select(startup.Provenance, cfg.Toolsets, cfg.EnableTools, cfg.ExcludeTools)
	return tmux.Known(startup), sel, err
}

// drainTimeout bounds how long a shutdown waits for in-flight calls to be
// answered after their handlers were told to stop.
const drainTimeout = 5 * time.Second

// answerAwaiter is a transport that knows which calls it read are still
// unanswered (internal/stdio): the transport is the one owner of that
// count, at stdin EOF and at shutdown alike.
type answerAwaiter interface {
	AwaitAnswers(ctx context.Context) error
}

// newLogger is the one stderr logger of the process, at the configured level.
func newLogger(w io.Writer, cfg config.Config) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: cfg.LogLevel}))
}

// serveSession serves t until the client goes away or ctx ends. When ctx
// ends, the handlers are stopped first (stopHandlers: a wait answers
// cancelled) and the session is closed once the transport has written
// their answers: go-sdk writes nothing after its session starts closing.
func serveSession(ctx context.Context, srv *mcp.Server, t mcp.Transport, stopHandlers func()) error {
	ss, err := srv.Connect(context.WithoutCancel(ctx), t, nil)
	if err != nil {
		return err
	}
	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()
	select {
	case err := <-ended:
		return err
	case <-ctx.Done():
		stopHandlers()
		if aw, ok := t.(answerAwaiter); ok {
			wctx, cancel := context.WithTimeout(context.Background(), drainTimeout)
			aw.AwaitAnswers(wctx)
			cancel()
		}
		ss.Close()
		<-ended
		return ctx.Err()
	}
}

// startupLine is the one line that says what this process serves.
func startupLine(cfg config.Config, st tmux.Startup, sel mcpserver.Selection) string {
	list := func(xs []string) string {
		if len(xs) == 0 {
			return "none"
		}
		return strings.Join(xs, ",")
	}
	return fmt.Sprintf("libtmux-mcp %s serving %s %s (tmux %s), toolsets %s, %d named inclusions (%s), %d exclusions (%s)",
		cfg.Version, st.Provenance.State, cfg.Route.Socket(), st.Version.Text, list(sel.Toolsets),
		len(sel.Enabled), list(sel.Enabled), len(sel.Excluded), list(sel.Excluded))
}

// usesBroker reports whether sel has a tool that runs in enrolled shells, and so needs the
// tmux_run broker.
func usesBroker(sel mcpserver.Selection) bool {
	return sel.Has("tmux_run") || sel.Has("tmux_run_start")
}
