// Package config resolves libtmux-mcp's configuration from command-line
// flags and the environment: one Config, every value checked, every
// refusal one line that names the fix. It contacts nothing; what tmux says
// is for the program that uses the Config.
//
// Config knows no component's defaults. A setting the operator did not give
// stays zero, and zero means "the component's default": each component
// (mcpserver.Limits, broker.Limits, httpserve.Limits, stdio.Transport,
// enroll.NewRegistry, tmux.NewClient) fills its own zero values in one
// place, so an embedder that builds a component without this package gets
// the same defaults. What this package does own is the check of what an
// operator may ask for: the ceilings and floors below, the names, the
// routes. The defaults the --help text names are checked against the
// components' constants by cmd/libtmux-mcp's tests, the one place that
// sees both.
//
// The settings are grouped per component, each group with exactly the
// fields of that component's limits type, so main hands a group over with
// a conversion (mcpserver.Limits(cfg.Server)) instead of copying fields,
// and the compiler checks the two stay the same shape. That keeps this
// package free of the server's packages: it imports tmux (routes), enroll
// (the pane cap) and loopback (the --http check), none of mcpserver,
// broker, httpserve or frame.
package config

import (
	"log/slog"
	"time"

	"github.com/libtmux/libtmux-mcp/tmux"
)

// Ceilings and floors of what an operator may set. The defaults are the
// components' own (see the package doc).
const (
	MaxWaitMax       = 120 * time.Second // LIBTMUX_MCP_WAIT_MAX_MS
	MaxEnrollTimeout = 300 * time.Second // --enrollment-timeout
	MinMaxFrame      = 4096              // LIBTMUX_MCP_MAX_FRAME_BYTES: initialize must fit
	MaxMaxFrame      = 64 << 20          // LIBTMUX_MCP_MAX_FRAME_BYTES
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
	CommandTimeout time.Duration // each internal tmux call; 0 is tmux.NewClient's default

	// Toolsets selects the toolsets; nil means the default for the
	// server's provenance. An empty non-nil slice selects none.
	Toolsets     []string
	EnableTools  []string // added after the toolsets
	ExcludeTools []string // removed last

	// Server is mcpserver.Limits, field for field.
	Server ServerLimits
	// Broker is broker.Limits, field for field (tmux_run).
	Broker BrokerLimits
	// Transport is httpserve.Limits, field for field; stdio takes its
	// MaxFrame.
	Transport TransportLimits

	// Enrollment (tmux_run).
	EnrollPanes   []EnrollPane
	EnrollTimeout time.Duration // --enrollment-timeout; 0 is enroll's default
	Helper        string        // absolute path of libtmux-mcp-helper

	// Caller identifies the pane this process runs in, from TMUX and
	// TMUX_PANE; empty when not inside tmux.
	CallerTMUX string
	CallerPane string

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

// ServerLimits are the settings of mcpserver.Limits (see there for each
// field's default).
type ServerLimits struct {
	MaxResultLines int           // LIBTMUX_MCP_MAX_RESULT_LINES
	MaxResultChars int           // no flag or variable
	WaitMax        time.Duration // LIBTMUX_MCP_WAIT_MAX_MS, at most MaxWaitMax
	NoLive         bool          // LIBTMUX_MCP_LIVE=0
	Attended       string        // LIBTMUX_MCP_ATTENDED: typing, watched or ignore
	MaxBlocking    int           // LIBTMUX_MCP_MAX_BLOCKING
	ViewKeep       time.Duration // no flag or variable
}

// BrokerLimits are the settings of broker.Limits.
type BrokerLimits struct {
	ShellAnswer time.Duration // LIBTMUX_MCP_SHELL_ANSWER_MS
	RunTimeout  time.Duration // --run-timeout, LIBTMUX_MCP_RUN_TIMEOUT
	// BackgroundTimeout: --background-timeout, LIBTMUX_MCP_BACKGROUND_TIMEOUT.
	BackgroundTimeout time.Duration
	MaxBackground     int // LIBTMUX_MCP_MAX_BACKGROUND_RUNS
	BackgroundOutput  int // LIBTMUX_MCP_BACKGROUND_OUTPUT_BYTES, per stream
}

// TransportLimits are the settings of httpserve.Limits; MaxFrame bounds one
// inbound JSON-RPC frame in bytes, on stdio and HTTP alike, checked before
// it is decoded.
type TransportLimits struct {
	MaxFrame    int           // LIBTMUX_MCP_MAX_FRAME_BYTES, from MinMaxFrame to MaxMaxFrame
	SessionIdle time.Duration // LIBTMUX_MCP_HTTP_SESSION_IDLE_MS
	MaxSessions int           // LIBTMUX_MCP_HTTP_MAX_SESSIONS
}
