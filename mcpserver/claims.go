package mcpserver

import (
	"sync"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/paneclaim"
)

// claims is the pane claims of the tmux server this process serves, which
// every libtmux-mcp process on it sees (package paneclaim), opened on first
// use: handlers run once the server is known.
type claims struct {
	once sync.Once
	set  *paneclaim.Set
}

// claimSet is the tmux server's pane claims; nil when this process keeps
// its claims to itself (the claims directory could not be used).
func (s *server) claimSet() *paneclaim.Set {
	s.claims.once.Do(func() {
		srv := s.startup.Snapshot.Server
		set, err := paneclaim.For(srv.SocketPath, srv.PID)
		if err != nil {
			s.log.Warn("pane claims are kept by this process alone: other libtmux-mcp processes on this tmux server cannot see them", "err", err)
			return
		}
		s.claims.set = set
	})
	return s.claims.set
}

// paneClaim is a pane's claim as list_panes and get_pane_info show it.
type paneClaim struct {
	PID         int    `json:"pid" jsonschema:"the libtmux-mcp process holding the pane"`
	ThisProcess bool   `json:"thisProcess"`
	Since       string `json:"since" jsonschema:"RFC 3339"`
	Tool        string `json:"tool" jsonschema:"run_shell_command or tmux_run"`
	Command     string `json:"command" jsonschema:"first line, shortened"`
	Handle      string `json:"handle,omitempty"`
}

// claimOf reads pane's claim on the tmux server serverPID; nil when no live
// process holds it.
func (s *server) claimOf(pane string, serverPID int) *paneClaim {
	set := s.claimSet()
	if set == nil || serverPID != s.startup.Snapshot.Server.PID {
		return nil
	}
	h, ok := set.Holder(pane)
	if !ok {
		return nil
	}
	return &paneClaim{PID: h.PID, ThisProcess: h.Mine(), Since: h.Since.UTC().Format(time.RFC3339), Tool: h.Tool, Command: h.Command, Handle: h.Handle}
}
