package tmux

import (
	"context"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/uuid"
	"lukechampine.com/blake3"
)

//go:embed minimal.conf
var minimalConfig []byte

// markerOption is the user option holding the provenance marker of a server
// this program started.
const markerOption = "@libtmux_mcp_marker"

// State says who started the server.
type State string

// Config says which configuration the server started with.
type Config string

const (
	// StateNew: this process started the server and read its marker back.
	StateNew State = "new"
	// StateExisting: the server was running already, or another process
	// won the race to start it.
	StateExisting State = "existing"

	// ConfigMinimal: a new server on the shipped minimal configuration.
	ConfigMinimal Config = "minimal"
	// ConfigOther: any other configuration, or an existing server.
	ConfigOther Config = "other"
)

// Provenance says where the server came from: State is new only for the
// process that started it and read its own marker back; Config is minimal
// only for a new server on the shipped configuration.
type Provenance struct {
	State  State  `json:"state"`
	Config Config `json:"config"`
}

// Full reports whether the server is one this process started on the
// shipped configuration, the one provenance that earns every toolset.
func (p Provenance) Full() bool { return p.State == StateNew && p.Config == ConfigMinimal }

// ServerInfo identifies a running server.
type ServerInfo struct {
	PID         int
	StartTime   int
	SocketPath  string
	Generation  string
	VersionText string // #{version}, as the server reports it
}

// Info reads the server's identity in one call. The generation changes
// whenever the server is restarted on the same socket.
func (c *Client) Info(ctx context.Context) (ServerInfo, error) {
	snap, err := c.Snapshot(ctx, Want{})
	return snap.Server, err
}

// Generation derives the opaque server generation from the server's pid,
// start time and socket path: 32 hex digits.
func Generation(pid, startTime int, socketPath string) string {
	sum := blake3.Sum256([]byte(fmt.Sprintf("tmux-server\x00%d\x00%d\x00%s", pid, startTime, socketPath)))
	return hex.EncodeToString(sum[:16])
}

// Startup is what Ensure learned about the server.
type Startup struct {
	Provenance Provenance
	Version    Version
	Snapshot   Snapshot // the identity and the rows asked for
}

// Ensure connects to the route's server, starting one when none runs, and
// reports its provenance, its version and a snapshot of what want asks
// for. A running server costs one tmux process; starting one costs two. A
// server started on the default socket gets the shipped minimal
// configuration unless route.Config names another; a server started on an
// explicit socket follows tmux's own configuration rules (or
// route.Config). Either way the new server is told exit-empty off so it
// outlives having no sessions. A tmux older than MinVersion is refused.
func (c *Client) Ensure(ctx context.Context, want Want) (Startup, error) {
	seps := NewSeparators()
	args, err := snapshotArgs(want, seps)
	if err != nil {
		return Startup{}, err
	}
	out, runErr := c.Run(ctx, args...)
	snap, _, err := snapshotResult(out, runErr, seps)
	prov := Provenance{State: StateExisting, Config: ConfigOther}
	if errors.Is(err, ErrNoServer) {
		prov, snap, err = c.start(ctx, args, seps)
	}
	if err != nil {
		return Startup{}, err
	}
	v, err := c.serverVersion(ctx, snap.Server)
	if err != nil {
		return Startup{}, err
	}
	return Startup{Provenance: prov, Version: v, Snapshot: snap}, nil
}

// serverVersion reads the version the server reported, or asks tmux -V
// when the server is too old to report one.
func (c *Client) serverVersion(ctx context.Context, info ServerInfo) (Version, error) {
	if info.VersionText == "" {
		return c.DetectVersion(ctx)
	}
	return checkVersion(info.VersionText)
}

// start starts the server with a provenance marker and, in the same
// invocation, reads the marker back and runs the snapshot commands.
func (c *Client) start(ctx context.Context, snapshot []string, seps Separators) (Provenance, Snapshot, error) {
	if c.route.SocketPath != "" {
		if err := os.MkdirAll(filepath.Dir(c.route.SocketPath), 0o700); err != nil {
			return Provenance{}, Snapshot{}, fmt.Errorf("create the socket's directory: %w", err)
		}
	}
	marker := uuid.NewString()
	config, minimal := c.route.Config, false
	if c.route.MayStartMinimal() {
		dir, err := os.MkdirTemp("", "libtmux-mcp-conf-")
		if err != nil {
			return Provenance{}, Snapshot{}, err
		}
		defer os.RemoveAll(dir)
		config = filepath.Join(dir, "minimal.conf")
		if err := os.WriteFile(config, minimalConfig, 0o600); err != nil {
			return Provenance{}, Snapshot{}, err
		}
		minimal = true
	}
	// The marker is written only where none exists, in the same queue step
	// as the test, so a second process racing to start the server reads the
	// first one's marker and knows it did not start it.
	args := []string{"start-server", ";", "if-shell", "-F", "#{" + markerOption + "}", "",
		"set -g " + markerOption + " " + marker + " ; set -s exit-empty off",
		";", "display-message", "-p", "M" + seps.Field + "#{" + markerOption + "}" + seps.Record, ";"}
	args = append(args, snapshot...)
	var out string
	var err error
	if config != "" {
		out, err = c.RunConfig(ctx, config, args...)
	} else {
		out, err = c.Run(ctx, args...)
	}
	snap, extra, err := snapshotResult(out, err, seps)
	if err != nil {
		return Provenance{}, Snapshot{}, fmt.Errorf("start the tmux server: %w", err)
	}
	if strings.TrimSpace(extra["M"]) != marker {
		return Provenance{State: StateExisting, Config: ConfigOther}, snap, nil
	}
	p := Provenance{State: StateNew, Config: ConfigOther}
	if minimal {
		p.Config = ConfigMinimal
	}
	return p, snap, nil
}
