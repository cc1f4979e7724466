package mcpserver

import "github.com/libtmux/libtmux-mcp/tmux"

// caller is the pane this process runs in, when that can be proven: TMUX
// names the same socket (both paths resolved) and the same server pid, and
// TMUX_PANE names the pane.
type caller struct {
	pane      string
	serverPID int
}

func newCaller(tmuxEnv, pane string, info tmux.ServerInfo) caller {
	env, ok := tmux.ParseTMUX(tmuxEnv)
	if !ok || !tmux.ValidPaneID(pane) || !tmux.SamePath(env.Socket, info.SocketPath) {
		return caller{}
	}
	return caller{pane: pane, serverPID: env.ServerPID}
}

// is reports whether paneID on the server with pid serverPID is the caller.
func (c caller) is(paneID string, serverPID int) bool {
	return c.pane != "" && c.pane == paneID && c.serverPID == serverPID
}
