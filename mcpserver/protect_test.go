package mcpserver

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
	"github.com/libtmux/libtmux-mcp/tmux"
)

// newTestServer is a server on ts without a client session, for calling
// handler helpers directly.
func newTestServer(t *testing.T, ts *tmuxtest.Server, d Deps) *server {
	t.Helper()
	c, err := tmux.NewClient(tmux.Route{SocketPath: ts.Socket}, 0)
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.Ensure(context.Background(), tmux.Want{})
	if err != nil {
		t.Fatal(err)
	}
	d.Tmux, d.Startup, d.Limits = c, st, d.Limits.withDefaults()
	return &server{deps: d, tmux: c, caller: newCaller(d.CallerTMUX, d.CallerPane, st.Snapshot.Server), life: context.Background()}
}

func TestProtectRefusals(t *testing.T) {
	ts := tmuxtest.Start(t)
	ctx := context.Background()
	plain := ts.NewSession("plain", "sh")
	modal := ts.NewSession("modal", "sh")
	ts.Run("copy-mode", "-t", modal)
	ts.Run("set-option", "-g", "remain-on-exit", "on")
	dead := ts.NewSession("dead", "sh", "-c", "exit 7")
	ts.WaitFor(dead, func(string) bool { return ts.Run("display", "-p", "-t", dead, "#{pane_dead}") == "1\n" })
	syncA := ts.NewSession("sync", "sh")
	syncB := strings.TrimSpace(ts.Run("split-window", "-P", "-F", "#{pane_id}", "-t", syncA, "sh"))
	ts.Run("set-option", "-w", "-t", syncA, "synchronize-panes", "on")
	info, err := ts.Client.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s := newTestServer(t, ts, Deps{CallerTMUX: info.SocketPath + "," + itoa(info.PID) + ",0", CallerPane: plain})

	for _, tc := range []struct {
		why, pane, force string
		p                purpose
		wantErr          string // "" for allowed
	}{
		{"the caller's own pane refuses input", plain, "", forInput, "pane this MCP server runs in"},
		{"force equal to the caller's pane confirms it", plain, plain, forInput, ""},
		{"force naming another pane is refused", modal, plain + "0", forInput, "is not this MCP server's own pane"},
		{"a pane in copy mode refuses input, naming the mode", modal, "", forInput, "copy-mode"},
		{"a dead pane refuses input", dead, "", forInput, "is dead"},
		{"a dead pane can be torn down", dead, "", forTeardown, ""},
		{"a synchronized cohort refuses a framed command", syncA, "", forCommand, syncB},
		{"a synchronized cohort takes keys", syncA, "", forInput, ""},
		{"an unknown pane names list_panes", "%999", "", forInput, "call list_panes"},
	} {
		c, err := s.protect(ctx, "pane", tc.pane, tc.force, tc.p)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.why, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: got %v; want an error containing %q", tc.why, err, tc.wantErr)
		case tc.why == "a synchronized cohort takes keys" && strings.Join(c.cohort, ",") != strings.Join(sorted([]string{syncA, syncB}), ","):
			t.Errorf("%s: cohort %v; want both panes", tc.why, c.cohort)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
