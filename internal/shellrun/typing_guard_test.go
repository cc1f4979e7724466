package shellrun

import (
	"strings"
	"testing"

	"github.com/libtmux/libtmux-mcp/tmux"
)

func TestTypingGuardFrom(t *testing.T) {
	pane := tmux.Pane{ID: "%1", SessionID: "$0", WindowID: "@0", PID: 42, CurrentCommand: "zsh"}
	ours := tmux.AttachedClient{Name: "client-7", ControlMode: true, WindowID: "@0"}
	person := tmux.AttachedClient{Name: "/dev/pts/3", WindowID: "@0"}
	elsewhere := tmux.AttachedClient{Name: "/dev/pts/4", WindowID: "@9"}
	check := func(pn tmux.Pane, clients ...tmux.AttachedClient) Checked {
		return Checked{Pane: pn, Snapshot: tmux.Snapshot{Server: tmux.ServerInfo{PID: 9, Generation: "g"}, Clients: clients}}
	}
	synced := pane
	synced.Synchronized = true
	odd := pane
	odd.CurrentCommand = "my,shell"
	for _, c := range []struct {
		what     string
		c        Checked
		attended string
		ok       bool
		cond     string
	}{
		{"no clients", check(pane), "typing", true, "#{==:#{pid}/#{pane_pid}/#{pane_current_command}/#{session_id}/#{pane_dead}#{pane_in_mode}#{pane_synchronized}/#{window_active_clients_list},9/42/zsh/$0/000/}"},
		{"control clients and a person elsewhere", check(pane, ours, elsewhere, ours), "watched", true, "/000/client-7#,client-7}"},
		{"a person on the window", check(pane, ours, person), "typing", false, ""},
		{"a person on the window, attended=ignore", check(pane, person), "ignore", true, "#{pane_synchronized},9/42/zsh/$0/000}"},
		{"synchronized", check(synced), "typing", false, ""},
		{"a name the format would misread", check(odd), "typing", false, ""},
	} {
		g, ok := typingGuardFrom(c.c, c.attended)
		if ok != c.ok {
			t.Errorf("%s: guard %v; want %v", c.what, ok, c.ok)
			continue
		}
		if ok && !strings.HasSuffix(g.condition(), c.cond) {
			t.Errorf("%s: condition %q; want it to end in %q", c.what, g.condition(), c.cond)
		}
	}
}
