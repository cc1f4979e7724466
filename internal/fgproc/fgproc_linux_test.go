package fgproc

import (
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
)

func TestParseStat(t *testing.T) {
	for _, c := range []struct {
		why, stat string
		want      proc
	}{
		{"a plain name", "4242 (zsh) S 4100 4242 4242 34816 4242 4194304 …", proc{PID: 4242, PPID: 4100, PGID: 4242, TPGID: 4242}},
		{"a name with spaces and ') ' in it", "77 (a) b) c (d) R 1 70 70 34817 71 0", proc{PID: 77, PPID: 1, PGID: 70, TPGID: 71}},
		{"no controlling terminal", "5 (kworker/0:0) I 2 0 0 0 -1 69238880", proc{PID: 5, PPID: 2, PGID: 0, TPGID: -1}},
	} {
		got, err := parseStat([]byte(c.stat))
		if err != nil || got != c.want {
			t.Errorf("%s: parseStat(%q) = %+v, %v; want %+v", c.why, c.stat, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "12 no-parens S 1 1 1 1 1", "12 (sh) S 1 1", "x (sh) S 1 1 1 1 1", "12 (sh) S 1 one 1 1 1"} {
		if got, err := parseStat([]byte(bad)); err == nil {
			t.Errorf("parseStat(%q) = %+v; want an error", bad, got)
		}
	}
}

// TestProcAndPSAgree is the fallback test: real bash and zsh panes on a
// private tmux server, in each state run_shell_command must tell apart,
// read once from /proc (Linux's path) and once from ps (the path of macOS
// and the BSDs). It fails when the two readers report different facts for
// the pane's process (pid, parent, process group, the terminal's foreground
// group) or its children, when their answers differ, or when an answer is
// not the state's.
func TestProcAndPSAgree(t *testing.T) {
	ts := tmuxtest.Start(t)
	tmuxtest.Need(t, "bash", "zsh")
	bash := func(name string) string {
		pane := ts.NewSession(name, "env", "PS1=$ ", "HISTFILE=/dev/null", "bash", "--norc", "--noprofile", "-i")
		ts.WaitFor(pane, func(screen string) bool { return strings.HasPrefix(strings.TrimSpace(screen), "$") })
		return pane
	}
	shells := map[string]func(string) string{"bash": bash, "zsh": ts.ZshSession}
	pid := func(pane string) int {
		p, err := strconv.Atoi(strings.TrimSpace(ts.Run("display-message", "-p", "-t", pane, "#{pane_pid}")))
		if err != nil {
			t.Fatalf("pane_pid of %s: %v", pane, err)
		}
		return p
	}
	shownAlone := func(pane, line string) {
		ts.WaitFor(pane, func(screen string) bool {
			return slices.Contains(strings.Split(screen, "\n"), line)
		})
	}

	type state struct {
		name string
		pane string
		want bool
	}
	var states []state
	for _, sh := range []string{"bash", "zsh"} {
		idle := shells[sh](sh + "-idle")
		states = append(states, state{sh + " idle at its prompt", idle, true})

		busy := shells[sh](sh + "-busy")
		ts.Type(busy, "sleep 30", true)
		ts.WaitCommand(busy, "sleep")
		states = append(states, state{sh + " running sleep 30 in the foreground", busy, false})

		cat := shells[sh](sh + "-cat")
		ts.Type(cat, "cat", true)
		ts.WaitCommand(cat, "cat")
		states = append(states, state{sh + " running cat in the foreground", cat, false})

		// The marker is printed from inside the subshell, which then
		// holds the terminal's foreground until sleep ends. Without
		// "; true" the subshell could become sleep (exec).
		sub := shells[sh](sh + "-sub")
		ts.Type(sub, "( echo in-sub''shell; sleep 30; true )", true)
		shownAlone(sub, "in-subshell")
		ts.WaitCommand(sub, sh) // tmux names the subshell like the shell
		states = append(states, state{sh + " running a subshell ( sleep 30; true )", sub, false})

		// Where the subshell does become sleep, the answer is the same.
		subExec := shells[sh](sh + "-subexec")
		ts.Type(subExec, "( sleep 30 )", true)
		ts.WaitCommand(subExec, "sleep")
		states = append(states, state{sh + " running a subshell ( sleep 30 )", subExec, false})
	}

	// No job control: bash keeps the terminal's foreground and waits for
	// cat, its child in its own process group.
	nojc := ts.NewSession("nojc", "bash", "-c", "cat >/dev/null")
	waitUntil(t, "bash -c in "+nojc+" starting cat", func() bool {
		_, kids, err := procfsFamily(pid(nojc))
		return err == nil && len(kids) == 1
	})
	states = append(states, state{"bash -c 'cat >/dev/null' (no job control) waiting for cat", nojc, false})

	// After exec the pane's process is cat itself: it owns the terminal
	// and waits for nothing. Telling that cat is no shell is the caller's
	// name check.
	lone := ts.NewSession("lone", "bash", "-c", "exec cat >/dev/null")
	ts.WaitCommand(lone, "cat")
	states = append(states, state{"bash -c 'exec cat >/dev/null' (cat in bash's place)", lone, true})

	for _, s := range states {
		p := pid(s.pane)
		fsShell, fsKids, fsErr := procfsFamily(p)
		psShell, psKids, psErr := psFamily(p)
		if fsErr != nil || psErr != nil {
			t.Errorf("%s (pane %s, pid %d): /proc: %v; ps: %v; want both to answer", s.name, s.pane, p, fsErr, psErr)
			continue
		}
		if fsShell != psShell || !sameProcs(fsKids, psKids) {
			t.Errorf("%s (pane %s): /proc reads %+v with children %+v; ps reads %+v with children %+v",
				s.name, s.pane, fsShell, fsKids, psShell, psKids)
		}
		viaProc, errProc := ShellAtPrompt(p)
		restore := ForcePS()
		viaPS, errPS := ShellAtPrompt(p)
		restore()
		if errProc != nil || errPS != nil || viaProc != viaPS || viaProc != s.want {
			t.Errorf("%s (pane %s): ShellAtPrompt from /proc = %v, %v; from ps = %v, %v; want %v from both",
				s.name, s.pane, viaProc, errProc, viaPS, errPS, s.want)
		}
	}

	// A process that has exited is gone for both, and never at its prompt.
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	g := gone.Process.Pid
	_, _, fsErr := procfsFamily(g)
	_, _, psErr := psFamily(g)
	if !errors.Is(fsErr, errNoProcess) || !errors.Is(psErr, errNoProcess) {
		t.Errorf("an exited process %d: /proc says %v; ps says %v; want both to say it is gone", g, fsErr, psErr)
	}
}

// sameProcs compares two lists of processes in any order.
func sameProcs(a, b []proc) bool {
	key := func(ps []proc) []string {
		var k []string
		for _, p := range ps {
			k = append(k, fmt.Sprintf("%+v", p))
		}
		slices.Sort(k)
		return k
	}
	return slices.Equal(key(a), key(b))
}

// waitUntil polls ok for at most 15 s and fails the test when it never
// holds. (The process table changes without an event to wait for.)
func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	tmuxtest.Eventually(t, 15*time.Second, what, ok)
}

func TestParseAge(t *testing.T) {
	stat := []byte("42 (a (b) c) S 1 42 42 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 12345 1000 100")
	if got, err := parseAge(stat, []byte("223.45 400.00\n")); err != nil || got != 100*time.Second {
		t.Errorf("parseAge = %v, %v; want 100s (started at tick 12345, 223.45 s after boot)", got, err)
	}
	if got, err := parseAge(stat, []byte("123.00 1.00")); err != nil || got != 0 {
		t.Errorf("parseAge before its start = %v, %v; want 0", got, err)
	}
	for _, bad := range []string{"42 no-paren S 1", "42 (x) S 1 42", "42 (x) S 1 42 42 0 -1 4 1 0 0 0 0 0 0 0 20 0 1 0 tick 1"} {
		if got, err := parseAge([]byte(bad), []byte("1.0 1.0")); err == nil {
			t.Errorf("parseAge(%q) = %v; want an error", bad, got)
		}
	}
	if _, err := parseAge(stat, []byte("x y")); err == nil {
		t.Error("parseAge with an unreadable uptime: no error")
	}
}

// A process with no arguments to show (a zombie here; a kernel thread too)
// is an error for CommandString, not a shell without -c: the same empty
// /proc/PID/cmdline is what a process shows in the middle of its exec.
func TestCommandStringWithoutArguments(t *testing.T) {
	cmd := exec.Command("sh", "-c", "exit 0")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	pid := cmd.Process.Pid
	tmuxtest.Eventually(t, 10*time.Second, "sh -c 'exit 0' becoming a zombie", func() bool {
		b, err := procFile(pid, "stat")
		return err == nil && strings.Contains(string(b), ") Z ")
	})
	if cs, err := CommandString(pid); err == nil {
		t.Errorf("CommandString of a zombie = %v, nil; want an error for a process without arguments", cs)
	}
}
