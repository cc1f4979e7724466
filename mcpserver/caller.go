package mcpserver

import (
	"path/filepath"
	"strconv"
	"strings"

	"github.com/libtmux/libtmux-mcp/tmux"
)

// caller is the pane this process runs in, when that can be proven: TMUX
// names the same socket (both paths resolved) and the same server pid, and
// TMUX_PANE names the pane.
type caller struct {
	pane      string
	serverPID int
}

func newCaller(tmuxEnv, pane string, info tmux.ServerInfo) caller {
	parts := strings.Split(tmuxEnv, ",")
	if len(parts) < 2 || !tmux.ValidPaneID(pane) {
		return caller{}
	}
	pid, err := strconv.Atoi(parts[1])
	if err != nil || !samePath(parts[0], info.SocketPath) {
		return caller{}
	}
	return caller{pane: pane, serverPID: pid}
}

// is reports whether paneID on the server with pid serverPID is the caller.
func (c caller) is(paneID string, serverPID int) bool {
	return c.pane != "" && c.pane == paneID && c.serverPID == serverPID
}

func samePath(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}
