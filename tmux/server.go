package tmux

import (
	"context"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"lukechampine.com/blake3"
)

//go:embed minimal.conf
var minimalConfig []byte

// markerOption is the user option holding the provenance marker of a server
// this program started.
const markerOption = "@libtmux_mcp_marker"

// Provenance says where the server came from: State is "new" only for the
// process that started it and read its own marker back, else "existing";
// Config is "minimal" only for a new server on the shipped configuration.
type Provenance struct {
	State  string `json:"state"`
	Config string `json:"config"`
}

// ServerInfo identifies a running server.
type ServerInfo struct {
	PID        int
	StartTime  int
	SocketPath string
	Generation string
}

// Info reads the server's identity in one call. The generation changes
// whenever the server is restarted on the same socket.
func (c *Client) Info(ctx context.Context) (ServerInfo, error) {
	out, err := c.Run(ctx, "display-message", "-p", "#{pid} #{start_time} #{socket_path}")
	if err != nil {
		return ServerInfo{}, err
	}
	parts := strings.SplitN(strings.TrimSuffix(out, "\n"), " ", 3)
	if len(parts) != 3 {
		return ServerInfo{}, fmt.Errorf("unexpected server identity %q", out)
	}
	pid, err1 := strconv.Atoi(parts[0])
	start, err2 := strconv.Atoi(parts[1])
	if err := errors.Join(err1, err2); err != nil {
		return ServerInfo{}, fmt.Errorf("unexpected server identity %q: %w", out, err)
	}
	return ServerInfo{PID: pid, StartTime: start, SocketPath: parts[2], Generation: Generation(pid, start, parts[2])}, nil
}

// Generation derives the opaque server generation from the server's pid,
// start time and socket path: 32 hex digits.
func Generation(pid, startTime int, socketPath string) string {
	sum := blake3.Sum256([]byte(fmt.Sprintf("tmux-server\x00%d\x00%d\x00%s", pid, startTime, socketPath)))
	return hex.EncodeToString(sum[:16])
}

// Ensure connects to the route's server, starting one when none runs, and
// reports its provenance and identity. A server started on the default
// socket gets the shipped minimal configuration unless route.Config names
// another; a server started on an explicit socket follows tmux's own
// configuration rules (or route.Config). Either way the new server is told
// exit-empty off so it outlives having no sessions.
func (c *Client) Ensure(ctx context.Context) (Provenance, ServerInfo, error) {
	info, err := c.Info(ctx)
	if err == nil {
		return Provenance{State: "existing", Config: "other"}, info, nil
	}
	if !errors.Is(err, ErrNoServer) {
		return Provenance{}, ServerInfo{}, err
	}
	prov, err := c.start(ctx)
	if err != nil {
		return Provenance{}, ServerInfo{}, err
	}
	info, err = c.Info(ctx)
	return prov, info, err
}

// start starts the server with a provenance marker and reads it back.
func (c *Client) start(ctx context.Context) (Provenance, error) {
	if c.route.SocketPath != "" {
		if err := os.MkdirAll(filepath.Dir(c.route.SocketPath), 0o700); err != nil {
			return Provenance{}, fmt.Errorf("create the socket's directory: %w", err)
		}
	}
	marker := uuid.NewString()
	config, minimal := c.route.Config, false
	if config == "" && !c.route.Explicit() {
		dir, err := os.MkdirTemp("", "libtmux-mcp-conf-")
		if err != nil {
			return Provenance{}, err
		}
		defer os.RemoveAll(dir)
		config = filepath.Join(dir, "minimal.conf")
		if err := os.WriteFile(config, minimalConfig, 0o600); err != nil {
			return Provenance{}, err
		}
		minimal = true
	}
	// The marker is written only where none exists, in the same queue step
	// as the test, so a second process racing to start the server reads the
	// first one's marker and knows it did not start it.
	args := []string{"start-server", ";", "if-shell", "-F", "#{" + markerOption + "}", "",
		"set -g " + markerOption + " " + marker + " ; set -s exit-empty off"}
	var err error
	if config != "" {
		_, err = c.RunConfig(ctx, config, args...)
	} else {
		_, err = c.Run(ctx, args...)
	}
	if err != nil {
		return Provenance{}, fmt.Errorf("start the tmux server: %w", err)
	}
	got, err := c.Run(ctx, "show-options", "-gqv", markerOption)
	if err != nil {
		return Provenance{}, fmt.Errorf("read the provenance marker back: %w", err)
	}
	if strings.TrimSpace(got) != marker {
		return Provenance{State: "existing", Config: "other"}, nil
	}
	p := Provenance{State: "new", Config: "other"}
	if minimal {
		p.Config = "minimal"
	}
	return p, nil
}
