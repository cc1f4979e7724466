package mcpserver

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// shellPane starts a bash or zsh pane, 80x24 whatever the version's
// defaults.
func shellPane(t *testing.T, ts *tmuxtest.Server, shell string) string {
	t.Helper()
	var pane string
	if shell == "bash" {
		pane = bashSession(t, ts, "b")
	} else {
		pane = ts.ZshSession("z")
	}
	ts.Run("resize-window", "-t", pane, "-x", "80", "-y", "24")
	return pane
}

func wantStatus(t *testing.T, what string, got runShellCommandResult, status int) {
	t.Helper()
	if got.Outcome != "completed" || got.ExitStatus == nil || *got.ExitStatus != status {
		t.Fatalf("%s: %+v; want completed with exit status %d", what, got, status)
	}
}

// Issue 15: the exit status never depends on the screen. A clear as the
// first command of a fresh pane, and every kind of clear after it, the
// alternate screen, and output that looks like a marker.
func TestRunShellCommandScreenIndependent(t *testing.T) {
	t.Parallel()
	for _, shell := range []string{"bash", "zsh"} {
		t.Run(shell, func(t *testing.T) {
			ts := tmuxtest.Start(t)
			pane := shellPane(t, ts, shell)
			cs := connect(t, ts, Deps{})
			steps := []struct {
				command string
				status  int
				output  []string
			}{
				// The first command of a fresh pane, as clear runs where the
				// terminal has E3 (erase the scrollback too).
				{"TERM=xterm-256color clear", 0, nil},
				{"clear", 0, nil},
				{"clear; echo after; exit 3", 3, []string{"after"}},
				{"tput clear; echo tput", 0, []string{"tput"}},
				{`printf '\033[H\033[2J\033[3J'; echo three; false`, 1, []string{"three"}},
				{`echo before; printf '\033[?1049h\033[Hfull screen\r\nmore\r\n'; printf '\033[?1049l'; echo after; exit 4`, 4, []string{"before", "after"}},
				{`echo lt0123456789ab-s; echo lt0123456789ab-e:0; exit 5`, 5, []string{"lt0123456789ab-s", "lt0123456789ab-e:0"}},
				// A line three times the pane's width, and a long typed line.
				{`printf 'w%.0s' $(seq 1 240); echo; exit 6 # ` + strings.Repeat("typed ", 30), 6, []string{strings.Repeat("w", 240)}},
			}
			if _, err := os.Stat("/usr/bin/tput"); err != nil {
				steps = append(steps[:3], steps[4:]...)
			}
			for _, st := range steps {
				got := runCmd(t, cs, map[string]any{"paneId": pane, "command": st.command, "timeoutMs": 15000})
				wantStatus(t, st.command, got, st.status)
				if st.output != nil && fmt.Sprint(got.Output) != fmt.Sprint(st.output) {
					t.Errorf("%s: output %q; want %q", st.command, got.Output, st.output)
				}
			}
		})
	}
}

// Issue 15: eight concurrent calls on one pane: exactly one runs, and the
// seven others are refused at once, before it ends, naming it.
func TestRunShellCommandOnePerPane(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := shellPane(t, ts, "bash")
	cs := connect(t, ts, Deps{})
	gate := filepath.Join(ts.Dir, "gate")
	type answer struct {
		res runShellCommandResult
		err string
	}
	answers := make(chan answer, 8)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var out runShellCommandResult
			cmd := fmt.Sprintf("echo call %d; while [ ! -e %s ]; do sleep 0.05; done", i, gate)
			msg, err := callTool(cs, "run_shell_command", map[string]any{"paneId": pane, "command": cmd}, &out)
			if err != nil {
				msg = "protocol error: " + err.Error()
			}
			answers <- answer{out, msg}
		}()
	}
	// Seven refusals come while the one command still waits for the gate.
	for range 7 {
		select {
		case a := <-answers:
			if !strings.HasPrefix(a.err, "run_in_progress: ") || !strings.Contains(a.err, "echo call") || !strings.Contains(a.err, `wait_for_run {"handle":"rsc-`) {
				t.Fatalf("a concurrent call answered %+v; want run_in_progress naming the running command and its handle", a)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("the concurrent calls were not refused while the first ran")
		}
	}
	os.WriteFile(gate, nil, 0o600)
	a := <-answers
	wg.Wait()
	if a.err != "" || a.res.Outcome != "completed" || len(a.res.Output) != 1 || !strings.HasPrefix(a.res.Output[0], "call ") {
		t.Fatalf("the one that ran: %+v; want completed with its one line", a)
	}
	// The pane is free again, and its line holds one frame only.
	got := runCmd(t, cs, map[string]any{"paneId": pane, "command": "echo next"})
	wantStatus(t, "after the eight", got, 0)
}

