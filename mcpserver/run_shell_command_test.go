package mcpserver

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/shellrun"
	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bashSession starts an interactive bash without rc files, prompt "$ ".
func bashSession(t *testing.T, ts *tmuxtest.Server, name string) string {
	t.Helper()
	tmuxtest.Need(t, "bash")
	pane := ts.NewSession(name, "env", "PS1=$ ", "HISTFILE=/dev/null", "bash", "--norc", "--noprofile", "-i")
	ts.WaitFor(pane, func(screen string) bool { return strings.HasPrefix(strings.TrimSpace(screen), "$") })
	return pane
}

func runCmd(t *testing.T, cs *mcp.ClientSession, args map[string]any) runShellCommandResult {
	t.Helper()
	var out runShellCommandResult
	call(t, cs, "run_shell_command", args, &out)
	return out
}

func TestRunShellCommandOutcomes(t *testing.T) {
	t.Parallel()
	for _, shell := range []string{"bash", "zsh"} {
		t.Run(shell, func(t *testing.T) {
			ts := tmuxtest.Start(t)
			var pane string
			if shell == "bash" {
				pane = bashSession(t, ts, "b")
			} else {
				pane = ts.ZshSession("z")
			}
			cs := connect(t, ts, Deps{})

			// exit 3 is a status, not the end of the pane.
			got := runCmd(t, cs, map[string]any{"paneId": pane, "command": "echo hello; echo 'it''s'; exit 3"})
			if got.Outcome != "completed" || got.ExitStatus == nil || *got.ExitStatus != 3 {
				t.Fatalf("exit 3: got %+v; want completed with exitStatus 3", got)
			}
			if want := []string{"hello", "its"}; fmt.Sprint(got.Output) != fmt.Sprint(want) {
				t.Errorf("output %q; want %q", got.Output, want)
			}
			if got.Cursor == "" || got.EffectiveTimeoutMs != DefaultWaitMax.Milliseconds() {
				t.Errorf("cursor %q, effectiveTimeoutMs %d; want a cursor and the ceiling", got.Cursor, got.EffectiveTimeoutMs)
			}

			// cd inside does not move the shell.
			runCmd(t, cs, map[string]any{"paneId": pane, "command": "cd /tmp && export LEAK=1"})
			got = runCmd(t, cs, map[string]any{"paneId": pane, "command": `pwd; echo "leak=$LEAK"`})
			if len(got.Output) != 2 || got.Output[0] == "/tmp" || got.Output[1] != "leak=" {
				t.Errorf("after cd /tmp and export in an earlier run: output %q; want the shell's own directory and no LEAK", got.Output)
			}

			// Output that is not newline-terminated, empty lines kept.
			got = runCmd(t, cs, map[string]any{"paneId": pane, "command": "echo a; echo; printf 'no newline'"})
			if want := []string{"a", "", "no newline"}; fmt.Sprint(got.Output) != fmt.Sprint(want) || *got.ExitStatus != 0 {
				t.Errorf("output %q status %v; want %q status 0", got.Output, *got.ExitStatus, want)
			}

			// A command printing the markers of an earlier run (read off the
			// screen) gets them back as output.
			// Only whole marker lines: zsh breaks a long typed line itself,
			// so a row of the frame's echo can start with "lt" too.
			screen := ts.Run("capture-pane", "-p", "-J", "-S", "-", "-t", pane)
			marker := regexp.MustCompile(`^lt[0-9a-f]+-(s|e:[0-9]+)$`)
			var old []string
			for _, l := range strings.Split(screen, "\n") {
				l = strings.TrimRight(l, " ") // tmux 3.2a keeps a joined row's trailing spaces
				if marker.MatchString(l) {
					old = append(old, l)
				}
			}
			if len(old) < 2 {
				t.Fatalf("no earlier markers on the screen:\n%s", screen)
			}
			cmd := "printf '%s\\n' " + strings.Join(old, " ") + "; false"
			got = runCmd(t, cs, map[string]any{"paneId": pane, "command": cmd})
			if fmt.Sprint(got.Output) != fmt.Sprint(old) || *got.ExitStatus != 1 {
				t.Errorf("printing old markers: output %q status %d; want %q status 1", got.Output, *got.ExitStatus, old)
			}

			// Quotes, tabs and newlines arrive as written.
			got = runCmd(t, cs, map[string]any{"paneId": pane, "command": "printf '%s|' \"a'b\" 'c\td'\necho end"})
			// capture-pane shows a tab as the spaces it moved the cursor by
			// (tmux 3.6a and later keep the tab itself).
			if len(got.Output) != 1 || (got.Output[0] != "a'b|c\td|end" && (!strings.HasPrefix(got.Output[0], "a'b|c ") || !strings.HasSuffix(got.Output[0], " d|end"))) {
				t.Errorf("quotes, tab, newline: output %q; want one line a'b|c<tab>d|end", got.Output)
			}

			// timed_out keeps the command running and says so.
			got = runCmd(t, cs, map[string]any{"paneId": pane, "command": "echo started; sleep 30", "timeoutMs": 500})
			if got.Outcome != "timed_out" || got.ExitStatus != nil || got.EffectiveTimeoutMs != 500 {
				t.Errorf("sleep 30 with 500 ms: got %+v; want timed_out, no status, effectiveTimeoutMs 500", got)
			}
			if !strings.Contains(got.Note, "do not run it again") || fmt.Sprint(got.Output) != "[started]" {
				t.Errorf("timed_out note %q output %q", got.Note, got.Output)
			}
			// The pane is busy now: a second command is refused.
			msg := callErr(t, cs, "run_shell_command", map[string]any{"paneId": pane, "command": "true"}, "run_in_progress")
			if !strings.Contains(msg, "run_in_progress") || !strings.Contains(msg, "sleep 30") || !strings.Contains(msg, got.Handle) {
				t.Errorf("command while sleep runs: %q; want run_in_progress naming the running command and its handle %q", msg, got.Handle)
			}
		})
	}
}

