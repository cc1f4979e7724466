package mcpserver

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
)

// TestRowsKeepOddValues reads names, a title and a path holding
// backslashes, text that looks like an octal escape or a separator, a tab
// and control characters, and checks every row against what tmux itself
// prints for that one value. On tmux 3.4 and 3.5a, which print control
// characters in -F and display output as octal escapes, a parser that
// split rows on control bytes failed at the first row (and so did the
// server's startup).
func TestRowsKeepOddValues(t *testing.T) {
	ts := tmuxtest.Start(t)
	dir := filepath.Join(ts.Dir, "d\tx\\037\x01y<f0>")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	pane := ts.NewSession("", "-c", dir, "sh")
	session := tmuxSays(ts, pane, "#{session_id}")
	window := tmuxSays(ts, pane, "#{window_id}")
	ts.Run("rename-session", "-t", session, `odd\name\037 <f0>`)
	ts.Run("rename-window", "-t", window, `w\x\037y ##`)
	// A program sets the title it wants (OSC 2), separators and escapes included.
	ts.Run("select-pane", "-t", pane, "-T", `t\037\036 <r0> title`)
	cs := connectAll(t, ts, "", Deps{})

	var sessions listSessionsResult
	call(t, cs, "list_sessions", nil, &sessions)
	if len(sessions.Sessions) != 1 || sessions.Sessions[0].Name != tmuxSays(ts, session, "#{session_name}") {
		t.Errorf("list_sessions = %+v; tmux says the name is %q", sessions.Sessions, tmuxSays(ts, session, "#{session_name}"))
	}
	var windows listWindowsResult
	call(t, cs, "list_windows", nil, &windows)
	if len(windows.Windows) != 1 || windows.Windows[0].Name != tmuxSays(ts, window, "#{window_name}") {
		t.Errorf("list_windows = %+v; tmux says the name is %q", windows.Windows, tmuxSays(ts, window, "#{window_name}"))
	}
	var panes listPanesResult
	call(t, cs, "list_panes", nil, &panes)
	if len(panes.Panes) != 1 || panes.Panes[0].PaneID != pane || panes.Panes[0].SessionName != sessions.Sessions[0].Name {
		t.Errorf("list_panes = %+v", panes.Panes)
	}
	var snap snapshotPaneResult
	call(t, cs, "snapshot_pane", map[string]any{"paneId": pane}, &snap)
	if want := tmuxSays(ts, pane, "#{pane_title}"); snap.Title != want {
		t.Errorf("snapshot_pane title %q; tmux says %q", snap.Title, want)
	}
	if want := tmuxSays(ts, pane, "#{pane_current_path}"); snap.CurrentPath != want {
		t.Errorf("snapshot_pane path %q; tmux says %q", snap.CurrentPath, want)
	}
}

// TestCreateSessionSizeUnderDefaultWindowSize asks for a size under tmux's
// default window-size (latest): tmux 3.2a made such a detached session
// 80x24 whatever -x and -y said.
func TestCreateSessionSizeUnderDefaultWindowSize(t *testing.T) {
	ts := tmuxtest.Start(t)
	ts.Run("set", "-g", "window-size", "latest")
	cs := connectAll(t, ts, "", Deps{})
	var sess createSessionResult
	call(t, cs, "create_session", map[string]any{"width": 100, "height": 30}, &sess)
	if got := tmuxSays(ts, sess.WindowID, "#{window_width}x#{window_height}"); got != "100x30" || sess.Width != 100 || sess.Height != 30 {
		t.Errorf("tmux reports %s; create_session answered %dx%d; want 100x30", got, sess.Width, sess.Height)
	}
}
