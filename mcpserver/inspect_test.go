package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
	"github.com/libtmux/libtmux-mcp/tmux"
)

func TestInspectAgainstRealServer(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := ts.NewSession("work", "sh")
	second := strings.TrimSpace(ts.Run("split-window", "-d", "-P", "-F", "#{pane_id}", "-t", pane, "sh"))
	cs := connect(t, ts, Deps{})

	var info serverInfoResult
	call(t, cs, "get_server_info", map[string]any{}, &info)
	if info.Sessions != 1 || info.Windows != 1 || info.Panes != 2 {
		t.Errorf("get_server_info counts = %d/%d/%d; want 1/1/2", info.Sessions, info.Windows, info.Panes)
	}
	if info.Socket != ts.Socket || info.ServerGeneration == "" || info.ServerPID == 0 {
		t.Errorf("get_server_info = %+v", info)
	}
	if info.Provenance.State != "existing" {
		t.Errorf("provenance = %+v; want existing (the test started the server)", info.Provenance)
	}

	var sessions listSessionsResult
	call(t, cs, "list_sessions", nil, &sessions)
	if len(sessions.Sessions) != 1 || sessions.Sessions[0].Name != "work" {
		t.Fatalf("list_sessions = %+v", sessions)
	}
	sid := sessions.Sessions[0].SessionID

	var windows listWindowsResult
	call(t, cs, "list_windows", map[string]any{"sessionId": sid}, &windows)
	if len(windows.Windows) != 1 || windows.Windows[0].Panes != 2 {
		t.Fatalf("list_windows = %+v", windows)
	}

	var panes listPanesResult
	call(t, cs, "list_panes", map[string]any{"windowId": windows.Windows[0].WindowID}, &panes)
	var ids []string
	for _, p := range panes.Panes {
		ids = append(ids, p.PaneID)
		if p.ServerGeneration != info.ServerGeneration || p.Enrollment != "none" || p.Watched || p.Caller {
			t.Errorf("pane row %+v", p)
		}
	}
	if diff := cmp.Diff([]string{pane, second}, ids); diff != "" {
		t.Errorf("list_panes ids (-want +got):\n%s", diff)
	}

	var si sessionInfoResult
	call(t, cs, "get_session_info", map[string]any{"sessionName": "work"}, &si)
	if si.Session.SessionID != sid || len(si.Windows) != 1 {
		t.Errorf("get_session_info = %+v", si)
	}
	var wi windowInfoResult
	call(t, cs, "get_window_info", map[string]any{"windowId": windows.Windows[0].WindowID}, &wi)
	if len(wi.Panes) != 2 {
		t.Errorf("get_window_info = %+v", wi)
	}
	var pi paneInfoResult
	call(t, cs, "get_pane_info", map[string]any{"paneId": second}, &pi)
	if pi.Pane.PaneID != second || pi.Pane.CurrentCommand != "sh" {
		t.Errorf("get_pane_info = %+v", pi.Pane)
	}

	ts.Type(pane, "printf 'alpha\\nbeta <&>\\n'", true)
	ts.WaitFor(pane, func(s string) bool { return strings.Contains(s, "beta <&>\n") })
	var cap capturePaneResult
	call(t, cs, "capture_pane", map[string]any{"paneId": pane}, &cap)
	if got := strings.Join(cap.Lines, "\n"); !strings.Contains(got, "alpha\nbeta <&>") {
		t.Errorf("capture_pane lines = %q", cap.Lines)
	}
}