// Issue 15, issue 29: a command longer than its timeout answers
// timed_out with a handle; wait_for_run with the handle waits for it and
// answers its exact exit status and the output after the cursor;
// list_runs shows it running, then ended. A timeout over the ceiling is
// clamped, in the note. (The 40 s command and 30 s timeout,
// scaled down.)
func TestRunShellCommandCollectAfterTimeout(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := shellPane(t, ts, "zsh")
	cs := connect(t, ts, Deps{Limits: Limits{WaitMax: 1500 * time.Millisecond}})
	gate := filepath.Join(ts.Dir, "gate")
	cmd := fmt.Sprintf("echo started; while [ ! -e %s ]; do sleep 0.05; done; echo finished; exit 42", gate)
	got := runCmd(t, cs, map[string]any{"paneId": pane, "command": cmd, "timeoutMs": 120000})
	if got.Outcome != "timed_out" || got.Handle == "" || got.ExitStatus != nil || got.EffectiveTimeoutMs != 1500 {
		t.Fatalf("first answer: %+v; want timed_out after the 1500 ms ceiling, with a handle", got)
	}
	if !strings.Contains(got.Note, "clamped to 1500") || !strings.Contains(got.Note, `wait_for_run with {"handle":"`+got.Handle+`","cursor":"L1"}`) || fmt.Sprint(got.Output) != "[started]" {
		t.Errorf("first answer: note %q output %q; want the clamp, wait_for_run with the handle and cursor L1, and the output so far", got.Note, got.Output)
	}
	if l := listRuns(t, cs); len(l) != 1 || l[0].Handle != got.Handle || l[0].State != "running" || l[0].PaneID != pane || l[0].Tool != "run_shell_command" || l[0].Command != "echo started; while [ ! -e "+gate+" ]; do sleep 0.05; done; echo finished; exit 42" {
		t.Errorf("list_runs while it runs: %+v; want the one run, running", l)
	}
	// Still running: waiting again answers running, with nothing new.
	again := waitRun(t, cs, map[string]any{"handle": got.Handle, "cursor": "L1", "timeoutMs": 200})
	if again.State != "running" || again.Handle != got.Handle || len(again.Output) != 0 || again.Cursor != "L1" {
		t.Fatalf("second wait: %+v; want running, no new output, cursor L1", again)
	}
	os.WriteFile(gate, nil, 0o600)
	done := waitRun(t, cs, map[string]any{"handle": got.Handle, "cursor": "L1"})
	if done.State != "completed" || done.ExitStatus == nil || *done.ExitStatus != 42 || fmt.Sprint(done.Output) != "[finished]" || done.Cursor != "L2" || done.PaneCursor == "" {
		t.Errorf("collected from L1: %+v; want completed, exit 42, [finished], cursor L2 and a pane cursor", done)
	}
	// A handle can be collected again, from the start, and a wrong one is refused.
	if all := waitRun(t, cs, map[string]any{"handle": got.Handle}); all.ExitStatus == nil || *all.ExitStatus != 42 || fmt.Sprint(all.Output) != "[started finished]" {
		t.Errorf("second collection: %+v; want exit 42 and [started finished]", all)
	}
	if l := listRuns(t, cs); len(l) != 1 || l[0].State != "completed" || l[0].ExitStatus == nil || *l[0].ExitStatus != 42 {
		t.Errorf("list_runs after: %+v; want the run, completed with 42", l)
	}
	callErr(t, cs, "wait_for_run", map[string]any{"handle": "rsc-000000000000"}, "list_runs")
	callErr(t, cs, "wait_for_run", map[string]any{"handle": got.Handle, "cursor": "x"}, "is not one a run's answer gave")
	callErr(t, cs, "cancel_run", map[string]any{"handle": got.Handle}, "has already ended")
}

// Issue 29: cancel_run interrupts a run that is its pane's foreground
// job and answers interrupted; the pane takes the next command.
func TestCancelRun(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := shellPane(t, ts, "zsh")
	cs := connect(t, ts, Deps{})
	got := runCmd(t, cs, map[string]any{"paneId": pane, "command": "echo started; sleep 60", "timeoutMs": 300})
	if got.Outcome != "timed_out" || got.Handle == "" {
		t.Fatalf("sleep 60: %+v; want timed_out with a handle", got)
	}
	var done runWaitResult
	call(t, cs, "cancel_run", map[string]any{"handle": got.Handle}, &done)
	if done.State != "interrupted" || done.ExitStatus != nil || fmt.Sprint(done.Output) != "[started]" {
		t.Fatalf("cancel_run: %+v; want interrupted, no exit status, [started]", done)
	}
	if l := listRuns(t, cs); len(l) != 1 || l[0].State != "interrupted" {
		t.Errorf("list_runs after: %+v; want the run, interrupted", l)
	}
	wantStatus(t, "the next command", runCmd(t, cs, map[string]any{"paneId": pane, "command": "exit 9"}), 9)
}

