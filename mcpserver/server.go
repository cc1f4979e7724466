package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"github.com/libtmux/libtmux-mcp/internal/panerecord"
	"log/slog"
	"sync"
	"time"

	"github.com/libtmux/libtmux-mcp/enroll"
	"github.com/libtmux/libtmux-mcp/internal/shellrun"
	"github.com/libtmux/libtmux-mcp/live"
	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults of the read and wait limits, used where Limits leaves a zero
// (see Limits.withDefaults, the one place they are filled).
const (
	DefaultMaxResultLines = 200
	DefaultMaxResultChars = 65536
	DefaultWaitMax        = 30 * time.Second
)

// Deps are the pieces a server is built from. The caller builds them in
// order (cmd/libtmux-mcp shows how), keeps ownership of each and closes
// them after the server stops; New contacts nothing.
type Deps struct {
	// Version is this program's version, reported to clients.
	Version string
	// Tmux is the client pinned to the server the tools act on.
	Tmux *tmux.Client
	// Startup is what tmux.Client.Ensure learned: provenance, version and
	// the server's identity.
	Startup tmux.Startup
	// Pending, when set, replaces Startup: an Ensure still running while
	// the client's handshake goes on. Tool calls and resource reads wait
	// for it; if it fails they answer its error.
	Pending *tmux.PendingStartup
	// Selection is the frozen tool surface (see Select).
	Selection Selection
	// Limits bound reads and waits.
	Limits Limits
	// CallerTMUX and CallerPane are this process's TMUX and TMUX_PANE,
	// empty when it does not run inside tmux (or serves remote clients).
	CallerTMUX, CallerPane string
	// Enrollments reports tmux_run enrollment states; nil when tmux_run is
	// off. *enroll.Registry is the implementation.
	Enrollments Enrollments
	// Runner runs tmux_run requests; nil when tmux_run is off.
	Runner Runner
	// Live shares control-mode connections between waits. When nil and
	// Limits.NoLive is not set, New makes one and closes it when its ctx
	// ends; a caller that passes its own closes it.
	Live *live.Pool
	// Log receives the server's log lines; discarded when nil.
	Log *slog.Logger
}

// Limits bound what one call reads and how long it waits. The zero value
// is the default server: every limit at its default and control mode on.
type Limits struct {
	MaxResultLines int           // lines per read; DefaultMaxResultLines when 0
	MaxResultChars int           // code points per read; DefaultMaxResultChars when 0
	WaitMax        time.Duration // wait ceiling; DefaultWaitMax when 0
	// NoLive forbids control-mode connections: waits poll, and
	// capture_since and run_shell_command take their fallback paths
	// (LIBTMUX_MCP_LIVE=0). Zero keeps the live views on.
	NoLive      bool
	Attended    string // typing (when empty), watched or ignore
	MaxBlocking int    // blocking calls in flight; DefaultMaxBlocking when 0
	// ViewKeep is how long a pane's lines are counted after the last
	// capture_since, run_shell_command or wait_for_text for it;
	// DefaultViewKeep when 0.
	ViewKeep time.Duration
}

// Enrollments reports a pane's tmux_run enrollment, and is told of input this server sends
// (an enrollment from a pane that received it after its invitation is refused).
type Enrollments interface {
	Lookup(pane string) (*enroll.Enrollment, string)
	// Invites reports whether pane was named with --enroll-pane.
	Invites(pane string) bool
	InputBegins(panes ...string) (end func())
}

// server holds what every tool handler shares.
type server struct {
	deps Deps
	mcp  *mcp.Server
	tmux *tmux.Client
	sel  Selection
	// startup, prov and caller are set once the server's identity is
	// known, before ready closes; handlers run after (see awaitStartup).
	startup     tmux.Startup
	prov        tmux.Provenance
	caller      caller
	ready       chan struct{}
	startErr    error
	life        context.Context // ends at shutdown; handlers end with it
	log         *slog.Logger
	records     panerecord.Opener // the tmux server's pane claims and input records (paneRecords)
	recordsWarn sync.Once
	budget      budget
	runner      Runner
	live        *live.Pool // nil when control mode is forbidden
	// blocking holds a token per blocking call in flight (see callGate).
	blocking chan struct{}
	// shell is run_shell_command's engine; it also keeps what input
	// tools typed into panes (for wait_for_text and for its own refusals).
	shell *shellrun.Engine
}

