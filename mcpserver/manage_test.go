package mcpserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connectAll is connect with every toolset selected (a test server's
// provenance would leave teardown out), and the caller's pane when given.
func connectAll(t *testing.T, ts *tmuxtest.Server, callerPane string, d Deps) *mcp.ClientSession {
	t.Helper()
	if callerPane != "" {
		info, err := ts.Client.Info(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		d.CallerTMUX, d.CallerPane = fmt.Sprintf("%s,%d,0", info.SocketPath, info.PID), callerPane
	}
	d.Selection = Selection{Toolsets: Toolsets, Tools: ToolNames()}
	return connect(t, ts, d)
}

// tmuxSays reads one format for target straight from tmux: what it stores,
// whatever the tool answered.
func tmuxSays(ts *tmuxtest.Server, target, format string) string {
	return strings.TrimSuffix(ts.Run("display-message", "-p", "-t", target, format), "\n")
}

func TestCreateSessionWindowAndSplit(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	cs := connectAll(t, ts, "", Deps{})
	dir := filepath.Join(ts.Dir, "start")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}

	var sess createSessionResult
	call(t, cs, "create_session", map[string]any{"sessionName": "work", "width": 100, "height": 30, "startDirectory": dir}, &sess)
	if got := tmuxSays(ts, sess.PaneID, "#{session_id} #{window_id} #{session_name} #{window_width}x#{window_height}"); got != sess.SessionID+" "+sess.WindowID+" work 100x30" {
		t.Errorf("tmux reports %q for the new session; the tool answered %+v", got, sess)
	}
	if sess.Width != 100 || sess.Height != 30 || sess.SessionName != "work" || sess.Note != "" {
		t.Errorf("create_session answered %+v", sess)
	}
	tmuxtest.Eventually(t, 10*time.Second, "the shell starting in "+dir, func() bool { return tmuxSays(ts, sess.PaneID, "#{pane_current_path}") == dir })

	var renamed createSessionResult
	call(t, cs, "create_session", map[string]any{"sessionName": "a:b.c"}, &renamed)
	// tmux 3.2a to 3.6a store "a_b_c"; 3.7c keeps the name. The note says
	// so exactly when the stored name differs.
	if stored := tmuxSays(ts, renamed.SessionID, "#{session_name}"); renamed.SessionName != stored || (stored != "a:b.c") != strings.Contains(renamed.Note, stored) {
		t.Errorf("create_session a:b.c answered %+v; tmux stored %q", renamed, stored)
	}
	callErr(t, cs, "create_session", map[string]any{"sessionName": "work"}, "exists already")
	callErr(t, cs, "create_session", map[string]any{"width": 5000}, "out of range")
	callErr(t, cs, "create_session", map[string]any{"startDirectory": "relative/dir"}, "not absolute")
	callErr(t, cs, "create_session", map[string]any{"startDirectory": filepath.Join(dir, "missing")}, "not a directory")
	callErr(t, cs, "split_window", map[string]any{"paneId": sess.PaneID, "startDirectory": filepath.Join(dir, "missing")}, "not a directory")

	var win createWindowResult
	call(t, cs, "create_window", map[string]any{"sessionName": "work", "name": "logs", "startDirectory": dir}, &win)
	if got := tmuxSays(ts, win.PaneID, "#{window_id} #{session_id} #{window_name} #{window_index}"); got != fmt.Sprintf("%s %s logs %d", win.WindowID, sess.SessionID, win.Index) {
		t.Errorf("tmux reports %q for the new window; the tool answered %+v", got, win)
	}
	if tmuxSays(ts, sess.WindowID, "#{window_active}") != "1" {
		t.Errorf("create_window switched the session away from its current window")
	}
	call(t, cs, "create_window", map[string]any{"sessionId": sess.SessionID}, nil)
	callErr(t, cs, "create_window", map[string]any{"sessionName": "nope"}, "call list_sessions")
	callErr(t, cs, "create_window", map[string]any{"sessionId": "$999"}, "call list_sessions")
	callErr(t, cs, "create_window", map[string]any{"sessionId": "work"}, "not a tmux session id")
	callErr(t, cs, "create_window", map[string]any{}, "exactly one of sessionId")
	// "=work:1" would be window 1 of session work, not a session name.
	callErr(t, cs, "create_window", map[string]any{"sessionName": "work:1"}, "stores ':' and '.'")
	callErr(t, cs, "kill_session", map[string]any{"sessionName": "work.0"}, "stores ':' and '.'")
	// A session whose stored name holds ':' (tmux 3.7c keeps it) is found by
	// its exact name, not read as a window of another session.
	if renamed.SessionName == "a:b.c" {
		var w createWindowResult
		call(t, cs, "create_window", map[string]any{"sessionName": "a:b.c"}, &w)
		if w.SessionID != renamed.SessionID {
			t.Errorf("create_window in the session named a:b.c landed in %s; want %s", w.SessionID, renamed.SessionID)
		}
	}
	callErr(t, cs, "kill_session", map[string]any{"sessionName": sess.SessionID}, "reads as a session id")

	var split splitWindowResult
	call(t, cs, "split_window", map[string]any{"paneId": sess.PaneID, "direction": "horizontal", "size": 30}, &split)
	if got := tmuxSays(ts, split.PaneID, "#{window_id} #{pane_width} #{window_panes}"); got != fmt.Sprintf("%s %d 2", sess.WindowID, split.Width) {
		t.Errorf("tmux reports %q for the new pane; the tool answered %+v", got, split)
	}
	if split.Width >= 50 || split.Height != 30 {
		t.Errorf("a 30%% side-by-side split of a 100x30 pane is %dx%d", split.Width, split.Height)
	}
	if tmuxSays(ts, sess.PaneID, "#{pane_active}") != "1" {
		t.Errorf("split_window moved the focus to the new pane")
	}
	var stacked splitWindowResult
	call(t, cs, "split_window", map[string]any{"paneId": sess.PaneID}, &stacked)
	if stacked.Width != tmuxSays2Int(t, ts, sess.PaneID, "#{pane_width}") {
		t.Errorf("a default (vertical) split should keep the pane's width: %+v", stacked)
	}
	callErr(t, cs, "split_window", map[string]any{"paneId": sess.PaneID, "direction": "diagonal"}, "neither horizontal")
	callErr(t, cs, "split_window", map[string]any{"paneId": sess.PaneID, "size": 100}, "1 to 99")
	callErr(t, cs, "split_window", map[string]any{"paneId": "3"}, "not a tmux pane id")
	callErr(t, cs, "split_window", map[string]any{"paneId": "%999"}, "call list_panes")
}

func tmuxSays2Int(t *testing.T, ts *tmuxtest.Server, target, format string) int {
	t.Helper()
	n, err := strconv.Atoi(tmuxSays(ts, target, format))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestRenameTitleResizeSelect(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := ts.NewSession("one", "sh")
	other := strings.TrimSpace(ts.Run("split-window", "-d", "-P", "-F", "#{pane_id}", "-t", pane, "sh"))
	window := tmuxSays(ts, pane, "#{window_id}")
	session := tmuxSays(ts, pane, "#{session_id}")
	second := strings.TrimSpace(ts.Run("new-window", "-d", "-P", "-F", "#{window_id}", "-t", session+":", "sh"))
	cs := connectAll(t, ts, "", Deps{})

	var rs renameSessionResult
	call(t, cs, "rename_session", map[string]any{"sessionName": "one", "name": "two"}, &rs)
	if got := tmuxSays(ts, session, "#{session_name}"); got != "two" || rs.Name != "two" || rs.SessionID != session {
		t.Errorf("rename_session answered %+v; tmux stored %q", rs, got)
	}
	call(t, cs, "rename_session", map[string]any{"sessionId": session, "name": "x.y"}, &rs)
	// tmux 3.2a to 3.6a store "x_y", 3.7c "x.y"; the note says so exactly
	// when the name changed.
	if got := tmuxSays(ts, session, "#{session_name}"); (got != "x_y" && got != "x.y") || rs.Name != got || (rs.Note == "") != (got == "x.y") {
		t.Errorf("rename_session to x.y answered %+v; tmux stored %q", rs, got)
	}
	callErr(t, cs, "rename_session", map[string]any{"sessionName": "one", "name": "three"}, "call list_sessions")
	callErr(t, cs, "rename_session", map[string]any{"sessionId": session, "name": ""}, "is empty")

	var rw renameWindowResult
	call(t, cs, "rename_window", map[string]any{"windowId": window, "name": "editor"}, &rw)
	if got := tmuxSays(ts, window, "#{window_name}"); got != "editor" || rw.Name != got {
		t.Errorf("rename_window answered %+v; tmux stored %q", rw, got)
	}
	callErr(t, cs, "rename_window", map[string]any{"windowId": "@999", "name": "x"}, "call list_windows")
	callErr(t, cs, "rename_window", map[string]any{"windowId": "2", "name": "x"}, "not a tmux window id")

	var title setPaneTitleResult
	call(t, cs, "set_pane_title", map[string]any{"paneId": pane, "title": "server ✓"}, &title)
	if got := tmuxSays(ts, pane, "#{pane_title}"); got != "server ✓" || title.Title != got {
		t.Errorf("set_pane_title answered %+v; tmux stored %q", title, got)
	}
	callErr(t, cs, "set_pane_title", map[string]any{"paneId": "%999", "title": "x"}, "call list_panes")

	var rp resizePaneResult
	call(t, cs, "resize_pane", map[string]any{"paneId": pane, "height": 10}, &rp)
	if got := tmuxSays(ts, pane, "#{pane_height}"); got != "10" || rp.Height != 10 {
		t.Errorf("resize_pane answered %+v; tmux reports height %s", rp, got)
	}
	call(t, cs, "resize_pane", map[string]any{"paneId": pane, "zoom": true}, &rp)
	if got := tmuxSays(ts, pane, "#{window_zoomed_flag}"); got != "1" || !rp.Zoomed {
		t.Errorf("zoom answered %+v; tmux reports zoomed=%s", rp, got)
	}
	call(t, cs, "resize_pane", map[string]any{"paneId": pane, "zoom": true}, &rp)
	if got := tmuxSays(ts, pane, "#{window_zoomed_flag}"); got != "0" || rp.Zoomed {
		t.Errorf("a second zoom should unzoom: answered %+v; tmux reports zoomed=%s", rp, got)
	}
	callErr(t, cs, "resize_pane", map[string]any{"paneId": pane, "zoom": true, "width": 5}, "not both")
	callErr(t, cs, "resize_pane", map[string]any{"paneId": pane}, "give width")
	callErr(t, cs, "resize_pane", map[string]any{"paneId": "%999", "width": 5}, "call list_panes")

	var rwin resizeWindowResult
	call(t, cs, "resize_window", map[string]any{"windowId": window, "width": 150, "height": 40}, &rwin)
	if got := tmuxSays(ts, window, "#{window_width}x#{window_height}"); got != "150x40" || rwin.Width != 150 || rwin.Height != 40 {
		t.Errorf("resize_window answered %+v; tmux reports %s", rwin, got)
	}
	callErr(t, cs, "resize_window", map[string]any{"windowId": window}, "give width")
	callErr(t, cs, "resize_window", map[string]any{"windowId": "@999", "width": 90}, "call list_windows")

	var sp selectPaneResult
	call(t, cs, "select_pane", map[string]any{"paneId": other}, &sp)
	if got := tmuxSays(ts, other, "#{pane_active}"); got != "1" || !sp.Active || sp.WindowID != window {
		t.Errorf("select_pane answered %+v; tmux reports active=%s", sp, got)
	}
	callErr(t, cs, "select_pane", map[string]any{"paneId": "%999"}, "call list_panes")

	var sw selectWindowResult
	call(t, cs, "select_window", map[string]any{"windowId": second}, &sw)
	if got := tmuxSays(ts, second, "#{window_active}"); got != "1" || !sw.Active || sw.SessionID != session {
		t.Errorf("select_window answered %+v; tmux reports active=%s", sw, got)
	}
	callErr(t, cs, "select_window", map[string]any{"windowId": "@999"}, "call list_windows")
}

func TestSelectLayout(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := ts.NewSession("lay", "sh")
	ts.Run("split-window", "-d", "-t", pane, "sh")
	ts.Run("split-window", "-d", "-t", pane, "sh")
	window := tmuxSays(ts, pane, "#{window_id}")
	pid := tmuxSays(ts, pane, "#{pid}")
	cs := connectAll(t, ts, "", Deps{})

	var saved listWindowsResult
	call(t, cs, "list_windows", nil, &saved)
	layout := saved.Windows[0].Layout

	var got selectLayoutResult
	for _, name := range []string{"even-horizontal", "even-v", "main-h", "main-vertical", "t"} {
		call(t, cs, "select_layout", map[string]any{"windowId": window, "layout": name}, &got)
		if now := tmuxSays(ts, window, "#{window_layout}"); got.Layout != now {
			t.Errorf("select_layout %s answered %q; tmux reports %q", name, got.Layout, now)
		}
	}
	call(t, cs, "select_layout", map[string]any{"windowId": window, "layout": layout}, &got)
	if now := tmuxSays(ts, window, "#{window_layout}"); now != layout || got.Layout != layout {
		t.Errorf("restoring %q answered %q; tmux reports %q", layout, got.Layout, now)
	}
	// Each of these crashes a tmux 3.3a server if it reaches select-layout.
	for _, bad := range []string{"e", "m", "main", "tiled#", "zzzz", "", "bar", layout[:4] + "x" + layout[5:]} {
		callErr(t, cs, "select_layout", map[string]any{"windowId": window, "layout": bad}, "layout")
	}
	wrongSum := "0000" + layout[4:]
	callErr(t, cs, "select_layout", map[string]any{"windowId": window, "layout": wrongSum}, "checksum")
	// A well-formed layout for too few panes is tmux's to refuse.
	one := fmt.Sprintf("%04x,80x24,0,0,0", layoutChecksum("80x24,0,0,0"))
	callErr(t, cs, "select_layout", map[string]any{"windowId": window, "layout": one}, "panes")
	callErr(t, cs, "select_layout", map[string]any{"windowId": "@999", "layout": "tiled"}, "call list_windows")
	if now := tmuxSays(ts, pane, "#{pid}"); now != pid {
		t.Fatalf("the tmux server changed from pid %s to %s: a refused layout reached it", pid, now)
	}
}

func TestResolveLayout(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want, err string
	}{
		{"tiled", "tiled", ""},
		{"t", "tiled", ""},                 // the only layout starting with t
		{"even-h", "even-horizontal", ""},  // unique prefix
		{"even", "", "could be"},           // two layouts start with even
		{"m", "", "could be"},              // two layouts start with m
		{"main-vertical-x", "", "neither"}, // longer than any name
		{"9295,80x24,0,0[80x11,0,0,0,80x12,0,12,1]", "9295,80x24,0,0[80x11,0,0,0,80x12,0,12,1]", ""}, // as tmux printed it
		{"9296,80x24,0,0[80x11,0,0,0,80x12,0,12,1]", "", "checksum"},
		{"9295,80x24,0,0[80x11,0,0,0,80x12,0,12,1];kill-server", "", "neither"}, // only layout characters
		{"#{pid}", "", "neither"},
		{"", "", "empty"},
	} {
		got, err := resolveLayout(tc.in)
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("resolveLayout(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("resolveLayout(%q) = %q, %v; want an error containing %q", tc.in, got, err, tc.err)
		}
	}
}

func TestSwapMoveAndOptions(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	a := ts.NewSession("a", "sh")
	b := strings.TrimSpace(ts.Run("split-window", "-d", "-P", "-F", "#{pane_id}", "-t", a, "sh"))
	c := ts.NewSession("c", "sh")
	winA := tmuxSays(ts, a, "#{window_id}")
	sessA, sessC := tmuxSays(ts, a, "#{session_id}"), tmuxSays(ts, c, "#{session_id}")
	extra := strings.TrimSpace(ts.Run("new-window", "-d", "-P", "-F", "#{window_id}", "-t", sessA+":", "sh"))
	cs := connectAll(t, ts, "", Deps{})

	before := tmuxSays(ts, a, "#{pane_index}")
	var sw swapPaneResult
	call(t, cs, "swap_pane", map[string]any{"paneId": a, "targetPaneId": b}, &sw)
	if after := tmuxSays(ts, b, "#{pane_index}"); after != before || sw.WindowID != winA || sw.TargetWindowID != winA {
		t.Errorf("after swap_pane %+v, %s sits at index %s; want %s (where %s was)", sw, b, after, before, a)
	}
	winC := tmuxSays(ts, c, "#{window_id}")
	call(t, cs, "swap_pane", map[string]any{"paneId": a, "targetPaneId": c}, &sw)
	if sw.WindowID != winC || sw.TargetWindowID != winA || tmuxSays(ts, a, "#{session_id}") != sessC {
		t.Errorf("swap_pane across sessions answered %+v; %s is now in %s", sw, a, tmuxSays(ts, a, "#{session_id}"))
	}
	callErr(t, cs, "swap_pane", map[string]any{"paneId": a, "targetPaneId": a}, "same pane")
	callErr(t, cs, "swap_pane", map[string]any{"paneId": a, "targetPaneId": "%999"}, "no pane %999")
	callErr(t, cs, "swap_pane", map[string]any{"paneId": "%998", "targetPaneId": a}, "no pane %998")

	var mw moveWindowResult
	call(t, cs, "move_window", map[string]any{"windowId": extra, "sessionId": sessC, "index": 7}, &mw)
	if got := tmuxSays(ts, extra, "#{session_id} #{window_index}"); got != sessC+" 7" || mw.SessionID != sessC || mw.Index != 7 {
		t.Errorf("move_window answered %+v; tmux reports %s", mw, got)
	}
	callErr(t, cs, "move_window", map[string]any{"windowId": extra, "sessionId": "$999"}, "no session $999")
	callErr(t, cs, "move_window", map[string]any{"windowId": "@999", "sessionId": sessC}, "no window @999")
	callErr(t, cs, "move_window", map[string]any{"windowId": extra, "sessionId": sessC, "index": -1}, "out of range")
	// tmux's own refusals come back as tmux said them, without the command line.
	taken := tmuxSays(ts, c, "#{window_index}")
	msg := callErr(t, cs, "move_window", map[string]any{"windowId": extra, "sessionId": sessC, "index": tmuxSays2Int(t, ts, c, "#{window_index}")}, "tmux refused: ")
	if !strings.HasPrefix(msg, "tmux refused: ") || !strings.Contains(msg, taken) || strings.Contains(msg, ts.Socket) {
		t.Errorf("moving onto a used index answered %q", msg)
	}

	var mouse setMouseEnabledResult
	call(t, cs, "set_mouse_enabled", map[string]any{"sessionId": sessC, "enabled": true}, &mouse)
	if got := strings.TrimSpace(ts.Run("show-options", "-v", "-t", sessC, "mouse")); got != "on" || !mouse.Enabled || mouse.Scope != sessC {
		t.Errorf("set_mouse_enabled answered %+v; tmux reports %s", mouse, got)
	}
	call(t, cs, "set_mouse_enabled", map[string]any{"enabled": false}, &mouse)
	if got := strings.TrimSpace(ts.Run("show-options", "-g", "-v", "mouse")); got != "off" || mouse.Enabled || mouse.Scope != "global" {
		t.Errorf("global set_mouse_enabled answered %+v; tmux reports %s", mouse, got)
	}
	callErr(t, cs, "set_mouse_enabled", map[string]any{"sessionId": "$999", "enabled": true}, "call list_sessions")

	var hist setHistoryLimitResult
	call(t, cs, "set_history_limit", map[string]any{"lines": 1234}, &hist)
	if got := strings.TrimSpace(ts.Run("show-options", "-g", "-v", "history-limit")); got != "1234" || hist.Lines != 1234 {
		t.Errorf("set_history_limit answered %+v; tmux reports %s", hist, got)
	}
	call(t, cs, "set_history_limit", map[string]any{"sessionId": sessC, "lines": 777}, &hist)
	if got := strings.TrimSpace(ts.Run("show-options", "-v", "-t", sessC, "history-limit")); got != "777" || hist.Scope != sessC {
		t.Errorf("set_history_limit on %s answered %+v; tmux reports %s", sessC, hist, got)
	}
	callErr(t, cs, "set_history_limit", map[string]any{"lines": -1}, "out of range")
	callErr(t, cs, "set_history_limit", map[string]any{"lines": 5000000}, "out of range")
	callErr(t, cs, "set_history_limit", map[string]any{"sessionId": "x", "lines": 5}, "not a tmux session id")

	var sync setSynchronizePanesResult
	call(t, cs, "set_synchronize_panes", map[string]any{"windowId": winA, "enabled": true}, &sync)
	if got := strings.TrimSpace(ts.Run("show-options", "-w", "-v", "-t", winA, "synchronize-panes")); got != "on" || !sync.Enabled {
		t.Errorf("set_synchronize_panes answered %+v; tmux reports %s", sync, got)
	}
	call(t, cs, "set_synchronize_panes", map[string]any{"windowId": winA, "enabled": false}, &sync)
	if got := strings.TrimSpace(ts.Run("show-options", "-w", "-v", "-t", winA, "synchronize-panes")); got != "off" || sync.Enabled {
		t.Errorf("set_synchronize_panes off answered %+v; tmux reports %s", sync, got)
	}
	callErr(t, cs, "set_synchronize_panes", map[string]any{"windowId": "@999", "enabled": true}, "call list_windows")
}

func TestRespawnPane(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	ts.Run("set-option", "-g", "remain-on-exit", "on")
	pane := ts.NewSession("r", "sh", "-c", "exit 3")
	tmuxtest.Eventually(t, 10*time.Second, "the pane dying", func() bool { return tmuxSays(ts, pane, "#{pane_dead}") == "1" })
	caller := ts.NewSession("me", "sh")
	cs := connectAll(t, ts, caller, Deps{})

	var res respawnPaneResult
	call(t, cs, "respawn_pane", map[string]any{"paneId": pane}, &res)
	if got := tmuxSays(ts, pane, "#{pane_pid}"); got != strconv.Itoa(res.PID) || res.PaneID != pane {
		t.Errorf("respawn_pane answered %+v; tmux reports pid %s", res, got)
	}

	old := tmuxSays(ts, caller, "#{pane_pid}")
	callErr(t, cs, "respawn_pane", map[string]any{"paneId": caller}, `pass force:"`+caller+`"`)
	callErr(t, cs, "respawn_pane", map[string]any{"paneId": caller, "force": pane}, "not this MCP server's own pane")
	if now := tmuxSays(ts, caller, "#{pane_pid}"); now != old {
		t.Fatalf("a refused respawn restarted the caller's pane (pid %s -> %s)", old, now)
	}
	call(t, cs, "respawn_pane", map[string]any{"paneId": caller, "force": caller}, &res)
	if res.PreviousPID == res.PID || strconv.Itoa(res.PreviousPID) != old {
		t.Errorf("forced respawn answered %+v; the pane's pid was %s", res, old)
	}
	callErr(t, cs, "respawn_pane", map[string]any{"paneId": "%999"}, "call list_panes")
	callErr(t, cs, "respawn_pane", map[string]any{"paneId": "pane"}, "not a tmux pane id")
}
