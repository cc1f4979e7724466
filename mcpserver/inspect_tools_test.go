package mcpserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
	"github.com/libtmux/libtmux-mcp/tmux"
)

// shPane starts a session running sh and waits for its prompt, so that
// typed text is not echoed ahead of the prompt (which would put the
// prompt in front of the command's first output line).
func shPane(t *testing.T, ts *tmuxtest.Server, name string) string {
	t.Helper()
	pane := ts.NewSession(name, "sh")
	ts.WaitFor(pane, func(s string) bool { return strings.TrimSpace(s) != "" })
	return pane
}

func TestSnapshotPane(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := shPane(t, ts, "snap")
	ts.Run("select-pane", "-t", pane, "-T", tmux.Literal("my #{title}")) // -T expands formats
	ts.Type(pane, "printf 'one\\ntwo <&>\\n'", true)
	ts.WaitFor(pane, func(s string) bool { return strings.Contains(s, "two <&>\n") })
	cs, client := serve(t, ts, Deps{})

	before := client.Calls()
	var got snapshotPaneResult
	call(t, cs, "snapshot_pane", map[string]any{"paneId": pane}, &got)
	if n := client.Calls() - before; n != 1 {
		t.Errorf("snapshot_pane made %d tmux calls; want 1", n)
	}
	screen := strings.Join(got.Lines, "\n")
	if !strings.Contains(screen, "one\ntwo <&>") {
		t.Errorf("lines = %q", got.Lines)
	}
	if got.PaneID != pane || got.CurrentCommand != "sh" || got.Title != "my #{title}" || got.Width != 120 || got.Height != 30 || got.Mode != "" || got.Dead {
		t.Errorf("snapshot = %+v", got)
	}
	// The cursor sits on the row below the output, after the prompt.
	if got.CursorY != len(got.Lines)-1 || got.CursorX == 0 {
		t.Errorf("cursor = (%d,%d) with %d lines %q", got.CursorX, got.CursorY, len(got.Lines), got.Lines)
	}

	ts.Run("copy-mode", "-t", pane)
	call(t, cs, "snapshot_pane", map[string]any{"paneId": pane}, &got)
	if got.Mode != "copy-mode" || got.ScrollPosition != 0 {
		t.Errorf("mode in copy mode = %q; want copy-mode", got.Mode)
	}

	for args, want := range map[string]string{
		"%99": "no pane %99 on this server; call list_panes",
		"3":   "not a tmux pane id",
	} {
		callErr(t, cs, "snapshot_pane", map[string]any{"paneId": args}, want)
	}
}

func TestSnapshotPaneKeepsTheBudget(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := shPane(t, ts, "snap")
	ts.Type(pane, "i=0; while [ $i -lt 40 ]; do echo line$i; i=$((i+1)); done", true)
	ts.WaitFor(pane, func(s string) bool { return strings.Contains(s, "line39") })
	cs := connect(t, ts, Deps{Limits: Limits{MaxResultLines: 5}})
	var got snapshotPaneResult
	call(t, cs, "snapshot_pane", map[string]any{"paneId": pane}, &got)
	ts.Run("copy-mode", "-t", pane)
	ts.Run("send-keys", "-X", "-t", pane, "-N", "3", "scroll-up")
	call(t, cs, "snapshot_pane", map[string]any{"paneId": pane}, &got)
	if got.Mode != "copy-mode" || got.ScrollPosition != 3 {
		t.Errorf("after scrolling up 3 lines: mode %q, scrollPosition %d", got.Mode, got.ScrollPosition)
	}
	if len(got.Lines) != 5 || got.DroppedLines == 0 || got.Note == "" || !strings.Contains(strings.Join(got.Lines, "\n"), "line39") {
		t.Errorf("bounded snapshot = %d lines %q, dropped %d, note %q", len(got.Lines), got.Lines, got.DroppedLines, got.Note)
	}
}

// withSearchLimits replaces the search limits for one test.
func withSearchLimits(t *testing.T, l searchLimits) {
	old := searchLimitsNow
	searchLimitsNow = func() searchLimits { return l }
	t.Cleanup(func() { searchLimitsNow = old })
}

