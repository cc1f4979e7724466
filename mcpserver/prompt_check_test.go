package mcpserver

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/libtmux/libtmux-mcp/internal/fgproc"
	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
)

// psOnPath puts a ps first on PATH that is script, with LOG replaced by a
// file it may append to, and returns that file. (fgproc runs ps in an
// empty environment, so the script cannot read the path from one.)
func psOnPath(t *testing.T, script string) (log string) {
	t.Helper()
	dir := t.TempDir()
	log = filepath.Join(dir, "calls")
	tmuxtest.WriteExecutable(t, filepath.Join(dir, "ps"), strings.ReplaceAll(script, "LOG", log))
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return log
}

// Issue 20: run_shell_command takes the path of macOS and the BSDs, where
// the prompt check reads ps because there is no /proc, end to end: its
// refusals (a program in the foreground, with and without job control, a
// busy subshell that tmux names like the shell) and a completed run, with
// and without the pane's view. A ps that logs its calls proves ps answered.
// (Waits and captures read no /proc at all: nothing changes for them.)
func TestRunShellCommandThroughPS(t *testing.T) {
	tmuxtest.NotPerRelease(t, "the prompt check through ps, the path of macOS and the BSDs")
	t.Cleanup(fgproc.ForcePS()) // restored after every server below has stopped
	real, err := exec.LookPath("ps")
	if err != nil {
		t.Skip("no ps on PATH")
	}
	log := psOnPath(t, "#!/bin/sh\necho ps >>LOG\nexec "+real+" \"$@\"\n")

	t.Run("refusals", TestRunShellCommandRefusals)
	t.Run("foreground program", TestRunShellCommandRefusesForegroundProgram)
	for _, shell := range []string{"bash", "zsh"} {
		for _, live := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s live=%v", shell, live), func(t *testing.T) {
				ts := tmuxtest.Start(t)
				busy := shellPane(t, ts, shell)
				// "; true" keeps the subshell from becoming sleep (exec), so
				// tmux names the foreground like the shell and only the
				// process check can refuse.
				ts.Type(busy, "( echo in-sub''shell; sleep 30; true )", true)
				ts.WaitFor(busy, func(screen string) bool { return slices.Contains(strings.Split(screen, "\n"), "in-subshell") })
				if cur := strings.TrimSpace(ts.Run("display-message", "-p", "-t", busy, "#{pane_current_command}")); cur != shell {
					t.Fatalf("the subshell's pane runs %q; want it named %q", cur, shell)
				}
				idle := ts.ZshSession("idle")
				cs := connect(t, ts, Deps{Limits: Limits{NoLive: !live}})
				callErr(t, cs, "run_shell_command", map[string]any{"paneId": busy, "command": "echo typed-into-subshell"}, "not a shell at its prompt")
				got := runCmd(t, cs, map[string]any{"paneId": idle, "command": "echo through-ps; exit 4"})
				if got.Outcome != "completed" || got.ExitStatus == nil || *got.ExitStatus != 4 || fmt.Sprint(got.Output) != "[through-ps]" {
					t.Errorf("a run in an idle zsh: %+v; want completed, status 4, output [through-ps]", got)
				}
			})
		}
	}
	calls, _ := os.ReadFile(log)
	if n := strings.Count(string(calls), "ps\n"); n < 10 {
		t.Errorf("ps answered %d prompt checks; want at least 10 (two in each shell subtest, one per pane in foreground program)", n)
	}
}

// Issue 20: where neither /proc nor ps can tell, run_shell_command types
// nothing and says why: it cannot know it would type into a shell.
func TestRunShellCommandCannotTell(t *testing.T) {
	t.Cleanup(fgproc.ForcePS())
	ts := tmuxtest.Start(t)
	pane := ts.ZshSession("z")
	psOnPath(t, "#!/bin/sh\necho 'ps: tpgid: keyword not found' >&2\nexit 1\n")
	for _, live := range []bool{true, false} {
		cs := connect(t, ts, Deps{Limits: Limits{NoLive: !live}})
		msg := callErr(t, cs, "run_shell_command", map[string]any{"paneId": pane, "command": "echo typed-blind"}, "")
		for _, want := range []string{"cannot be told", "tpgid: keyword not found", "nothing was typed", "send_keys"} {
			if !strings.Contains(msg, want) {
				t.Errorf("live=%v, ps failing: %q; want it to contain %q", live, msg, want)
			}
		}
	}
	if screen := ts.Capture(pane); strings.Contains(screen, "typed-blind") {
		t.Errorf("the command was typed although the prompt could not be checked:\n%s", screen)
	}
}
