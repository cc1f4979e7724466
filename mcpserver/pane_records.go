package mcpserver

import "github.com/libtmux/libtmux-mcp/internal/panerecord"

// paneRecords is the pane records (claims and input) of the tmux server this process serves,
// which every libtmux-mcp process on it sees, opened on first use (handlers run once the server
// is known); nil when this process keeps its claims and input to itself.
func (s *server) paneRecords() *panerecord.Set {
	srv := s.startup.Snapshot.Server
	set, err := s.records.Open(srv.SocketPath, srv.PID)
	if err != nil {
		s.recordsWarn.Do(func() {
			s.log.Warn("pane claims and input records are kept by this process alone: other libtmux-mcp processes on this tmux server cannot see them", "err", err)
		})
	}
	return set
}

// claimOf reads pane's claim on the tmux server serverPID; nil when no live process holds it.
func (s *server) claimOf(pane string, serverPID int) *panerecord.Shown {
	if set := s.paneRecords(); set != nil && serverPID == s.startup.Snapshot.Server.PID {
		if h, ok := set.Holder(pane); ok {
			return h.Shown()
		}
	}
	return nil
}