func TestSearchPanes(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	a := shPane(t, ts, "s1")
	b := strings.TrimSpace(ts.Run("split-window", "-d", "-P", "-F", "#{pane_id}", "-t", a, "sh"))
	ts.WaitFor(b, func(s string) bool { return strings.TrimSpace(s) != "" })
	c := shPane(t, ts, "s2")
	ts.Type(a, "echo 'Needle in A'", true)
	ts.Type(b, "echo 'needle (b)'", true)
	ts.Type(c, "echo 'haystack'", true)
	for _, p := range []string{a, b} {
		ts.WaitFor(p, func(s string) bool { return strings.Count(strings.ToLower(s), "needle") >= 2 })
	}
	ts.WaitFor(c, func(s string) bool { return strings.Count(s, "haystack") >= 2 })
	cs := connect(t, ts, Deps{})

	var got searchPanesResult
	call(t, cs, "search_panes", map[string]any{"pattern": "needle"}, &got)
	// Each pane shows the typed command and its output: two lines each.
	panes := map[string]int{}
	for _, m := range got.Matches {
		panes[m.PaneID]++
		// The line number is capture_pane's: reading it there gives the line.
		var cap capturePaneResult
		call(t, cs, "capture_pane", map[string]any{"paneId": m.PaneID, "start": m.Line, "end": m.Line}, &cap)
		if len(cap.Lines) != 1 || cap.Lines[0] != m.Text {
			t.Errorf("match %+v; capture_pane of that line = %q", m, cap.Lines)
		}
	}
	if panes[a] != 2 || panes[b] != 2 || panes[c] != 0 || got.StoppedBy != "" || got.PanesSearched != 3 {
		t.Errorf("search needle = %+v", got)
	}
	call(t, cs, "search_panes", map[string]any{"pattern": "Needle", "caseSensitive": true}, &got)
	if len(got.Matches) != 2 || got.Matches[0].PaneID != a {
		t.Errorf("case-sensitive search = %+v", got.Matches)
	}
	// Literal by default: the parentheses are text.
	call(t, cs, "search_panes", map[string]any{"pattern": "(b)"}, &got)
	if len(got.Matches) != 2 || got.Matches[0].PaneID != b {
		t.Errorf("literal search = %+v", got.Matches)
	}
	call(t, cs, "search_panes", map[string]any{"pattern": `^needle \(\w\)$`, "regex": true}, &got)
	if len(got.Matches) != 1 || got.Matches[0].PaneID != b {
		t.Errorf("regex search = %+v", got.Matches)
	}
	call(t, cs, "search_panes", map[string]any{"pattern": "needle", "paneId": b}, &got)
	if len(got.Matches) != 2 || got.PanesSearched != 1 {
		t.Errorf("pane-scoped search = %+v", got)
	}
	call(t, cs, "search_panes", map[string]any{"pattern": "haystack", "sessionId": "$0"}, &got)
	if len(got.Matches) != 0 || got.PanesSearched != 2 {
		t.Errorf("session-scoped search = %+v", got)
	}

	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"pattern": "(", "regex": true}, "not a valid Go (RE2) regular expression"},
		{map[string]any{"pattern": `(?<=x)y`, "regex": true}, "not a valid Go (RE2)"},
		{map[string]any{"pattern": ""}, "pattern is empty"},
		{map[string]any{"pattern": strings.Repeat("x", 2000)}, "at most 1024"},
		{map[string]any{"pattern": "x", "paneId": a, "windowId": "@0"}, "at most one of"},
		{map[string]any{"pattern": "x", "paneId": "%99"}, "no pane %99"},
		{map[string]any{"pattern": "x", "windowId": "@99"}, "call list_windows"},
		{map[string]any{"pattern": "x", "sessionId": "s1"}, "not a tmux session id"},
	} {
		callErr(t, cs, "search_panes", tc.args, tc.want)
	}
}