func TestUnknownTargetsNameTheRecovery(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	ts.NewSession("a", "sh")
	cs := connect(t, ts, Deps{})
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"get_pane_info", map[string]any{"paneId": "%99"}, "no pane %99 on this server; call list_panes for the 1 that exist"},
		{"capture_pane", map[string]any{"paneId": "%99"}, "call list_panes"},
		{"get_window_info", map[string]any{"windowId": "@99"}, "call list_windows"},
		{"list_panes", map[string]any{"sessionId": "$99"}, "call list_sessions"},
		{"get_session_info", map[string]any{"sessionName": "nope"}, "call list_sessions for the 1 that exist"},
		{"get_pane_info", map[string]any{"paneId": "3"}, "not a tmux pane id"},
		// Malformed arguments are tool errors, not crashes.
		{"get_pane_info", map[string]any{"paneId": 3}, "paneId"},
		{"capture_pane", map[string]any{"paneId": "%0", "bogus": true}, "bogus"},
	} {
		callErr(t, cs, tc.tool, tc.args, tc.want)
	}
	// The server still answers after the bad calls.
	var s listSessionsResult
	call(t, cs, "list_sessions", nil, &s)
	if len(s.Sessions) != 1 {
		t.Errorf("list_sessions after errors = %+v", s)
	}
}