func TestRunShellCommandNarrowPane(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	for _, shell := range []string{"bash", "zsh"} {
		var pane string
		if shell == "bash" {
			pane = bashSession(t, ts, "b")
		} else {
			pane = ts.ZshSession("z")
		}
		ts.Run("resize-window", "-t", pane, "-x", "40")
		cs := connect(t, ts, Deps{})
		long := "echo " + strings.Repeat("w", 70) + " && echo second-line"
		got := runCmd(t, cs, map[string]any{"paneId": pane, "command": long})
		if got.Outcome != "completed" || *got.ExitStatus != 0 {
			t.Fatalf("%s: got %+v", shell, got)
		}
		if want := []string{strings.Repeat("w", 70), "second-line"}; fmt.Sprint(got.Output) != fmt.Sprint(want) {
			t.Errorf("%s in 40 columns: output %q; want %q", shell, got.Output, want)
		}
	}
}

func TestRunShellCommandPaneDied(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	for _, live := range []bool{true, false} {
		pane := ts.ZshSession(fmt.Sprintf("z%v", live))
		ts.Run("split-window", "-d", "-t", pane) // the session outlives the pane
		cs := connect(t, ts, Deps{Limits: Limits{NoLive: !live}})
		done := callAsync[runShellCommandResult](cs, "run_shell_command", map[string]any{"paneId": pane, "command": "echo going; sleep 60"})
		ts.WaitFor(pane, func(screen string) bool { return strings.Contains(screen, "\ngoing") })
		begin := time.Now()
		ts.Run("kill-pane", "-t", pane)
		got := receive(t, done, 10*time.Second)
		if got.Outcome != "pane_died" || got.ExitStatus != nil {
			t.Errorf("live=%v: got %+v; want pane_died", live, got)
		}
		if took := time.Since(begin); live && took > 2*time.Second {
			t.Errorf("live: pane_died took %s; want it at once", took)
		}
	}
}

func TestRunShellCommandRefusals(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := ts.ZshSession("z")
	other := ts.NewSession("s", "sleep", "600")
	cs := connect(t, ts, Deps{})
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"paneId": "3", "command": "true"}, "not a tmux pane id"},
		{map[string]any{"paneId": "%999", "command": "true"}, "no pane %999"},
		{map[string]any{"paneId": pane, "command": "  "}, "command is empty"},
		{map[string]any{"paneId": pane, "command": "echo \x00"}, "NUL"},
		{map[string]any{"paneId": other, "command": "true"}, `runs "sleep", not a shell`},
		{map[string]any{"paneId": pane, "command": "true", "force": "%0"}, "force"},
	} {
		callErr(t, cs, "run_shell_command", c.args, c.want)
	}
	ts.Run("set", "-w", "-t", pane, "synchronize-panes", "on")
	ts.Run("split-window", "-d", "-t", pane)
	callErr(t, cs, "run_shell_command", map[string]any{"paneId": pane, "command": "true"}, "synchronize-panes")
}

func TestRunShellCommandCancelledByShutdown(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := ts.ZshSession("z")
	cs, shutdown := connectLife(t, ts, Deps{})
	done := callAsync[runShellCommandResult](cs, "run_shell_command", map[string]any{"paneId": pane, "command": "echo started; sleep 30"})
	ts.WaitFor(pane, func(screen string) bool { return strings.Contains(screen, "\nstarted") })
	shutdown()
	got := receive(t, done, 5*time.Second)
	if got.Outcome != "cancelled" || got.ExitStatus != nil || !strings.Contains(got.Note, "may still be running") {
		t.Errorf("shutdown during a command: %+v; want cancelled, saying it may still run", got)
	}
}