// TestSearchPanesLimits reaches each of the four limits and checks the
// answer names it.
func TestSearchPanesLimits(t *testing.T) {
	ts := tmuxtest.Start(t)
	a := shPane(t, ts, "s1")
	shPane(t, ts, "s2")
	ts.Type(a, "echo target", true)
	ts.WaitFor(a, func(s string) bool { return strings.Count(s, "target") >= 2 })
	cs := connect(t, ts, Deps{})
	for _, tc := range []struct {
		lim  searchLimits
		want string
	}{
		{searchLimits{panes: 1, lines: 20_000, bytes: 1 << 20, elapsed: time.Minute}, "panes"},
		{searchLimits{panes: 10, lines: 40, bytes: 1 << 20, elapsed: time.Minute}, "lines"},
		// Reading ended inside the first pane: lines, though panes was hit too.
		{searchLimits{panes: 1, lines: 5, bytes: 1 << 20, elapsed: time.Minute}, "lines"},
		{searchLimits{panes: 10, lines: 20_000, bytes: 10, elapsed: time.Minute}, "bytes"},
		{searchLimits{panes: 10, lines: 20_000, bytes: 1 << 20, elapsed: time.Nanosecond}, "time"},
	} {
		withSearchLimits(t, tc.lim)
		var got searchPanesResult
		call(t, cs, "search_panes", map[string]any{"pattern": "target"}, &got)
		if got.StoppedBy != tc.want || !strings.Contains(got.Note, tc.want+" limit") {
			t.Errorf("limits %+v: stoppedBy %q, note %q; want %q", tc.lim, got.StoppedBy, got.Note, tc.want)
		}
		if got.LinesSearched > tc.lim.lines || got.PanesSearched > tc.lim.panes {
			t.Errorf("limits %+v: searched %d panes, %d lines", tc.lim, got.PanesSearched, got.LinesSearched)
		}
	}
}

// TestSearchPanesLineLimitForReal fills a pane's scrollback past the
// published 20,000-line limit.
func TestSearchPanesLineLimitForReal(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	a := shPane(t, ts, "big")
	ts.Type(a, "clear; seq 1 30000; echo DONE", true)
	ts.WaitFor(a, func(s string) bool { return strings.Contains(s, "30000\nDONE\n") })
	cs := connect(t, ts, Deps{})
	var got searchPanesResult
	call(t, cs, "search_panes", map[string]any{"pattern": `^2999[0-9]$`, "regex": true}, &got)
	if got.StoppedBy != "lines" || got.LinesSearched != 20_000 || len(got.Matches) != 10 {
		t.Fatalf("search of 30,000 lines = stoppedBy %q, %d lines, %d matches %+v", got.StoppedBy, got.LinesSearched, len(got.Matches), got.Matches)
	}
	// The newest lines are the ones read; the oldest are not.
	call(t, cs, "search_panes", map[string]any{"pattern": `^5$`, "regex": true}, &got)
	if len(got.Matches) != 0 || got.StoppedBy != "lines" {
		t.Errorf("line 5 (past the limit) = %+v", got)
	}
}

func TestFindPaneByPosition(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	left := shPane(t, ts, "pos")
	right := strings.TrimSpace(ts.Run("split-window", "-h", "-d", "-P", "-F", "#{pane_id}", "-t", left, "sh"))
	win := strings.TrimSpace(ts.Run("display", "-p", "-t", left, "#{window_id}"))
	border := 0
	fmt.Sscan(ts.Run("display", "-p", "-t", left, "#{pane_right}"), &border)
	border++
	cs := connect(t, ts, Deps{})
	var got findPaneResult
	call(t, cs, "find_pane_by_position", map[string]any{"windowId": win, "x": 0, "y": 0}, &got)
	if got.PaneID != left || got.Left != 0 || got.Width != border || got.Height != 30 {
		t.Errorf("(0,0) = %+v; want %s", got, left)
	}
	call(t, cs, "find_pane_by_position", map[string]any{"windowId": win, "x": 119, "y": 29}, &got)
	if got.PaneID != right || got.Left != border+1 {
		t.Errorf("(119,29) = %+v; want %s", got, right)
	}
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"windowId": win, "x": border, "y": 3}, "on a border"},
		{map[string]any{"windowId": win, "x": 120, "y": 0}, "outside window"},
		{map[string]any{"windowId": win, "x": -1, "y": 0}, "outside window"},
		{map[string]any{"windowId": "@99", "x": 0, "y": 0}, "no window @99 on this server; call list_windows"},
		{map[string]any{"windowId": "%1", "x": 0, "y": 0}, "not a tmux window id"},
	} {
		callErr(t, cs, "find_pane_by_position", tc.args, tc.want)
	}
	// Zoomed: the active pane covers the whole window.
	ts.Run("resize-pane", "-Z", "-t", left)
	call(t, cs, "find_pane_by_position", map[string]any{"windowId": win, "x": 119, "y": 0}, &got)
	if got.PaneID != left || got.Width != 120 {
		t.Errorf("zoomed (119,0) = %+v; want %s full width", got, left)
	}
}