func TestCaptureOfHugeLineStaysInBudget(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := ts.NewSession("big", "sh")
	line := strings.Repeat("0123456789", 50_000) // 500 KB, one line
	file := ts.Dir + "/line"
	if err := os.WriteFile(file, []byte(line+"\nEND\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ts.Type(pane, "clear; cat "+file, true)
	ts.WaitFor(pane, func(s string) bool { return strings.Contains(s, "END") })
	cs := connect(t, ts, Deps{})
	var cap capturePaneResult
	call(t, cs, "capture_pane", map[string]any{"paneId": pane, "start": -100000, "joinWrapped": true}, &cap)
	total := 0
	for _, l := range cap.Lines {
		total += utf8.RuneCountInString(l)
	}
	if total > DefaultMaxResultChars {
		t.Fatalf("capture returned %d characters; budget is %d", total, DefaultMaxResultChars)
	}
	// Only the newest rows are read, so droppedChars counts what was read
	// and left out; the note says how many rows were not read at all.
	if cap.DroppedChars == 0 || !strings.Contains(cap.Note, "rows of the range were not read") {
		t.Errorf("droppedChars = %d, note %q; want some dropped and a note naming the rows not read", cap.DroppedChars, cap.Note)
	}
	joined := strings.Join(cap.Lines, "\n")
	if !strings.HasSuffix(joined, "789\nEND") && !strings.Contains(joined, "0123456789\nEND") {
		t.Errorf("capture does not end with the line's tail and END: ...%q", joined[max(0, len(joined)-40):])
	}
}

func TestSessionNamesComeBackAsTmuxReportsThem(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	for _, name := range []string{"two words", `it's "quoted"`, "hash #{pane_id} ##", "ünïcödé ✓"} {
		ts.NewSession(name, "sh")
	}
	newSessionUnlessRefused(t, ts, "tab\there") // tmux 3.7c refuses a tab in a session name
	cs := connect(t, ts, Deps{})
	want := strings.Split(strings.TrimSuffix(ts.Run("list-sessions", "-F", "#{session_name}"), "\n"), "\n")
	var got listSessionsResult
	call(t, cs, "list_sessions", nil, &got)
	var names []string
	for _, s := range got.Sessions {
		names = append(names, s.Name)
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("names (-tmux +list_sessions):\n%s", diff)
	}
	if !strings.Contains(strings.Join(names, "|"), "hash #{pane_id} ##") {
		t.Errorf("a # in a name was expanded: %q", names)
	}
}

func TestListPanesWithoutLocale(t *testing.T) {
	t.Setenv("LANG", "")
	t.Setenv("LC_ALL", "")
	t.Setenv("LC_CTYPE", "")
	os.Unsetenv("LANG")
	os.Unsetenv("LC_ALL")
	os.Unsetenv("LC_CTYPE")
	ts := tmuxtest.Start(t)
	// Without a UTF-8 locale tmux rewrites a tab and non-ASCII text in -F
	// output; tmux 3.7c refuses a tab in a session name.
	if !newSessionUnlessRefused(t, ts, "ünï\tcode") {
		ts.NewSession("ünïcode", "sh")
	}
	cs := connect(t, ts, Deps{})
	var got listPanesResult
	call(t, cs, "list_panes", nil, &got)
	want := strings.TrimSuffix(ts.Run("list-panes", "-a", "-F", "#{session_name}"), "\n")
	if len(got.Panes) != 1 || got.Panes[0].SessionName != want || !strings.Contains(want, "ünï") {
		t.Errorf("list_panes without a locale = %+v; tmux reports session %q", got.Panes, want)
	}
}

func TestCallerAndWatchedPanes(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	watchedPane := ts.NewSession("work", "sh")
	otherWindowPane := strings.TrimSpace(ts.Run("new-window", "-d", "-P", "-F", "#{pane_id}", "-t", "=work", "sh"))
	// A person's client: a real tmux client attached from inside another
	// session's pane (with TMUX unset so tmux allows the nesting).
	viewer := ts.AttachPerson("work")
	// A control client is a program, not a person.
	ts.AttachControl("work")
	info, err := ts.Client.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, ts, Deps{
		CallerTMUX: fmt.Sprintf("%s,%d,0", info.SocketPath, info.PID),
		CallerPane: otherWindowPane,
	})
	var got listPanesResult
	call(t, cs, "list_panes", nil, &got)
	rows := map[string]paneRow{}
	for _, p := range got.Panes {
		rows[p.PaneID] = p
	}
	if !rows[watchedPane].Watched || rows[otherWindowPane].Watched || rows[viewer].Watched {
		t.Errorf("watched: shown pane %v, other window %v, viewer's own pane %v; want true, false, false",
			rows[watchedPane].Watched, rows[otherWindowPane].Watched, rows[viewer].Watched)
	}
	if !rows[otherWindowPane].Caller || rows[watchedPane].Caller {
		t.Errorf("caller flags: %s %v, %s %v", otherWindowPane, rows[otherWindowPane].Caller, watchedPane, rows[watchedPane].Caller)
	}

	// A TMUX naming another server (another pid) proves nothing.
	cs2 := connect(t, ts, Deps{CallerTMUX: fmt.Sprintf("%s,%d,0", info.SocketPath, info.PID+1), CallerPane: otherWindowPane})
	call(t, cs2, "list_panes", nil, &got)
	for _, p := range got.Panes {
		if p.Caller {
			t.Errorf("pane %s marked caller for another server's TMUX", p.PaneID)
		}
	}
}

// TestInspectToolsMakeOneTmuxCall counts tmux processes: every inspect
// answer comes from a single tmux invocation, so its rows describe one
// moment and a call costs one process.
func TestInspectToolsMakeOneTmuxCall(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := ts.NewSession("one", "sh")
	ctx := context.Background()
	cs, client := serve(t, ts, Deps{})
	snap, err := ts.Client.Snapshot(ctx, tmux.Want{Sessions: true, Windows: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"get_server_info", nil},
		{"list_sessions", nil},
		{"list_windows", nil},
		{"list_panes", nil},
		{"get_session_info", map[string]any{"sessionName": "one"}},
		{"get_window_info", map[string]any{"windowId": snap.Windows[0].ID}},
		{"get_pane_info", map[string]any{"paneId": pane}},
		{"capture_pane", map[string]any{"paneId": pane}},
	} {
		before := client.Calls()
		call(t, cs, tc.tool, tc.args, nil)
		if n := client.Calls() - before; n != 1 {
			t.Errorf("%s made %d tmux calls; want 1", tc.tool, n)
		}
	}
}

// newSessionUnlessRefused creates a session named name running sh and
// reports whether tmux accepted the name: releases differ in which names
// they refuse ("invalid session name"). Any other failure fails the test.
func newSessionUnlessRefused(t *testing.T, ts *tmuxtest.Server, name string) bool {
	t.Helper()
	_, err := ts.Client.Run(context.Background(), "new-session", "-d", "-x", "120", "-y", "30", "-s", tmux.Literal(name), "sh")
	var te *tmux.Error
	if errors.As(err, &te) && strings.Contains(te.Stderr, "invalid session name") {
		t.Logf("this tmux refuses the session name %q: %v", name, err)
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}