// New returns the MCP server for d, with the selected tools registered. It
// contacts nothing. Handlers end when ctx ends (go-sdk does not end them
// when its Run returns), so cancel ctx to stop a server's work. The same
// *mcp.Server can be served over stdio or Streamable HTTP.
func New(ctx context.Context, d Deps) *mcp.Server {
	d.Limits = d.Limits.withDefaults()
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	s := &server{
		deps:   d,
		tmux:   d.Tmux,
		sel:    d.Selection.frozen(),
		ready:  make(chan struct{}),
		life:   ctx,
		log:    d.Log,
		budget: budget{Lines: d.Limits.MaxResultLines, Chars: d.Limits.MaxResultChars},
		runner: d.Runner,
		live:   d.Live,

		blocking: make(chan struct{}, d.Limits.MaxBlocking),
	}
	switch {
	case d.Limits.NoLive:
		s.live = nil
	case s.live == nil && d.Tmux != nil:
		s.live = NewLivePool(d.Tmux)
		context.AfterFunc(ctx, s.live.Close)
	}
	s.shell = shellrun.New(shellrun.Deps{Host: shellHost{s}, Tmux: d.Tmux, Live: s.live, Life: ctx, Log: d.Log,
		Budget: s.budget, ViewKeep: s.viewKeep(), Attended: d.Limits.Attended})
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "libtmux-mcp", Title: "tmux for agents", Version: d.Version}, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       d.Log,
	})
	s.awaitPending(ctx, d)
	s.mcp.AddReceivingMiddleware(s.awaitStartup, s.callGate)
	s.addTools()
	s.addCapabilities()
	return s.mcp
}

// LiveIdle is how long a control-mode connection stays open without waits.
const LiveIdle = time.Second

// NewLivePool returns the pool of control-mode connections that waits on
// c's server share (see package live).
func NewLivePool(c *tmux.Client) *live.Pool {
	return live.New(func(ctx context.Context, session string, output func(pane string, data []byte)) (live.Conn, error) {
		ctl, err := c.ControlWithOutput(ctx, session, output)
		if errors.Is(err, tmux.ErrNotFound) {
			return nil, fmt.Errorf("%w; call list_panes for what exists", err)
		}
		if err != nil {
			return nil, err
		}
		return ctl, nil
	}, LiveIdle)
}

// withDefaults fills the zero limits with their defaults: the one place
// they are filled (ViewKeep is read in view.go, DefaultViewKeep when 0).
func (l Limits) withDefaults() Limits {
	if l.MaxResultLines <= 0 {
		l.MaxResultLines = DefaultMaxResultLines
	}
	if l.MaxResultChars <= 0 {
		l.MaxResultChars = DefaultMaxResultChars
	}
	if l.WaitMax <= 0 {
		l.WaitMax = DefaultWaitMax
	}
	if l.Attended == "" {
		l.Attended = "typing"
	}
	if l.MaxBlocking <= 0 {
		l.MaxBlocking = DefaultMaxBlocking
	}
	return l
}

// enrollmentState reports the tmux_run enrollment state of a pane of the server generation gen.
// Invitations and enrollments belong to the server this process started with: a pane of
// another generation (the server was restarted on the same socket, and pane ids start again
// at %0) is never invited or enrolled.
func (s *server) enrollmentState(paneID, gen string) string {
	if s.deps.Enrollments == nil || gen != s.startup.Snapshot.Server.Generation {
		return enroll.StateNone
	}
	_, state := s.deps.Enrollments.Lookup(paneID)
	return state
}

const instructions = `Tools for a real tmux server. Targets are ids: $1 sessions, @2 windows, %3 panes. Find panes with list_panes; read them with capture_pane, follow them with capture_since. Every answer is a JSON object, with a note field where a fact needs words; errors name the next step. ` +
	`force is the id of the pane this server runs in (list_panes marks it caller), given to act on that pane. timeoutMs, omitted or over the ceiling, is the ceiling; answers report effectiveTimeoutMs.`