func TestRunShellCommandServerKilled(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := ts.ZshSession("z")
	cs := connect(t, ts, Deps{})
	done := callAsync[runShellCommandResult](cs, "run_shell_command", map[string]any{"paneId": pane, "command": "echo going; sleep 60"})
	ts.WaitFor(pane, func(screen string) bool { return strings.Contains(screen, "\ngoing") })
	ts.Run("kill-server")
	got := receive(t, done, 10*time.Second)
	// wait-for returns 0 when the server dies: the answer must not be
	// a completion.
	if got.Outcome != "pane_died" || got.ExitStatus != nil {
		t.Errorf("server killed during a command: %+v; want pane_died", got)
	}
}

// TestRunShellCommandPaneDiesAndStays: a shell that dies in a pane kept by
// remain-on-exit changes no layout; the run still ends at once.
func TestRunShellCommandPaneDiesAndStays(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	ts.Run("set", "-g", "remain-on-exit", "on")
	pane := ts.ZshSession("z")
	cs := connect(t, ts, Deps{})
	done := callAsync[runShellCommandResult](cs, "run_shell_command", map[string]any{"paneId": pane, "command": "echo going; sleep 60"})
	ts.WaitFor(pane, func(screen string) bool { return strings.Contains(screen, "\ngoing") })
	ts.KillPaneProcess(pane)
	got := receive(t, done, 10*time.Second)
	// The shell's death hangs up its job: the frame's exit trap may
	// still report the command's end (zsh's subshell answers 1) before
	// the dead pane is noticed. Either is the truth; waiting on is not.
	hungUp := got.Outcome == "completed" && got.ExitStatus != nil
	if got.Outcome != "pane_died" && !hungUp {
		t.Errorf("shell killed, pane kept: %+v (status %v); want pane_died (or completed, hung up)", got, statusOf(got))
	}
}

func statusOf(r runShellCommandResult) any {
	if r.ExitStatus == nil {
		return nil
	}
	return *r.ExitStatus
}

// Without the pane's view (LIBTMUX_MCP_LIVE=0, or no control connection),
// the exit status still never depends on the screen: the frame's exit trap
// stores it in a pane option that the completion waiter reads.
func TestRunShellCommandProcessPathStatus(t *testing.T) {
	t.Parallel()
	for _, shell := range []string{"bash", "zsh"} {
		t.Run(shell, func(t *testing.T) {
			ts := tmuxtest.Start(t)
			pane := shellPane(t, ts, shell)
			ts.Run("set-option", "-t", pane, "history-limit", "100")
			cs := connect(t, ts, Deps{Limits: Limits{NoLive: true}})
			for _, st := range []struct {
				command string
				status  int
				last    string // the output's last line
			}{
				{"TERM=xterm-256color clear", 0, ""},
				{"clear; echo after; exit 3", 3, "after"},
				{`printf '\033[H\033[2J\033[3J'; echo three; false`, 1, "three"},
				{`printf '\033[?1049h\033[Hfull screen\r\n'; exit 4`, 4, ""},
				{"seq 1 500; exit 7", 7, "500"},
				{`echo lt0123456789ab-e:0; exit 5`, 5, "lt0123456789ab-e:0"},
			} {
				got := runCmd(t, cs, map[string]any{"paneId": pane, "command": st.command, "timeoutMs": 15000})
				wantStatus(t, st.command, got, st.status)
				if n := len(got.Output); st.last != "" && (n == 0 || got.Output[n-1] != st.last) {
					t.Errorf("%s: output %q; want it to end with %q", st.command, got.Output, st.last)
				}
				if strings.Contains(got.Note, "died") {
					t.Errorf("%s: note %q says the pane died", st.command, got.Note)
				}
			}
			// A second call while one runs is refused; without the view a
			// run has no handle to wait on, and the refusal does not offer one.
			first := callAsync[runShellCommandResult](cs, "run_shell_command", map[string]any{"paneId": pane, "command": "sleep 2; exit 6"})
			ts.WaitForText(pane, "sleep 2; exit 6") // typed, so claimed
			msg := callErr(t, cs, "run_shell_command", map[string]any{"paneId": pane, "command": "true"}, "run_in_progress")
			if strings.Contains(msg, `"handle"`) || !strings.Contains(msg, "capture_pane") {
				t.Errorf("refusal without the view: %q; want it to point at capture_pane, not at a handle", msg)
			}
			wantStatus(t, "sleep 2; exit 6", receive(t, first, 20*time.Second), 6)
			if v := ts.Run("show-options", "-p", "-t", pane, "-v", shellrun.StatusOption); !strings.Contains(v, ":6") {
				t.Errorf("the pane's %s holds %q; want the last run's nonce and status 6", shellrun.StatusOption, v)
			}
		})
	}
}