func TestShowOption(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := shPane(t, ts, "opt")
	file := filepath.Join(ts.Dir, "pwned")
	ts.Run("set", "-g", "@cmd", "x #(touch "+file+") #{pid}")
	ts.Run("set", "-g", "@empty", "")
	ts.Run("set", "-p", "-t", pane, "remain-on-exit", "on")
	ts.Run("set", "-w", "-t", pane, "mode-keys", "vi")
	win := strings.TrimSpace(ts.Run("display", "-p", "-t", pane, "#{window_id}"))
	cs := connect(t, ts, Deps{})
	for _, tc := range []struct {
		args  map[string]any
		value string
		set   bool
	}{
		{map[string]any{"scope": "server", "name": "exit-empty"}, "off", true},
		{map[string]any{"scope": "session", "name": "history-limit"}, "50000", true},
		{map[string]any{"scope": "session", "target": "$0", "name": "history-limit"}, "", false},
		{map[string]any{"scope": "window", "target": win, "name": "mode-keys"}, "vi", true},
		{map[string]any{"scope": "window", "name": "mode-keys"}, "emacs", true},
		{map[string]any{"scope": "pane", "target": pane, "name": "remain-on-exit"}, "on", true},
		{map[string]any{"scope": "session", "name": "@cmd"}, "x #(touch " + file + ") #{pid}", true},
		{map[string]any{"scope": "session", "name": "@empty"}, "", true},
		{map[string]any{"scope": "session", "name": "@unset"}, "", false},
		{map[string]any{"scope": "server", "name": "command-alias[0]"}, "split-pane=split-window", true},
	} {
		var got showOptionResult
		call(t, cs, "show_option", tc.args, &got)
		if got.Value != tc.value || got.Set != tc.set || (!got.Set && got.Note == "") {
			t.Errorf("show_option %v = %+v; want value %q set %v", tc.args, got, tc.value, tc.set)
		}
	}
	if _, err := os.Stat(file); err == nil {
		t.Errorf("reading an option ran its #() command: %s exists", file)
	}
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"scope": "server", "name": "-g"}, "not valid"},
		{map[string]any{"scope": "server", "name": "status;kill-server"}, "not valid"},
		{map[string]any{"scope": "server", "name": "#{pid}"}, "not valid"},
		{map[string]any{"scope": "server", "name": "no-such-option"}, "no option"},
		{map[string]any{"scope": "pane", "name": "remain-on-exit"}, "needs target"},
		{map[string]any{"scope": "server", "target": "$0", "name": "exit-empty"}, "takes no target"},
		{map[string]any{"scope": "global", "name": "status"}, "not one of"},
		{map[string]any{"scope": "window", "target": pane, "name": "mode-keys"}, "not a tmux window id"},
		{map[string]any{"scope": "pane", "target": "%99", "name": "remain-on-exit"}, "no pane %99"},
	} {
		callErr(t, cs, "show_option", tc.args, tc.want)
	}
	// The server still runs after the name that looked like a command.
	ts.Run("has-session", "-t", "=opt")
}

