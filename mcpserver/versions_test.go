package mcpserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	t.Parallel()
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
	// tmux reads the path from the pane's process, which may not have
	// started yet.
	tmuxtest.Eventually(t, 10*time.Second, "the pane's path", func() bool { return tmuxSays(ts, pane, "#{pane_current_path}") != "" })
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
// 80x24 whatever -x and -y said, and the pane's first program, started at
// 80x24, could miss the resize that followed. Here that program records
// the size it started with.
func TestCreateSessionSizeUnderDefaultWindowSize(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	first := filepath.Join(ts.Dir, "first-size")
	ts.Run("set", "-g", "window-size", "latest", ";",
		"set", "-g", "default-command", `stty size > '`+first+`.tmp' && mv '`+first+`.tmp' '`+first+`'; exec cat`)
	cs := connectAll(t, ts, "", Deps{})
	var sess createSessionResult
	call(t, cs, "create_session", map[string]any{"width": 100, "height": 30}, &sess)
	if got := tmuxSays(ts, sess.WindowID, "#{window_width}x#{window_height}"); got != "100x30" || sess.Width != 100 || sess.Height != 30 {
		t.Errorf("tmux reports %s; create_session answered %dx%d; want 100x30", got, sess.Width, sess.Height)
	}
	tmuxtest.WaitFile(t, first)
	if got, _ := os.ReadFile(first); string(got) != "30 100\n" {
		t.Errorf("the pane's program started with a %q terminal (rows columns); want 30 100", strings.TrimSpace(string(got)))
	}
	if ws := strings.TrimSpace(ts.Run("show-options", "-gv", "window-size")); ws != "latest" {
		t.Errorf("window-size is %q after create_session; want latest, as it was", ws)
	}
	// Born at its size, not resized after: the window keeps following the
	// person's client, as on every release (resize-window would have made
	// it manual).
	if own := strings.TrimSpace(ts.Run("show-options", "-w", "-t", sess.WindowID, "window-size")); own != "" {
		t.Errorf("the window has an option of its own, %q; want it to follow the global window-size", own)
	}
	// A window-size of the person's own is kept too, and so is it after a
	// create_session that fails.
	ts.Run("set", "-g", "window-size", "smallest")
	call(t, cs, "create_session", map[string]any{"sessionName": "twice", "width": 90, "height": 20}, &sess)
	callErr(t, cs, "create_session", map[string]any{"sessionName": "twice", "width": 90, "height": 20}, "exists already")
	if ws := strings.TrimSpace(ts.Run("show-options", "-gv", "window-size")); ws != "smallest" {
		t.Errorf("window-size is %q after create_session; want smallest, as it was", ws)
	}
}

// storage is how the tmux under test stores names and titles, probed
// with raw tmux commands (the probe holds no '#', so no format is
// involved): releases differ. 3.2a to 3.6a turn ':' and '.' in a session
// name into '_', 3.7c keeps them; 3.7c also stores a title's backslash as
// two, as every release does for session names and rename-window.
type storage struct {
	session, window, newWindow, title func(string) string
}

func probeStorage(t *testing.T, ts *tmuxtest.Server, pane string) storage {
	t.Helper()
	const probe = `a\b:c.d`
	rule := func(got string) func(string) string {
		var pairs []string
		if strings.Contains(got, `\\`) {
			pairs = append(pairs, `\`, `\\`)
		}
		if strings.Contains(got, "_c_d") {
			pairs = append(pairs, ":", "_", ".", "_")
		}
		r := strings.NewReplacer(pairs...)
		if r.Replace(probe) != got {
			t.Fatalf("tmux stored the probe %q as %q, which no known rule explains", probe, got)
		}
		return r.Replace
	}
	var st storage
	sess := strings.TrimSpace(ts.Run("new-session", "-d", "-P", "-F", "#{session_id}", "-s", probe))
	st.session = rule(tmuxSays(ts, sess, "#{session_name}"))
	ts.Run("kill-session", "-t", sess)
	win := strings.TrimSpace(ts.Run("new-window", "-d", "-P", "-F", "#{window_id}", "-t", tmuxSays(ts, pane, "#{session_id}")+":", "-n", probe))
	st.newWindow = rule(tmuxSays(ts, win, "#{window_name}"))
	ts.Run("rename-window", "-t", win, probe)
	st.window = rule(tmuxSays(ts, win, "#{window_name}"))
	ts.Run("kill-window", "-t", win)
	old := tmuxSays(ts, pane, "#{pane_title}")
	ts.Run("select-pane", "-t", pane, "-T", probe)
	st.title = rule(tmuxSays(ts, pane, "#{pane_title}"))
	ts.Run("select-pane", "-t", pane, "-T", old)
	return st
}