func waitRun(t *testing.T, cs *mcp.ClientSession, args map[string]any) runWaitResult {
	t.Helper()
	var out runWaitResult
	call(t, cs, "wait_for_run", args, &out)
	return out
}

func listRuns(t *testing.T, cs *mcp.ClientSession) []runRow {
	t.Helper()
	var out listRunsResult
	call(t, cs, "list_runs", map[string]any{}, &out)
	return out.Runs
}

// Issue 15: 5,000 lines with history-limit 2000: the head and the tail,
// the exact count left between, and a cursor that reads every one still
// kept; the lost ones are counted exactly.
func TestRunShellCommandLongOutput(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	ts.Run("set-option", "-g", "history-limit", "2000")
	pane := shellPane(t, ts, "bash")
	cs := connect(t, ts, Deps{})
	got := runCmd(t, cs, map[string]any{"paneId": pane, "command": "seq 1 5000"})
	wantStatus(t, "seq 1 5000", got, 0)
	n := plainNumbers(got.Output)
	if len(n) != 200 || n[0] != 1 || n[99] != 100 || n[100] != 4901 || n[199] != 5000 {
		t.Fatalf("output: %d lines %v…%v; want 1-100 and 4901-5000", len(n), n[:min(3, len(n))], n[max(len(n)-3, 0):])
	}
	t.Logf("note: %s", got.Note)
	if got.DroppedLines != 4800 {
		t.Errorf("droppedLines %d; want exactly 4800", got.DroppedLines)
	}
	// Follow the note's cursor to the end of the gap.
	i := strings.Index(got.Note, `"cursor":"`)
	if i < 0 {
		t.Fatalf("note %q names no cursor", got.Note)
	}
	cursor, _, _ := strings.Cut(got.Note[i+len(`"cursor":"`):], `"`)
	var lost int
	if m := regexp.MustCompile(`(\d+) of them are lost`).FindStringSubmatch(got.Note); m != nil {
		lost, _ = strconv.Atoi(m[1])
	}
	var read []int
	for range 100 {
		c := captureSince(t, cs, map[string]any{"paneId": pane, "cursor": cursor})
		cursor = c.Cursor
		if len(c.Lines) == 0 {
			break
		}
		read = append(read, plainNumbers(c.Lines)...)
	}
	// What follows the gap is the tail and the frame's end: read only up
	// to 4900.
	var gap []int
	for _, v := range read {
		if v <= 4900 {
			gap = append(gap, v)
		}
	}
	if len(gap) == 0 || gap[len(gap)-1] != 4900 {
		t.Fatalf("read from the cursor: %d lines ending %v; want the gap up to 4900", len(gap), gap[max(len(gap)-3, 0):])
	}
	for k := 1; k < len(gap); k++ {
		if gap[k] != gap[k-1]+1 {
			t.Fatalf("gap read out of order or twice at %d: %d then %d", k, gap[k-1], gap[k])
		}
	}
	if first := gap[0]; first != 101+lost || lost == 0 {
		t.Errorf("the gap read starts at %d with %d reported lost; want 101 + lost, lost > 0 (history-limit 2000)", first, lost)
	}
}

// Issue 15: a shell that waits for its foreground child, with or without
// job control, is not at its prompt.
func TestRunShellCommandRefusesForegroundProgram(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	tmuxtest.Need(t, "bash")
	noJobControl := ts.NewSession("cat", "bash", "-c", "cat >/dev/null; true")
	withJobControl := shellPane(t, ts, "zsh")
	ts.Type(withJobControl, "cat", true)
	ts.WaitFor(withJobControl, func(screen string) bool { return strings.Contains(screen, "% cat\n") })
	cs := connect(t, ts, Deps{})
	for _, pane := range []string{noJobControl, withJobControl} {
		// Wait until cat runs: the shell's child, in the foreground.
		pid := strings.TrimSpace(ts.Run("display-message", "-p", "-t", pane, "#{pane_pid}"))
		tmuxtest.Eventually(t, 10*time.Second, "pane "+pane+" starting cat", func() bool {
			kids, _ := os.ReadFile("/proc/" + pid + "/task/" + pid + "/children")
			return len(strings.Fields(string(kids))) > 0
		})
		callErr(t, cs, "run_shell_command", map[string]any{"paneId": pane, "command": "echo typed-into-cat", "timeoutMs": 2000}, "not a shell at its prompt")
	}
}