func TestShowEnvironment(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	shPane(t, ts, "env")
	ts.Run("set-environment", "-t", "$0", "FOO", "bar baz=1")
	ts.Run("set-environment", "-t", "$0", "-r", "GONE")
	ts.Run("set-environment", "-g", "GLOBALVAR", "g")
	cs := connect(t, ts, Deps{})
	var got showEnvironmentResult
	call(t, cs, "show_environment", map[string]any{"sessionId": "$0"}, &got)
	vars := map[string]envVar{}
	for _, v := range got.Variables {
		vars[v.Name] = v
	}
	if vars["FOO"].Value != "bar baz=1" || !vars["GONE"].Removed || vars["GLOBALVAR"].Name != "" {
		t.Errorf("session environment = %+v", got.Variables)
	}
	call(t, cs, "show_environment", map[string]any{}, &got)
	found := false
	for _, v := range got.Variables {
		found = found || v.Name == "GLOBALVAR" && v.Value == "g"
	}
	if !found {
		t.Errorf("global environment lacks GLOBALVAR: %+v", got.Variables)
	}
	call(t, cs, "show_environment", map[string]any{"name": "GLOBALVAR"}, &got)
	if len(got.Variables) != 1 || got.Variables[0].Value != "g" {
		t.Errorf("one variable = %+v", got)
	}
	call(t, cs, "show_environment", map[string]any{"sessionId": "$0", "name": "NOPE"}, &got)
	if len(got.Variables) != 0 || !strings.Contains(got.Note, "NOPE is not") {
		t.Errorf("unknown variable = %+v", got)
	}
	cs2 := connect(t, ts, Deps{Limits: Limits{MaxResultLines: 2}})
	call(t, cs2, "show_environment", map[string]any{}, &got)
	if len(got.Variables) != 2 || got.DroppedVariables == 0 || got.Note == "" {
		t.Errorf("bounded environment = %+v", got)
	}
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"name": "A-B"}, "not valid"},
		{map[string]any{"name": "$(id)"}, "not valid"},
		{map[string]any{"sessionId": "env"}, "not a tmux session id"},
		{map[string]any{"sessionId": "$9"}, "no session $9"},
	} {
		callErr(t, cs, "show_environment", tc.args, tc.want)
	}
}

func TestShowHooks(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := shPane(t, ts, "hooks")
	ts.Run("set-hook", "-g", "after-new-window", "display-message hi")
	ts.Run("set-hook", "-p", "-t", pane, "pane-focus-in", "display-message focus")
	cs := connect(t, ts, Deps{})
	var got showHooksResult
	call(t, cs, "show_hooks", map[string]any{"scope": "session"}, &got)
	if len(got.Hooks) != 1 || got.Hooks[0].Name != "after-new-window[0]" || got.Hooks[0].Command != "display-message hi" {
		t.Errorf("global session hooks = %+v", got)
	}
	call(t, cs, "show_hooks", map[string]any{"scope": "pane", "target": pane}, &got)
	if len(got.Hooks) != 1 || got.Hooks[0].Name != "pane-focus-in[0]" || got.Hooks[0].Command != "display-message focus" {
		t.Errorf("pane hooks = %+v", got)
	}
	call(t, cs, "show_hooks", map[string]any{"scope": "session", "target": "$0"}, &got)
	if len(got.Hooks) != 0 {
		t.Errorf("session $0's own hooks = %+v; want none", got)
	}
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"scope": "server"}, "no hooks of its own"},
		{map[string]any{"scope": "pane"}, "needs target"},
		{map[string]any{"scope": "pane", "target": "%99"}, "no pane %99"},
		{map[string]any{"scope": "session", "target": "hooks"}, "not a tmux session id"},
	} {
		callErr(t, cs, "show_hooks", tc.args, tc.want)
	}
}

