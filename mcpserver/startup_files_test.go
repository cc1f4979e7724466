package mcpserver

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/fgproc"
	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
)

// startingShell starts a pane whose shell's startup file runs a program
// in the foreground (cat of a FIFO) until release is called, as pyenv or
// nvm set-ups do for a moment, and returns once the startup file runs.
func startingShell(t *testing.T, ts *tmuxtest.Server, shell string) (pane string, release func()) {
	t.Helper()
	return startingShellSaying(t, ts, shell, "")
}

// startingShellSaying is startingShell whose startup file first prints say, when not empty.
func startingShellSaying(t *testing.T, ts *tmuxtest.Server, shell, say string) (pane string, release func()) {
	t.Helper()
	fifo := filepath.Join(ts.Dir, "startup-"+shell)
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	dir := tmuxtest.ShortTempDir(t, "rc")
	started := filepath.Join(ts.Dir, "started-"+shell)
	hold := ": >" + started + "\ncat " + fifo + " >/dev/null\n"
	if say != "" {
		hold = "echo " + say + "\n" + hold
	}
	switch shell {
	case "bash":
		rc := filepath.Join(dir, "bashrc")
		if err := os.WriteFile(rc, []byte("PS1='$ '\nHISTFILE=/dev/null\n"+hold), 0o600); err != nil {
			t.Fatal(err)
		}
		pane = ts.NewSession("s", "bash", "--rcfile", rc, "-i")
	default:
		if err := os.WriteFile(filepath.Join(dir, ".zshrc"), []byte("PS1='%% '\nRPROMPT=\n"+hold), 0o600); err != nil {
			t.Fatal(err)
		}
		pane = ts.NewSession("s", "env", "ZDOTDIR="+dir, "zsh", "-i")
	}
	// Until release, the startup file runs (bash runs cat in its own
	// process group there, so tmux names the pane's program bash).
	tmuxtest.WaitFile(t, started)
	released := false
	release = func() {
		if released {
			return
		}
		released = true
		// Opening the FIFO to write lets cat's open return; closing it
		// ends cat with EOF, and the startup file goes on.
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	t.Cleanup(release)
	return pane, release
}

// A run_shell_command sent while the pane's shell still runs its startup
// files waits for the prompt and runs, in bash and zsh, with and without
// the pane's view, instead of being refused as a busy shell. Through ps
// (fgproc.ForcePS, as macOS and the BSDs do it), whose calls are logged,
// so the startup program ends only once the server has looked at the
// shell several times: the run was sent, and waited, while it ran. A
// second run sent meanwhile is refused as run_in_progress.
func TestRunShellCommandWaitsForStartupFiles(t *testing.T) {
	t.Cleanup(fgproc.ForcePS()) // not in parallel: ps answers for the whole process
	real, err := exec.LookPath("ps")
	if err != nil {
		t.Fatal("no ps on PATH")
	}
	log := psOnPath(t, "#!/bin/sh\necho ps >>LOG\nexec "+real+" \"$@\"\n")
	looks := func() int { b, _ := os.ReadFile(log); return strings.Count(string(b), "ps\n") }
	for _, shell := range []string{"bash", "zsh"} {
		for _, live := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s live=%v", shell, live), func(t *testing.T) {
				tmuxtest.Need(t, shell)
				ts := tmuxtest.Start(t)
				cs := connect(t, ts, Deps{Limits: Limits{NoLive: !live}})
				pane, release := startingShell(t, ts, shell)
				before := looks()
				ch := callAsync[runShellCommandResult](cs, "run_shell_command", map[string]any{"paneId": pane, "command": "echo after-startup; exit 3"})
				// The check's own look and its refusal's take two ps runs;
				// a call that waits goes on looking.
				var early reply[runShellCommandResult]
				answered := false
				tmuxtest.Eventually(t, 20*time.Second, "the server looking at the starting shell again and again", func() bool {
					select {
					case early = <-ch:
						answered = true
						return true
					default:
					}
					return looks()-before >= 5
				}, func() string { return fmt.Sprintf("ps ran %d times for it", looks()-before) })
				if answered {
					t.Fatalf("answered while the startup file still ran: %q (error %v; result %+v)", early.toolErr, early.err, early.out)
				}
				// The waiting call holds the pane: a second one is refused at
				// once, naming the first.
				msg := callErr(t, cs, "run_shell_command", map[string]any{"paneId": pane, "command": "echo second"}, "run_in_progress")
				if !strings.Contains(msg, "echo after-startup") {
					t.Errorf("a second run while the first waits for the startup files: %q; want run_in_progress naming the first", msg)
				}
				release()
				got := receive(t, ch, 30*time.Second)
				if got.Outcome != "completed" || got.ExitStatus == nil || *got.ExitStatus != 3 || fmt.Sprint(got.Output) != "[after-startup]" {
					t.Errorf("a run sent during the startup files: %+v; want completed, status 3, output [after-startup]", got)
				}
			})
		}
	}
}

// Without ps in the way (/proc on Linux), the same run, released as soon
// as it is sent: it completes whichever comes first.
func TestRunShellCommandAfterStartupFiles(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	cs := connect(t, ts, Deps{})
	pane, release := startingShell(t, ts, "zsh")
	ch := callAsync[runShellCommandResult](cs, "run_shell_command", map[string]any{"paneId": pane, "command": "echo after-startup; exit 3"})
	release()
	got := receive(t, ch, 30*time.Second)
	if got.Outcome != "completed" || got.ExitStatus == nil || *got.ExitStatus != 3 || fmt.Sprint(got.Output) != "[after-startup]" {
		t.Errorf("a run sent as the startup files end: %+v; want completed, status 3, output [after-startup]", got)
	}
}

// A startup file that prints something before its slow program is not waited for (the pane
// shows text, as after a command typed into a young shell), but the refusal says what is likely
// going on: a young shell, the program holding its terminal, its startup files.
func TestRunShellCommandRefusalNamesStartupFiles(t *testing.T) {
	t.Parallel()
	for _, shell := range []string{"bash", "zsh"} {
		t.Run(shell, func(t *testing.T) {
			t.Parallel()
			ts := tmuxtest.Start(t)
			cs := connect(t, ts, Deps{})
			pane, _ := startingShellSaying(t, ts, shell, "loading-the-setup")
			ts.WaitForText(pane, "loading-the-setup")
			msg := callErr(t, cs, "run_shell_command", map[string]any{"paneId": pane, "command": "true"}, "startup files")
			if !strings.Contains(msg, `"cat" holds its terminal`) || !strings.Contains(msg, "startup files") || !strings.Contains(msg, "wait_for_text") {
				t.Errorf("run_shell_command while a startup file holds the terminal: %q; want cat and the startup files named, and wait_for_text", msg)
			}
		})
	}
}
