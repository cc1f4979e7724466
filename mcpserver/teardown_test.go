package mcpserver

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
)

// exists reports whether tmux still has target.
func exists(ts *tmuxtest.Server, kind, id string) bool {
	flag := map[string]string{"pane": "-a", "window": "-a", "session": ""}[kind]
	cmd := map[string]string{"pane": "list-panes", "window": "list-windows", "session": "list-sessions"}[kind]
	format := map[string]string{"pane": "#{pane_id}", "window": "#{window_id}", "session": "#{session_id}"}[kind]
	args := []string{cmd, "-F", format}
	if flag != "" {
		args = append(args, flag)
	}
	return slices.Contains(strings.Fields(ts.Run(args...)), id)
}

func removed(panes, windows, sessions []string) removedResult {
	return removedResult{Removed: slices.Concat(panes, windows, sessions)}
}

// TestTeardownCallerAndContainers kills panes, windows and sessions, and
// checks that the caller's pane, its window and its session are refused
// without force and go with force equal to the caller's pane id.
func TestTeardownCallerAndContainers(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	caller := ts.NewSession("a", "sh")
	neighbour := strings.TrimSpace(ts.Run("split-window", "-d", "-P", "-F", "#{pane_id}", "-t", caller, "sh"))
	callerWindow, sessA := tmuxSays(ts, caller, "#{window_id}"), tmuxSays(ts, caller, "#{session_id}")
	e := ts.NewSession("b", "sh")
	winE, sessB := tmuxSays(ts, e, "#{window_id}"), tmuxSays(ts, e, "#{session_id}")
	f := strings.TrimSpace(ts.Run("new-window", "-d", "-P", "-F", "#{pane_id}", "-t", sessB+":", "sh"))
	winF := tmuxSays(ts, f, "#{window_id}")
	cs := connectAll(t, ts, caller, Deps{})

	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"kill_pane", map[string]any{"paneId": caller}, `pass force:"` + caller + `"`},
		{"kill_window", map[string]any{"windowId": callerWindow}, `pass force:"` + caller + `"`},
		{"kill_session", map[string]any{"sessionId": sessA}, `pass force:"` + caller + `"`},
		{"kill_session", map[string]any{"sessionName": "a"}, `pass force:"` + caller + `"`},
		{"clear_pane_scrollback", map[string]any{"paneId": caller}, `pass force:"` + caller + `"`},
		{"kill_pane", map[string]any{"paneId": caller, "force": neighbour}, "not this MCP server's own pane"},
		{"kill_window", map[string]any{"windowId": callerWindow, "force": "%99"}, "not this MCP server's own pane"},
		{"kill_pane", map[string]any{"paneId": "%999"}, "call list_panes"},
		{"kill_pane", map[string]any{"paneId": "3"}, "not a tmux pane id"},
		{"kill_window", map[string]any{"windowId": "@999"}, "call list_windows"},
		{"kill_window", map[string]any{"windowId": "2"}, "not a tmux window id"},
		{"kill_session", map[string]any{"sessionId": "$999"}, "call list_sessions"},
		{"kill_session", map[string]any{"sessionName": "nope"}, "call list_sessions"},
		{"kill_session", map[string]any{"sessionId": "a"}, "not a tmux session id"},
		{"clear_pane_scrollback", map[string]any{"paneId": "%999"}, "call list_panes"},
	} {
		callErr(t, cs, tc.tool, tc.args, tc.want)
	}
	if !exists(ts, "pane", caller) || !exists(ts, "pane", neighbour) {
		t.Fatal("a refused kill removed a pane")
	}

	var got removedResult
	call(t, cs, "kill_pane", map[string]any{"paneId": neighbour}, &got)
	if diff := cmp.Diff(removed([]string{neighbour}, nil, nil), got); diff != "" || exists(ts, "pane", neighbour) {
		t.Errorf("kill_pane of a pane with a neighbour (-want +got):\n%s", diff)
	}
	call(t, cs, "kill_window", map[string]any{"windowId": winF}, &got)
	if diff := cmp.Diff(removed([]string{f}, []string{winF}, nil), got); diff != "" || exists(ts, "window", winF) {
		t.Errorf("kill_window (-want +got):\n%s", diff)
	}
	call(t, cs, "kill_pane", map[string]any{"paneId": e}, &got)
	if diff := cmp.Diff(removed([]string{e}, []string{winE}, []string{sessB}), got); diff != "" || exists(ts, "session", sessB) {
		t.Errorf("kill_pane of a session's last pane (-want +got):\n%s", diff)
	}

	// With force equal to the caller's pane, its containers go too.
	second := strings.TrimSpace(ts.Run("new-window", "-d", "-P", "-F", "#{pane_id}", "-t", sessA+":", "sh"))
	secondWindow := tmuxSays(ts, second, "#{window_id}")
	call(t, cs, "kill_window", map[string]any{"windowId": callerWindow, "force": caller}, &got)
	if diff := cmp.Diff(removed([]string{caller}, []string{callerWindow}, nil), got); diff != "" || exists(ts, "pane", caller) {
		t.Errorf("forced kill_window of the caller's window (-want +got):\n%s", diff)
	}
	call(t, cs, "kill_session", map[string]any{"sessionName": "a"}, &got)
	if diff := cmp.Diff(removed([]string{second}, []string{secondWindow}, []string{sessA}), got); diff != "" || exists(ts, "session", sessA) {
		t.Errorf("kill_session by name (-want +got):\n%s", diff)
	}
}

