package mcpserver

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
)

// TestFormatInjection hands every argument that tmux interprets (session
// and window names, pane titles, start directories, layouts, session names
// as targets) payloads that tmux would run or expand if they reached a
// format unliteralized, and checks with a raw tmux format query that tmux
// stored exactly the given text, that nothing ran (FILE never appears) and
// that the server is the same process. Control characters are refused
// before tmux sees them. The option tools take only booleans and numbers.
func TestFormatInjection(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	base := ts.NewSession("base", "sh")
	cs := connectAll(t, ts, "", Deps{})
	serverPID := tmuxSays(ts, base, "#{pid}")
	file := filepath.Join(ts.Dir, "pwned")
	payloads := []string{
		"#(touch " + file + ")",
		"#{pid}",
		"#{session_name}",
		";",
		"'",
		`"`,
		"\n",
		"a ; kill-server",
		"##{pid}##(touch " + file + ")",
		"#[fg=red]#{?pid,yes,no}#{=3:session_name}",
		"x#(touch " + file + ")#{pid};'\"\\",
	}

	// startDir makes a directory named after the payload and returns it.
	startDir := func(t *testing.T, arg string, i int, p string) string {
		d := filepath.Join(ts.Dir, fmt.Sprintf("%s%d", arg, i), p)
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		return d
	}
	waitPath := func(t *testing.T, pane, dir string) {
		t.Helper()
		var got string
		tmuxtest.Eventually(t, 10*time.Second, fmt.Sprintf("pane %s starting in %q", pane, dir), func() bool {
			got = tmuxSays(ts, pane, "#{pane_current_path}")
			return got == dir
		}, func() string { return fmt.Sprintf("it shows %q", got) })
	}
	// stored fails the test unless tmux stores want under format and the
	// tool answered it too.
	stored := func(t *testing.T, what, target, format, answered, want string) {
		t.Helper()
		if got := tmuxSays(ts, target, format); got != want || answered != want {
			t.Errorf("%s: gave %q; tool answered %q, tmux stored %q", what, want, answered, got)
		}
	}

	// rename-session, rename-window and new-session -s store a backslash
	// as two (the tools say so in a note); new-window -n and paths keep it.
	// Session names may have ':' and '.' turned into '_'; titles may have
	// their backslashes doubled: each as the tmux under test does.
	rules := probeStorage(t, ts, base)
	asName, asSession := rules.window, rules.session
	noted := func(t *testing.T, what, given, stored, note string) {
		t.Helper()
		if (stored != given) != (note != "") {
			t.Errorf("%s %q: note %q; want one exactly when tmux rewrote the name", what, given, note)
		}
	}

	// Each payload in a subtest of its own, all at once on the one server:
	// their session names, directories and windows are their own.
	t.Run("payloads", func(t *testing.T) {
		for i, p := range payloads {
			t.Run(strconv.Itoa(i), func(t *testing.T) {
				t.Parallel()
				if strings.ContainsRune(p, '\n') {
					for _, tc := range []struct {
						tool string
						args map[string]any
					}{
						{"create_session", map[string]any{"sessionName": p}},
						{"create_session", map[string]any{"startDirectory": "/tmp/" + p}},
						{"create_window", map[string]any{"sessionName": "base", "name": p}},
						{"create_window", map[string]any{"sessionName": p}},
						{"create_window", map[string]any{"sessionName": "base", "startDirectory": "/tmp/" + p}},
						{"split_window", map[string]any{"paneId": base, "startDirectory": "/tmp/" + p}},
						{"rename_session", map[string]any{"sessionName": "base", "name": p}},
						{"rename_window", map[string]any{"windowId": tmuxSays(ts, base, "#{window_id}"), "name": p}},
						{"set_pane_title", map[string]any{"paneId": base, "title": p}},
						{"kill_session", map[string]any{"sessionName": p}},
					} {
						callErr(t, cs, tc.tool, tc.args, "control character")
					}
					callErr(t, cs, "select_layout", map[string]any{"windowId": tmuxSays(ts, base, "#{window_id}"), "layout": p}, "layout")
					return
				}
				name := fmt.Sprintf("s%d%s", i, p) // session names must be unique

				var sess createSessionResult
				call(t, cs, "create_session", map[string]any{"sessionName": name, "startDirectory": startDir(t, "cs", i, p)}, &sess)
				stored(t, "create_session sessionName", sess.SessionID, "#{session_name}", sess.SessionName, asSession(name))
				noted(t, "create_session", name, asSession(name), sess.Note)
				waitPath(t, sess.PaneID, startDir(t, "cs", i, p))

				// The name as an exact target (=name) is never expanded either.
				var win createWindowResult
				call(t, cs, "create_window", map[string]any{"sessionName": asSession(name), "name": p, "startDirectory": startDir(t, "cw", i, p)}, &win)
				if win.SessionID != sess.SessionID {
					t.Errorf("create_window in session %q landed in %s; want %s", name, win.SessionID, sess.SessionID)
				}
				stored(t, "create_window name", win.WindowID, "#{window_name}", win.Name, rules.newWindow(p))
				noted(t, "create_window", p, rules.newWindow(p), win.Note)
				waitPath(t, win.PaneID, startDir(t, "cw", i, p))

				var split splitWindowResult
				call(t, cs, "split_window", map[string]any{"paneId": win.PaneID, "startDirectory": startDir(t, "sw", i, p)}, &split)
				waitPath(t, split.PaneID, startDir(t, "sw", i, p))

				var rs renameSessionResult
				renamed := "r" + name
				call(t, cs, "rename_session", map[string]any{"sessionName": asSession(name), "name": renamed}, &rs)
				stored(t, "rename_session name", sess.SessionID, "#{session_name}", rs.Name, asSession(renamed))
				noted(t, "rename_session", renamed, asSession(renamed), rs.Note)

				var rw renameWindowResult
				call(t, cs, "rename_window", map[string]any{"windowId": sess.WindowID, "name": p}, &rw)
				stored(t, "rename_window name", sess.WindowID, "#{window_name}", rw.Name, asName(p))
				noted(t, "rename_window", p, asName(p), rw.Note)

				var title setPaneTitleResult
				call(t, cs, "set_pane_title", map[string]any{"paneId": split.PaneID, "title": p}, &title)
				stored(t, "set_pane_title title", split.PaneID, "#{pane_title}", title.Title, rules.title(p))

				callErr(t, cs, "select_layout", map[string]any{"windowId": win.WindowID, "layout": p}, "layout")

				// list_panes reports the stored text as it is.
				var panes listPanesResult
				call(t, cs, "list_panes", map[string]any{"windowId": win.WindowID}, &panes)
				for _, row := range panes.Panes {
					if row.WindowName != rules.newWindow(p) || row.SessionName != asSession(renamed) {
						t.Errorf("list_panes shows window %q in session %q; want %q in %q", row.WindowName, row.SessionName, rules.newWindow(p), asSession(renamed))
					}
				}
			})
		}
	})
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("%s exists: a #(…) payload ran (stat: %v)", file, err)
	}
	if now := tmuxSays(ts, base, "#{pid}"); now != serverPID {
		t.Errorf("the tmux server changed from pid %s to %s", serverPID, now)
	}
}