func TestGetTmuxVariables(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := shPane(t, ts, "vars")
	file := filepath.Join(ts.Dir, "pwned")
	// A title that is itself a format: reading it must not run it.
	ts.Run("select-pane", "-t", pane, "-T", tmux.Literal("#(touch "+file+")")) // -T expands formats
	cs := connect(t, ts, Deps{})
	var got tmuxVariablesResult
	call(t, cs, "get_tmux_variables", map[string]any{"names": []string{"session_name", "window_zoomed_flag", "pane_id", "pane_title", "no_such_variable"}, "target": pane}, &got)
	want := map[string]string{"session_name": "vars", "window_zoomed_flag": "0", "pane_id": pane, "pane_title": "#(touch " + file + ")", "no_such_variable": ""}
	for k, v := range want {
		if got.Variables[k] != v {
			t.Errorf("%s = %q; want %q (all: %v)", k, got.Variables[k], v, got.Variables)
		}
	}
	call(t, cs, "get_tmux_variables", map[string]any{"names": []string{"session_id"}, "target": "$0"}, &got)
	if got.Variables["session_id"] != "$0" {
		t.Errorf("session target = %v", got.Variables)
	}
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"names": []string{"#(touch " + file + ")"}, "target": pane}, "not a format variable name"},
		{map[string]any{"names": []string{"#{pid}"}}, "not a format variable name"},
		{map[string]any{"names": []string{"pid}#(touch " + file + ")#{pid"}}, "not a format variable name"},
		{map[string]any{"names": []string{"E:status-left"}}, "not a format variable name"},
		{map[string]any{"names": []string{"Pane_id"}}, "not a format variable name"},
		{map[string]any{"names": []string{}}, "give 1 to 32 names"},
		{map[string]any{"names": make([]string, 33)}, "give 1 to 32 names"},
		{map[string]any{"names": []string{"pane_id"}, "target": "%99"}, "no pane %99"},
		{map[string]any{"names": []string{"pane_id"}, "target": "vars"}, "not a pane, window or session id"},
	} {
		callErr(t, cs, "get_tmux_variables", tc.args, tc.want)
	}
	if _, err := os.Stat(file); err == nil {
		t.Fatalf("%s exists: a caller's string ran as a format", file)
	}
}

// TestNewInspectToolsMakeOneTmuxCall: each answer comes from one tmux
// invocation (search_panes takes two: the panes, then their text).
func TestNewInspectToolsMakeOneTmuxCall(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := shPane(t, ts, "one")
	win := strings.TrimSpace(ts.Run("display", "-p", "-t", pane, "#{window_id}"))
	cs, client := serve(t, ts, Deps{})
	for _, tc := range []struct {
		tool  string
		args  map[string]any
		calls int64
	}{
		{"snapshot_pane", map[string]any{"paneId": pane}, 1},
		{"find_pane_by_position", map[string]any{"windowId": win, "x": 1, "y": 1}, 1},
		{"show_option", map[string]any{"scope": "server", "name": "escape-time"}, 1},
		{"show_environment", map[string]any{}, 1},
		{"show_hooks", map[string]any{"scope": "session"}, 1},
		{"get_tmux_variables", map[string]any{"names": []string{"pane_id"}, "target": pane}, 1},
		{"search_panes", map[string]any{"pattern": "x"}, 2},
	} {
		before := client.Calls()
		call(t, cs, tc.tool, tc.args, nil)
		if n := client.Calls() - before; n != tc.calls {
			t.Errorf("%s made %d tmux calls; want %d", tc.tool, n, tc.calls)
		}
	}
	_ = context.Background
}

// TestSearchPanesPaneLimitForReal searches 201 panes: the first 200 are
// read in one tmux call, and the answer says the pane limit stopped it.
func TestSearchPanesPaneLimitForReal(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	first := ts.NewSession("many", "cat")
	// In batches: tmux 3.7c refuses a command line of more than about
	// 1,000 arguments. "cat -" as two arguments: tmux starts cat itself,
	// where one argument would start a shell to run it (a third of each
	// window's cost here).
	for b := 0; b < 4; b++ {
		args := []string{}
		for i := 0; i < 50; i++ {
			args = append(args, "new-window", "-d", "-t", "=many:", "cat", "-", ";")
		}
		ts.Run(args[:len(args)-1]...)
	}
	ts.Type(first, "findme", true) // cat echoes it: the tty's echo and cat's copy
	ts.WaitFor(first, func(s string) bool { return strings.Count(s, "findme") == 2 })
	cs := connect(t, ts, Deps{})
	var got searchPanesResult
	call(t, cs, "search_panes", map[string]any{"pattern": "findme"}, &got)
	if got.StoppedBy != "panes" || got.PanesSearched != 200 || len(got.Matches) != 2 || got.Matches[0].PaneID != first {
		t.Errorf("search of 201 panes = stoppedBy %q, %d panes, matches %+v, note %q; %s", got.StoppedBy, got.PanesSearched, got.Matches, got.Note, ts.Run("list-sessions"))
	}
}