// Issue 15: split_window and create_window start in the target pane's
// directory unless told otherwise.
func TestNewPanesStartInThePanesDirectory(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := shellPane(t, ts, "zsh")
	dir, _ := filepath.EvalSymlinks(ts.Dir)
	ts.Type(pane, "cd "+dir, true)
	tmuxtest.Eventually(t, 10*time.Second, "the pane moving to "+dir, func() bool {
		return strings.TrimSpace(ts.Run("display-message", "-p", "-t", pane, "#{pane_current_path}")) == dir
	})
	cs := connect(t, ts, Deps{})
	var split splitWindowResult
	call(t, cs, "split_window", map[string]any{"paneId": pane}, &split)
	var win createWindowResult
	call(t, cs, "create_window", map[string]any{"sessionId": strings.TrimSpace(ts.Run("display-message", "-p", "-t", pane, "#{session_id}"))}, &win)
	for _, p := range []string{split.PaneID, win.PaneID} {
		if got := strings.TrimSpace(ts.Run("display-message", "-p", "-t", p, "#{pane_start_path}#{?pane_start_path,,#{pane_current_path}}")); got != dir {
			// tmux before 3.4 has no pane_start_path: its current path is
			// its shell's.
			tmuxtest.Eventually(t, 10*time.Second, fmt.Sprintf("new pane %s starting in %q", p, dir), func() bool {
				got = strings.TrimSpace(ts.Run("display-message", "-p", "-t", p, "#{pane_current_path}"))
				return got == dir
			}, func() string { return fmt.Sprintf("it is in %q", got) })
		}
	}
}

// plainNumbers reads the lines that are decimal numbers, skipping others
// (a frame's echo and prompt around a read).
func plainNumbers(lines []string) []int {
	var out []int
	for _, l := range lines {
		if n, err := strconv.Atoi(l); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// A command interrupted with C-c ends its shell's line without the status
// line: the run answers interrupted (no exit status) and frees the pane.
func TestRunShellCommandInterrupted(t *testing.T) {
	t.Parallel()
	for _, shell := range []string{"bash", "zsh"} {
		t.Run(shell, func(t *testing.T) {
			ts := tmuxtest.Start(t)
			pane := shellPane(t, ts, shell)
			cs := connect(t, ts, Deps{})
			got := runCmd(t, cs, map[string]any{"paneId": pane, "command": "echo started; sleep 60", "timeoutMs": 300})
			if got.Outcome != "timed_out" || got.Handle == "" {
				t.Fatalf("sleep 60: %+v; want timed_out with a handle", got)
			}
			ts.Run("send-keys", "-t", pane, "C-c")
			done := waitRun(t, cs, map[string]any{"handle": got.Handle, "timeoutMs": 15000})
			if done.State != "interrupted" || done.ExitStatus != nil || !strings.Contains(done.Note, "without the command's status line") {
				t.Fatalf("after C-c: %+v; want interrupted, no exit status", done)
			}
			wantStatus(t, "the next command", runCmd(t, cs, map[string]any{"paneId": pane, "command": "exit 9"}), 9)
		})
	}
}

// A command that cannot leave its subshell runs its last program in the
// subshell's own process (one fork: the program's parent is the shell); a
// command that tries to leave it is run through eval inside the subshell,
// where it fails to parse and changes nothing in the shell; either way
// cd stays inside.
func TestRunShellCommandOneSubshell(t *testing.T) {
	t.Parallel()
	for _, shell := range []string{"bash", "zsh"} {
		t.Run(shell, func(t *testing.T) {
			ts := tmuxtest.Start(t)
			pane := shellPane(t, ts, shell)
			cs := connect(t, ts, Deps{})
			shellPID := ts.Run("display-message", "-p", "-t", pane, "#{pane_pid}")
			run := func(command string) runShellCommandResult {
				return runCmd(t, cs, map[string]any{"paneId": pane, "command": command, "timeoutMs": 15000})
			}
			got := run(`sh -c 'echo "parent $PPID"'`)
			wantStatus(t, "sh -c", got, 0)
			if want := "parent " + strings.TrimSpace(shellPID); fmt.Sprint(got.Output) != fmt.Sprint([]string{want}) {
				t.Errorf("output %q; want %q: the program's parent is the shell, one fork", got.Output, want)
			}
			dir := ts.Run("display-message", "-p", "-t", pane, "#{pane_current_path}")
			got = run("echo a ) ; cd / ; ( echo b")
			if got.Outcome != "completed" || got.ExitStatus == nil || *got.ExitStatus == 0 {
				t.Errorf("an unbalanced command answered %+v; want a failed parse", got)
			}
			wantStatus(t, "cd inside", run("cd / && pwd"), 0)
			got = run("pwd")
			wantStatus(t, "pwd", got, 0)
			if want := strings.TrimSpace(dir); fmt.Sprint(got.Output) != fmt.Sprint([]string{want}) {
				t.Errorf("pwd after the escape attempt and a cd: %q; want the shell's own %q", got.Output, want)
			}
		})
	}
}
