// Package config resolves libtmux-mcp's configuration from command-line
// flags and the environment: one Config, every value checked, every
// refusal one line that names the fix. It contacts nothing; what tmux says
// is for the program that uses the Config.
package config

import (
	"log/slog"
	"time"

	"github.com/libtmux/libtmux-mcp/broker"
	"github.com/libtmux/libtmux-mcp/internal/frame"
	"github.com/libtmux/libtmux-mcp/internal/httpserve"
	"github.com/libtmux/libtmux-mcp/mcpserver"
	"github.com/libtmux/libtmux-mcp/tmux"
)

// Defaults and ceilings of the configuration. The read and wait defaults
// are the MCP surface's own, so an embedder of mcpserver gets the same.
const (
	DefaultWaitMax        = mcpserver.DefaultWaitMax
	MaxWaitMax            = 120 * time.Second
	DefaultMaxResultLines = mcpserver.DefaultMaxResultLines
	DefaultMaxResultChars = mcpserver.DefaultMaxResultChars
	DefaultRunTimeout     = broker.DefaultRunTimeout
	DefaultEnrollTimeout  = 60 * time.Second
	MaxEnrollTimeout      = 300 * time.Second
	DefaultMaxFrame       = frame.DefaultMax
	MaxMaxFrame           = 64 << 20
	DefaultMaxBlocking    = mcpserver.DefaultMaxBlocking
	DefaultSessionIdle    = httpserve.DefaultSessionIdle
	DefaultMaxSessions    = httpserve.DefaultMaxSessions
	DefaultShellAnswer    = broker.DefaultShellAnswer
)

// SecretVariables are the variables the README marks secret: this process never passes them to
// tmux, so a tmux server it starts does not copy them into its global environment (and every
// pane's).
var SecretVariables = []string{"LIBTMUX_MCP_HTTP_TOKEN"}

// Config is everything the program needs, resolved from flags and
// environment by Load.
type Config struct {
	Version string

	Route          tmux.Route
	CommandTimeout time.Duration // each internal tmux call

	// Toolsets selects the toolsets; nil means the default for the
	// server's provenance. An empty non-nil slice selects none.
	Toolsets     []string
	EnableTools  []string // added after the toolsets
	ExcludeTools []string // removed last

	MaxResultLines int
	MaxResultChars int
	WaitMax        time.Duration
	Live           bool   // control-mode connections allowed
	Attended       string // typing, watched or ignore

	// Enrollment (tmux_run).
	EnrollPanes   []EnrollPane
	EnrollTimeout time.Duration
	RunTimeout    time.Duration
	Helper        string // absolute path of libtmux-mcp-helper
	ShellAnswer   time.Duration

	// Caller identifies the pane this process runs in, from TMUX and
	// TMUX_PANE; empty when not inside tmux.
	CallerTMUX string
	CallerPane string

	// MaxFrame bounds one inbound JSON-RPC frame in bytes, on stdio and
	// HTTP alike, checked before it is decoded.
	MaxFrame int
	// MaxBlocking caps the blocking calls (waits, runs) in flight.
	MaxBlocking int
	// SessionIdle is how long an HTTP session may go without a request
	// before it is closed; MaxSessions caps the live HTTP sessions.
	SessionIdle time.Duration
	MaxSessions int

	LogLevel slog.Level
	HTTPAddr string // --http: a loopback HOST:PORT; empty serves stdio
	// HTTPToken is LIBTMUX_MCP_HTTP_TOKEN; empty has one generated.
	HTTPToken string
}

// EnrollPane is one --enroll-pane %ID[=FILE].
type EnrollPane struct {
	Pane string
	File string // absolute; empty puts the invitation in the broker's private directory
}

// WithDefaults fills zero values with the documented defaults.
func (c Config) WithDefaults() Config {
	if c.CommandTimeout <= 0 {
		c.CommandTimeout = tmux.DefaultTimeout
	}
	if c.MaxResultLines <= 0 {
		c.MaxResultLines = DefaultMaxResultLines
	}
	if c.MaxResultChars <= 0 {
		c.MaxResultChars = DefaultMaxResultChars
	}
	if c.WaitMax <= 0 {
		c.WaitMax = DefaultWaitMax
	}
	if c.Attended == "" {
		c.Attended = "typing"
	}
	if c.EnrollTimeout <= 0 {
		c.EnrollTimeout = DefaultEnrollTimeout
	}
	if c.RunTimeout <= 0 {
		c.RunTimeout = DefaultRunTimeout
	}
	if c.ShellAnswer <= 0 {
		c.ShellAnswer = DefaultShellAnswer
	}
	if c.MaxFrame <= 0 {
		c.MaxFrame = DefaultMaxFrame
	}
	if c.MaxBlocking <= 0 {
		c.MaxBlocking = DefaultMaxBlocking
	}
	if c.SessionIdle <= 0 {
		c.SessionIdle = DefaultSessionIdle
	}
	if c.MaxSessions <= 0 {
		c.MaxSessions = DefaultMaxSessions
	}
	return c
}
