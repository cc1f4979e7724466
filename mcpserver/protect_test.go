package mcpserver

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

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
	t.Parallel()
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

// TestAttendedDecision decides LIBTMUX_MCP_ATTENDED on made-up clients
// with a fixed clock: the decision depends on the time only through now.
func TestAttendedDecision(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_000_000, 0)
	ago := func(d time.Duration) int { return int(now.Add(-d).Unix()) }
	pane := tmux.Pane{ID: "%1", WindowID: "@1", Active: true}
	hidden := tmux.Pane{ID: "%2", WindowID: "@1", WindowZoomed: true} // another pane is zoomed
	zoomed := tmux.Pane{ID: "%1", WindowID: "@1", Active: true, WindowZoomed: true}
	person := func(window string, activity int) tmux.AttachedClient {
		return tmux.AttachedClient{Name: "/dev/pts/9", TTY: "/dev/pts/9", WindowID: window, Activity: activity}
	}
	control := tmux.AttachedClient{Name: "client-1", ControlMode: true, WindowID: "@1", Activity: ago(0)}
	for _, tc := range []struct {
		why     string
		mode    string
		pn      tmux.Pane
		clients []tmux.AttachedClient
		want    string // "" allows
	}{
		{"a key a second ago: the person is typing", "typing", pane, []tmux.AttachedClient{person("@1", ago(time.Second))}, "typing on /dev/pts/9"},
		{"a key just now", "typing", pane, []tmux.AttachedClient{person("@1", ago(0))}, "typing"},
		{"4 s idle is still typing", "typing", pane, []tmux.AttachedClient{person("@1", ago(4*time.Second))}, "typing"},
		{"5 s idle is not typing", "typing", pane, []tmux.AttachedClient{person("@1", ago(5*time.Second))}, ""},
		{"an hour idle: watching, not typing", "typing", pane, []tmux.AttachedClient{person("@1", ago(time.Hour))}, ""},
		{"a clock behind tmux's still refuses", "typing", pane, []tmux.AttachedClient{person("@1", int(now.Unix())+3)}, "typing"},
		{"typing in another window does not attend this one", "typing", pane, []tmux.AttachedClient{person("@2", ago(0))}, ""},
		{"a control client is a program, not a person", "typing", pane, []tmux.AttachedClient{control}, ""},
		{"watched refuses an idle watcher", "watched", pane, []tmux.AttachedClient{person("@1", ago(time.Hour))}, "LIBTMUX_MCP_ATTENDED=watched"},
		{"watched ignores control clients", "watched", pane, []tmux.AttachedClient{control}, ""},
		{"watched ignores other windows", "watched", pane, []tmux.AttachedClient{person("@2", ago(0))}, ""},
		{"a pane hidden by another's zoom is not watched", "watched", hidden, []tmux.AttachedClient{person("@1", ago(0))}, ""},
		{"the zoomed pane itself is watched", "watched", zoomed, []tmux.AttachedClient{person("@1", ago(0))}, "watched"},
		{"ignore never refuses", "ignore", pane, []tmux.AttachedClient{person("@1", ago(0))}, ""},
		{"nobody attached", "watched", pane, nil, ""},
		{"the typing client is found among others", "typing", pane, []tmux.AttachedClient{control, person("@2", ago(0)), person("@1", ago(time.Hour)), person("@1", ago(2*time.Second))}, "typing"},
	} {
		err := attended(tc.mode, tc.pn, tc.clients, now)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.why, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: got %v; want an error containing %q", tc.why, err, tc.want)
		}
	}
}

// TestAttendedWithARealClient types a key on a person's attached client
// and checks each LIBTMUX_MCP_ATTENDED mode through send_keys and
// paste_text.
func TestAttendedWithARealClient(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	watched := catPane(ts, "work")
	viewer := ts.AttachPerson("work")
	// The person types: the key goes through their client into the pane.
	ts.Type(viewer, "k", false)
	ts.WaitFor(watched, func(s string) bool { return strings.Contains(s, "k") })
	// A control client on the same window is not a person.
	ts.AttachControl("work")

	typing := connect(t, ts, Deps{})
	for _, tool := range []string{"send_keys", "paste_text"} {
		if msg := callErr(t, typing, tool, map[string]any{"paneId": watched, "text": "x"}, "a person is typing on"); !strings.Contains(msg, watched) {
			t.Errorf("%s right after a keystroke (typing mode): error %q; want a typing refusal naming %s", tool, msg, watched)
		}
	}
	watchedMode := connect(t, ts, Deps{Limits: Limits{Attended: "watched"}})
	callErr(t, watchedMode, "send_keys", map[string]any{"paneId": watched, "keys": []string{"x"}}, "LIBTMUX_MCP_ATTENDED=watched")
	// A pane in another window of the same session is not shown.
	unseen := strings.TrimSpace(ts.Run("new-window", "-d", "-P", "-F", "#{pane_id}", "-t", "=work", "cat", "-v"))
	ts.WaitCommand(unseen, "cat")
	call(t, watchedMode, "send_keys", map[string]any{"paneId": unseen, "text": "fine", "enter": true}, nil)
	ignore := connect(t, ts, Deps{Limits: Limits{Attended: "ignore"}})
	call(t, ignore, "send_keys", map[string]any{"paneId": watched, "text": "ok", "enter": true}, nil)
	ts.WaitFor(watched, func(s string) bool { return strings.Contains(s, "kok\n") })
}

// TestCohortMembersAreCheckedForKeysOnly puts one member of a
// synchronized window into copy-mode: keys to another member would reach
// it and are refused; a paste reaches the target only and is allowed.
func TestCohortMembersAreCheckedForKeysOnly(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	a := ts.NewSession("sync", "sh")
	b := strings.TrimSpace(ts.Run("split-window", "-P", "-F", "#{pane_id}", "-t", a, "sh"))
	ts.Run("set-option", "-w", "-t", a, "synchronize-panes", "on")
	ts.Run("copy-mode", "-t", b)
	s := newTestServer(t, ts, Deps{})
	ctx := context.Background()
	_, err := s.protect(ctx, "pane", a, "", forInput)
	if err == nil || !strings.Contains(err.Error(), b) || !strings.Contains(err.Error(), "copy-mode") {
		t.Errorf("keys to %s with %s (same cohort) in copy-mode: %v; want a refusal naming %s and copy-mode", a, b, err, b)
	}
	if _, err := s.protect(ctx, "pane", a, "", forPaste); err != nil {
		t.Errorf("a paste to %s (target only) refused: %v", a, err)
	}
	ts.Run("set-option", "-w", "-t", a, "synchronize-panes", "off")
	if c, err := s.protect(ctx, "pane", a, "", forInput); err != nil || len(c.cohort) != 1 {
		t.Errorf("keys to %s with synchronize-panes off: cohort %v, %v; want [%s]", a, c.cohort, err, a)
	}
}