func TestTeardownForcedCallerPaneAndSession(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	caller := ts.NewSession("me", "sh")
	other := strings.TrimSpace(ts.Run("split-window", "-d", "-P", "-F", "#{pane_id}", "-t", caller, "sh"))
	keep := ts.NewSession("keep", "sh")
	cs := connectAll(t, ts, caller, Deps{})
	sess := tmuxSays(ts, caller, "#{session_id}")

	var got removedResult
	call(t, cs, "kill_pane", map[string]any{"paneId": caller, "force": caller}, &got)
	if diff := cmp.Diff(removed([]string{caller}, nil, nil), got); diff != "" || exists(ts, "pane", caller) {
		t.Errorf("forced kill_pane of the caller (-want +got):\n%s", diff)
	}
	// The caller's pane is gone; its session holds no caller any more.
	call(t, cs, "kill_session", map[string]any{"sessionId": sess}, &got)
	if !slices.Contains(got.Removed, other) || !slices.Contains(got.Removed, sess) || !exists(ts, "pane", keep) {
		t.Errorf("kill_session answered %+v", got)
	}
}

func TestClearPaneScrollback(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := ts.NewSession("h", "sh", "-c", "seq 500; exec cat")
	ts.WaitFor(pane, func(screen string) bool { return strings.Contains(screen, "500") }) // seq is done
	before := tmuxSays2Int(t, ts, pane, "#{history_size}")
	cs := connectAll(t, ts, "", Deps{})
	var got clearPaneScrollbackResult
	call(t, cs, "clear_pane_scrollback", map[string]any{"paneId": pane}, &got)
	if after := tmuxSays(ts, pane, "#{history_size}"); after != "0" || got.ClearedLines != before || got.PaneID != pane {
		t.Errorf("clear_pane_scrollback answered %+v; history was %d lines, now %s", got, before, after)
	}
	if !strings.Contains(ts.Capture(pane), "500") {
		t.Errorf("the screen was cleared too:\n%s", ts.Capture(pane))
	}
}

// TestTeardownRefusesWatchedPane attaches a person's client (a real tmux
// client inside another pane) and a control client, and checks that with
// LIBTMUX_MCP_ATTENDED=watched every teardown of what the person sees is
// refused, force or not, while what only the control client shows goes.
func TestTeardownRefusesWatchedPane(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	watched := ts.NewSession("work", "sh")
	watchedWindow, workSession := tmuxSays(ts, watched, "#{window_id}"), tmuxSays(ts, watched, "#{session_id}")
	hidden := strings.TrimSpace(ts.Run("new-window", "-d", "-P", "-F", "#{pane_id}", "-t", "=work:", "sh"))
	ts.AttachPerson("work")
	robot := ts.NewSession("robot", "sh")
	ts.AttachControl("robot")
	caller := ts.NewSession("me", "sh")
	cs := connectAll(t, ts, caller, Deps{Limits: Limits{Attended: "watched"}})

	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"kill_pane", map[string]any{"paneId": watched}},
		{"kill_pane", map[string]any{"paneId": watched, "force": caller}},
		{"kill_window", map[string]any{"windowId": watchedWindow}},
		{"kill_session", map[string]any{"sessionId": workSession}},
		{"kill_session", map[string]any{"sessionName": "work"}},
		{"clear_pane_scrollback", map[string]any{"paneId": watched}},
		{"respawn_pane", map[string]any{"paneId": watched}},
	} {
		callErr(t, cs, tc.tool, tc.args, "LIBTMUX_MCP_ATTENDED=watched")
	}
	if !exists(ts, "pane", watched) {
		t.Fatal("a refused teardown removed the watched pane")
	}
	// The person's session shows another window: that one is not watched.
	var got removedResult
	call(t, cs, "kill_pane", map[string]any{"paneId": hidden}, &got)
	// A control client is a program, not a person.
	call(t, cs, "kill_pane", map[string]any{"paneId": robot}, &got)
	if exists(ts, "pane", robot) || exists(ts, "pane", hidden) {
		t.Errorf("unwatched panes survived their kill")
	}
}
