package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
)

// tmuxCalls is a --tmux-bin wrapper that logs each of its calls to a file
// and runs the real tmux.
type tmuxCalls struct {
	t       testing.TB
	wrapper string // the program to pass as --tmux-bin
	file    string // its log, a line per call
}

// countingTmux writes a tmuxCalls wrapper in a directory of the test's own.
func countingTmux(t testing.TB) tmuxCalls {
	t.Helper()
	real, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatal(err)
	}
	dir := shortTempDir(t)
	c := tmuxCalls{t: t, wrapper: filepath.Join(dir, "tmux"), file: filepath.Join(dir, "calls")}
	tmuxtest.WriteExecutable(t, c.wrapper, "#!/bin/sh\necho \"$*\" >> '"+c.file+"'\nexec '"+real+"' \"$@\"\n")
	return c
}

// log returns the calls logged so far, a line each; none before the first.
func (c tmuxCalls) log() string {
	c.t.Helper()
	b, err := os.ReadFile(c.file)
	if err != nil && !os.IsNotExist(err) {
		c.t.Fatal(err)
	}
	return string(b)
}

// count returns how many calls were logged so far.
func (c tmuxCalls) count() int {
	c.t.Helper()
	return strings.Count(c.log(), "\n")
}

// bashPane starts an interactive bash without rc files, prompt "$ ".
func bashPane(t testing.TB, ts *tmuxtest.Server, name string) string {
	t.Helper()
	tmuxtest.Need(t, "bash")
	pane := ts.NewSession(name, "env", "PS1=$ ", "HISTFILE=/dev/null", "bash", "--norc", "--noprofile", "-i")
	ts.WaitFor(pane, func(screen string) bool { return strings.HasPrefix(strings.TrimSpace(screen), "$") })
	return pane
}

// run_shell_command starts no tmux process once its pane is watched: the
// check, the typing, the completion and the output all go over the
// control connection (the first call starts it, and asks tmux for the
// pane's session).
func TestRunShellCommandStartsNoTmuxProcess(t *testing.T) {
	t.Parallel()
	for _, shell := range []string{"bash", "zsh"} {
		t.Run(shell, func(t *testing.T) {
			ts := tmuxServer(t)
			var pane string
			if shell == "bash" {
				pane = bashPane(t, ts, "b")
			} else {
				pane = ts.ZshSession("z")
			}
			calls := countingTmux(t)
			p := start(t, cleanEnv(t, ts.Dir), "--socket", ts.Socket, "--tmux-bin", calls.wrapper)
			args := map[string]any{"paneId": pane, "command": "true"}
			obj, _ := p.answer("run_shell_command", args) // the pane is watched from here on
			view := viewEpoch(t, obj)
			// A run on the view the last run used starts no tmux process. A
			// view that ended is opened again (one display-message process):
			// allowed, not expected; most runs must find their view.
			reopened := 0
			for i := range 20 {
				before := calls.count()
				obj, text := p.answer("run_shell_command", args)
				if obj["exitStatus"] != float64(0) {
					t.Fatalf("run %d: %s", i, text)
				}
				if now := viewEpoch(t, obj); now != view {
					t.Logf("run %d: the pane's view was opened again (%s, then %s)", i, view, now)
					view = now
					reopened++
					continue
				}
				if n := calls.count() - before; n != 0 {
					t.Errorf("run %d on the pane's view started %d tmux processes; want none:\n%s", i, n, calls.log())
				}
			}
			if reopened > 2 {
				t.Errorf("the pane's view was opened again %d times in 20 runs", reopened)
			}
		})
	}
}

// viewEpoch is the view a run_shell_command answer's cursor
// (lv1.PANE.EPOCH.LINE) comes from.
func viewEpoch(t *testing.T, obj map[string]any) string {
	t.Helper()
	c, _ := obj["cursor"].(string)
	f := strings.Split(c, ".")
	if len(f) != 4 || f[0] != "lv1" {
		t.Fatalf("cursor %q is not a view's (lv1.PANE.EPOCH.LINE)", c)
	}
	return f[2]
}
