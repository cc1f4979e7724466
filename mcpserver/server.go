package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// server holds what every tool handler shares.
type server struct {
	cfg        Config
	mcp        *mcp.Server
	tmux       *tmux.Client
	version    tmux.Version
	prov       tmux.Provenance
	info       tmux.ServerInfo // the server as it was at startup
	sel        Selection
	caller     caller
	life       context.Context // ends at shutdown; handlers end with it
	log        *slog.Logger
	budget     budget
	registered map[string]Capability
	enroll     *enrollment // tmux_run machinery, when enabled
	runner     Runner      // runs tmux_run requests
	stop       context.CancelFunc
}

// New returns the MCP server for cfg: it checks the configuration, connects
// to tmux (starting the server when none runs) and registers the selected
// tools. Handlers end when ctx ends. Run it with (*mcp.Server).Run.
func New(ctx context.Context, cfg Config) (*mcp.Server, error) {
	notice := cfg.Notice
	if notice == nil {
		notice = os.Stderr
	}
	s, err := build(ctx, cfg, slog.New(slog.DiscardHandler), notice)
	if err != nil {
		return nil, err
	}
	context.AfterFunc(s.life, s.enroll.close)
	return s.mcp, nil
}

// Serve builds the server for cfg, prints the startup line on stderr and
// serves t until the client goes away (stdin EOF) or ctx ends, which are
// both a clean stop. Stdout carries nothing but the protocol.
func Serve(ctx context.Context, cfg Config, t mcp.Transport, stderr io.Writer) error {
	return ServeWith(ctx, cfg, stderr, func(ctx context.Context, srv *mcp.Server) error { return srv.Run(ctx, t) })
}

// ServeWith is Serve with the serving left to run, which returns when the
// clients are gone or ctx ends (Streamable HTTP serves this way).
func ServeWith(ctx context.Context, cfg Config, stderr io.Writer, run func(context.Context, *mcp.Server) error) error {
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	s, err := build(ctx, cfg, log, stderr)
	if err != nil {
		return err
	}
	defer s.stop()
	fmt.Fprintln(stderr, s.startupLine())
	s.reinviteOnHUP(s.life, stderr)
	err = run(ctx, s.mcp)
	// Handlers end with the server's life; runs in flight stop their
	// scripts before the broker closes and the setup files are removed.
	s.stop()
	s.enroll.close()
	if ctx.Err() != nil || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

func build(ctx context.Context, cfg Config, log *slog.Logger, notice io.Writer) (*server, error) {
	cfg = cfg.withDefaults()
	// Names are checked before tmux is contacted.
	if _, err := Select(tmux.Provenance{}, cfg.Toolsets, cfg.EnableTools, cfg.ExcludeTools); err != nil {
		return nil, err
	}
	client, err := tmux.NewClient(cfg.Route, cfg.CommandTimeout)
	if err != nil {
		return nil, err
	}
	version, err := client.DetectVersion(ctx)
	if err != nil {
		return nil, err
	}
	prov, info, err := client.Ensure(ctx)
	if err != nil {
		return nil, err
	}
	sel, err := Select(prov, cfg.Toolsets, cfg.EnableTools, cfg.ExcludeTools)
	if err != nil {
		return nil, err
	}
	life, stop := context.WithCancel(ctx)
	s := &server{
		cfg:        cfg,
		tmux:       client,
		version:    version,
		prov:       prov,
		sel:        sel,
		info:       info,
		caller:     newCaller(cfg.CallerTMUX, cfg.CallerPane, info),
		life:       life,
		stop:       stop,
		log:        log,
		budget:     budget{lines: cfg.MaxResultLines, chars: cfg.MaxResultChars},
		registered: map[string]Capability{},
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "libtmux-mcp", Title: "tmux for agents", Version: cfg.Version}, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       log,
	})
	s.addTools()
	if sel.Has("tmux_run") {
		if err := s.startEnrollment(ctx, notice); err != nil {
			stop()
			return nil, err
		}
	}
	return s, nil
}

// addTools registers every tool of the catalog; addTool skips those the
// selection leaves out.
func (s *server) addTools() {
	s.addInspectTools()
	s.addOptInTools()
	for name := range catalog {
		if _, ok := s.registered[name]; !ok {
			panic(fmt.Sprintf("mcpserver: catalog tool %q has no registration", name))
		}
	}
}

func (s *server) startupLine() string {
	list := func(xs []string) string {
		if len(xs) == 0 {
			return "none"
		}
		return strings.Join(xs, ",")
	}
	return fmt.Sprintf("libtmux-mcp %s serving %s %s (tmux %s), toolsets %s, %d named inclusions (%s), %d exclusions (%s)",
		s.cfg.Version, s.prov.State, s.tmux.Route().Socket(), s.version.Text, list(s.sel.Toolsets),
		len(s.sel.Enabled), list(s.sel.Enabled), len(s.sel.Excluded), list(s.sel.Excluded))
}

const instructions = `Tools for a real tmux server. Find panes with list_panes (ids like %3); read them with capture_pane. Every answer is a JSON object; errors name the next step.`