// TestWindowNameFormatsStayLiteral is the plainest case of the above:
// #(cmd) and #{pid} in a window name are stored as written and the
// command never runs, whether the name is given at creation or later.
func TestWindowNameFormatsStayLiteral(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := ts.NewSession("w", "sh")
	cs := connectAll(t, ts, "", Deps{})
	file := filepath.Join(ts.Dir, "ran")
	name := "#(touch " + file + ") #{pid}"

	var win createWindowResult
	call(t, cs, "create_window", map[string]any{"sessionName": "w", "name": name}, &win)
	var rw renameWindowResult
	call(t, cs, "rename_window", map[string]any{"windowId": tmuxSays(ts, pane, "#{window_id}"), "name": name}, &rw)
	for _, w := range []string{win.WindowID, tmuxSays(ts, pane, "#{window_id}")} {
		if got := tmuxSays(ts, w, "#{window_name}"); got != name {
			t.Errorf("window %s is named %q; want %q", w, got, name)
		}
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("%s exists: #(…) in a window name ran", file)
	}
}

// TestLiteralRoundTrip checks tmux.Literal and tmux.Arg against tmux 3.3a
// itself: every spelling of # that format expansion treats specially, and
// ';' where tmux's command line would split, comes back as given.
func TestLiteralRoundTrip(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := ts.NewSession("rt", "sh")
	window, session := tmuxSays(ts, pane, "#{window_id}"), tmuxSays(ts, pane, "#{session_id}")
	rules := probeStorage(t, ts, pane)
	cs := connectAll(t, ts, "", Deps{})
	for _, v := range []string{
		"#", "##", "###", "x#", "#a", "#,", "#}", "#{", "#(", "#{pid", "#[fg=red]", "##[fg=red]", "a#[b", "#[#{pid}]",
		"#{?pid,a,b}", "#{l:#{pid}}", "a;", ";", "a;b", "a\\;", "#;", "-x", "--",
	} {
		var title setPaneTitleResult
		call(t, cs, "set_pane_title", map[string]any{"paneId": pane, "title": v}, &title)
		if got, want := tmuxSays(ts, pane, "#{pane_title}"), rules.title(v); got != want || title.Title != want {
			t.Errorf("title %q: tmux stored %q, the tool answered %q; want %q", v, got, title.Title, want)
		}
		var rw renameWindowResult
		call(t, cs, "rename_window", map[string]any{"windowId": window, "name": v}, &rw)
		if got, want := tmuxSays(ts, window, "#{window_name}"), rules.window(v); got != want {
			t.Errorf("window name %q: tmux stored %q; want %q", v, got, want)
		}
		var rs renameSessionResult
		call(t, cs, "rename_session", map[string]any{"sessionId": session, "name": v}, &rs)
		if got, want := tmuxSays(ts, session, "#{session_name}"), rules.session(v); got != want || rs.Name != want {
			t.Errorf("session name %q: tmux stored %q, the tool answered %q; want %q", v, got, rs.Name, want)
		}
	}
}
