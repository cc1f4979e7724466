package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
)

// typeAndWait types a command line at the enrolled prompt and waits until the shell printed
// the marker file it writes last, and then its next prompt.
func (e *enrolled) typeAndWait(t testing.TB, line string) {
	t.Helper()
	mark := filepath.Join(e.ts.Dir, "typed-"+strconv.FormatInt(time.Now().UnixNano(), 36))
	e.ts.Type(e.pane, line+"; : > "+mark, true)
	tmuxtest.WaitFile(t, mark)
	e.ts.WaitFor(e.pane, func(s string) bool { return strings.HasSuffix(strings.TrimSpace(s), "%") })
}

// stdoutOf runs script and returns its stdout, failing unless it completed with status 0.
func (e *enrolled) stdoutOf(t testing.TB, script string) string {
	t.Helper()
	d := data(t, e.run(t, context.Background(), map[string]any{"script": script}))
	if c := d["completion"].(map[string]any); c["state"] != "exited" || c["exit_status"] != 0.0 {
		t.Fatalf("%q: completion %v, stderr %v", script, c, d["stderr"])
	}
	return d["stdout"].(map[string]any)["data"].(string)
}

// After `exec zsh` the pane's process is the same (pid, start time) but the handler is gone: the
// next run answers enrollment_lost at once, SIGHUP invites the pane again, and sourcing the new
// file in the new zsh makes tmux_run work again.
func TestTmuxRunAfterExecZsh(t *testing.T) {
	t.Parallel()
	e := enrollPane(t)
	e.stdoutOf(t, "true")
	e.ts.Type(e.pane, "clear; exec zsh", true)
	e.ts.WaitFor(e.pane, func(s string) bool { return strings.TrimSpace(s) == "%" })
	begin := time.Now()
	errorOf(t, e.run(t, context.Background(), map[string]any{"script": "true"}), "enrollment_lost", "not_sent")
	if d := time.Since(begin); d > 2*time.Second {
		t.Errorf("enrollment_lost took %s; the answer deadline (4 s here) must not be what decides it", d)
	}
	if got := e.state(t); got != "lost" {
		t.Errorf("enrollment after exec zsh = %q; want lost", got)
	}
	e.p.cmd.Process.Signal(syscall.SIGHUP)
	if _, ok := e.p.stderr.line("invited "+e.pane+" again", 20*time.Second); !ok {
		t.Fatalf("no re-invitation after SIGHUP; stderr:\n%s", e.p.stderr)
	}
	e.source(t)
	if got := e.stdoutOf(t, "echo again"); got != "again\n" {
		t.Errorf("after re-enrolling: stdout %q", got)
	}
}

// The broker reads its connections side by side, so under load the ATTACH of an earlier prompt
// (a connection the shell has closed since) could be read after the current prompt's, replace
// it and close it; the shell, seeing its connection hang up, ended its enrollment, and the next
// run answered enrollment_lost (a flaky failure in CI). Here the earlier connection says ATTACH
// after the current one for sure: the shell opens it in one command, and writes ATTACH on it from
// a TRAPALRM at the prompt that follows, whose own connection has attached by then.
func TestTmuxRunEarlierPromptConnectionReplacesNothing(t *testing.T) {
	t.Parallel()
	e := enrollPane(t)
	sent := filepath.Join(e.ts.Dir, "late-attach")
	e.typeAndWait(t, `_libtmux_mcp_connect early; TRAPALRM() { [[ -n ${early-} ]] && builtin syswrite -o $early "ATTACH $_libtmux_mcp_eid"$'\n' && : > `+sent+`; unset early }; TMOUT=1`)
	tmuxtest.WaitFile(t, sent)
	if _, ok := e.p.stderr.line("refused a prompt connection older than the one attached", 10*time.Second); !ok {
		t.Fatalf("the earlier connection's ATTACH was not refused; stderr:\n%s", e.p.stderr)
	}
	if got := e.stdoutOf(t, "echo still"); got != "still\n" {
		t.Errorf("stdout %q", got)
	}
}

// The person's commands inherit neither the broker connection nor the liveness FIFO: a sleep
// started at the enrolled prompt holds only its terminal. While a foreground command runs, the
// broker knows the shell is not at its prompt and says so at once.
func TestTmuxRunCommandsInheritNothing(t *testing.T) {
	tmuxtest.NotPerRelease(t, "the descriptors the enrolled shell hands its commands")
	t.Parallel()
	e := enrollPane(t)
	e.stdoutOf(t, "true") // the resident helper exists
	pidfile := filepath.Join(e.ts.Dir, "sleep.pid")
	e.typeAndWait(t, "sleep 1000 & echo $! > "+pidfile)
	pid := readPID(t, pidfile)
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	// $! is the forked shell until it has exec'd sleep (close-on-exec acts only then).
	var comm []byte
	tmuxtest.Eventually(t, 10*time.Second, fmt.Sprintf("process %d becoming sleep", pid), func() bool {
		comm, _ = os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm") // unreadable: not sleep yet, or gone (then the deadline says so)
		return strings.TrimSpace(string(comm)) == "sleep"
	}, func() string { return fmt.Sprintf("it is %q", comm) })
	if extra := tmuxtest.ExtraFDs(t, pid, 2*time.Second); len(extra) != 0 {
		t.Errorf("the sleep holds %q; want only its terminal on 0-2", extra)
	}
	for fd := range 3 {
		if target, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/" + strconv.Itoa(fd)); !strings.HasPrefix(target, "/dev/pts/") {
			t.Errorf("the sleep's fd %d -> %q; want its terminal", fd, target)
		}
	}
	if got := e.stdoutOf(t, "echo still"); got != "still\n" {
		t.Errorf("stdout %q", got)
	}

	e.ts.Type(e.pane, "sleep 30", true)
	e.ts.WaitCommand(e.pane, "sleep")
	begin := time.Now()
	errorOf(t, e.run(t, context.Background(), map[string]any{"script": "true"}), "not_at_prompt", "not_sent")
	if d := time.Since(begin); d > 2*time.Second {
		t.Errorf("not_at_prompt took %s; want it well under the 4 s answer deadline", d)
	}
	e.ts.Run("send-keys", "-t", e.pane, "C-c")
	e.ts.WaitFor(e.pane, func(s string) bool { return strings.HasSuffix(strings.TrimSpace(s), "%") })
}

// The script sees the shell's umask, resource limits, directory and exported environment as they
// are at the moment of the run, after each is changed at the prompt, also once the resident
// helper exists.
func TestTmuxRunSeesTheShellAsItIsNow(t *testing.T) {
	t.Parallel()
	e := enrollPane(t)
	const probe = `umask; ulimit -n; ulimit -f; pwd; echo "${NEW-unset}"`
	before := e.stdoutOf(t, probe)
	if !strings.HasSuffix(before, "unset\n") {
		t.Fatalf("before: %q", before)
	}
	dir1, dir2 := filepath.Join(e.ts.Dir, "one"), filepath.Join(e.ts.Dir, "two")
	os.Mkdir(dir1, 0o700)
	os.Mkdir(dir2, 0o700)
	for _, step := range []struct{ line, want string }{
		{"umask 027; ulimit -n 512; ulimit -f 1000; cd " + dir1 + "; export NEW=one", "0027\n512\n1000\n" + dir1 + "\none\n"},
		{"umask 077; cd " + dir2 + "; export NEW=two", "0077\n512\n1000\n" + dir2 + "\ntwo\n"},
		{"ulimit -n 256; ulimit -f 500; unset NEW", "0077\n256\n500\n" + dir2 + "\nunset\n"},
	} {
		e.typeAndWait(t, step.line)
		if got := e.stdoutOf(t, probe); got != step.want {
			t.Errorf("after %q: the script saw\n%q; want\n%q", step.line, got, step.want)
		}
	}
}

// A resident helper that dies between runs is replaced at the next run, with nothing for the
// person to do; it is never the shell's child, and it sits in a session of its own.
func TestTmuxRunResidentHelperKilledBetweenRuns(t *testing.T) {
	t.Parallel()
	e := enrollPane(t)
	helperPID := func() int {
		t.Helper()
		n, err := strconv.Atoi(strings.TrimSpace(e.stdoutOf(t, "echo $PPID")))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	first := helperPID()
	if again := helperPID(); again != first {
		t.Errorf("the second run's helper is %d, the first's %d; want one resident helper", again, first)
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(first) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	s := string(stat)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if f[3] != strconv.Itoa(first) || f[1] == strconv.Itoa(shellPID(t, e)) {
		t.Errorf("helper %d: parent %s, session %s; want a session of its own, not the shell's child", first, f[1], f[3])
	}
	if status, err := os.ReadFile("/proc/" + strconv.Itoa(first) + "/status"); err == nil {
		for line := range strings.Lines(string(status)) {
			if strings.HasPrefix(line, "VmRSS:") {
				t.Logf("resident helper %s", strings.Join(strings.Fields(line), " "))
			}
		}
	}
	ended := strings.Count(e.p.stderr.String(), "tmux_run resident helper ended")
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The broker notices (a multi-threaded process closes its descriptors only once its last
	// thread is gone, after /proc already shows it a zombie).
	if !e.p.stderr.waitCount("tmux_run resident helper ended", ended+1, 20*time.Second) {
		t.Fatalf("the broker did not notice the helper's end; stderr:\n%s", e.p.stderr)
	}
	if next := helperPID(); next == first {
		t.Errorf("the run after the kill used helper %d again", next)
	}
}

func shellPID(t testing.TB, e *enrolled) int {
	t.Helper()
	n, err := strconv.Atoi(strings.TrimSpace(e.ts.Run("display-message", "-p", "-t", e.pane, "#{pane_pid}")))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A tmux server started again on the same socket is another server: a run that names the old
// server's generation answers stale_generation, and one that names the new one finds another
// process in the pane id the enrolled shell had.
func TestTmuxRunServerRestartedOnTheSameSocket(t *testing.T) {
	t.Parallel()
	e := enrollPane(t)
	e.stdoutOf(t, "true")
	lost := strings.Count(e.p.stderr.String(), "tmux_run enrollment lost")
	e.ts.KillServer() // the old server is gone before a new one starts on its socket
	if !e.p.stderr.waitCount("tmux_run enrollment lost", lost+1, 20*time.Second) {
		t.Fatalf("the server did not notice the shell's end; stderr:\n%s", e.p.stderr)
	}
	if _, err := e.ts.Client.RunConfig(context.Background(), filepath.Join(e.ts.Dir, "tmux.conf"), "start-server"); err != nil {
		t.Fatal(err)
	}
	pane := e.ts.ZshSession("again")
	if pane != e.pane {
		t.Logf("the new server's first pane is %s, not %s", pane, e.pane)
	}
	errorOf(t, e.run(t, context.Background(), map[string]any{"script": "true"}), "stale_generation", "not_sent")
	// The enrollment was of the old server: no pane of the new one is enrolled (or invited),
	// whatever its id (issue 17, finding 5).
	obj, _ := e.p.answer("list_panes", map[string]any{})
	for _, row := range obj["panes"].([]any) {
		if r := row.(map[string]any); r["enrollment"] != "none" {
			t.Errorf("after the restart, list_panes shows %s as %v (generation %v); want none", r["paneId"], r["enrollment"], r["serverGeneration"])
		}
	}
	info, err := e.ts.Client.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	fresh := map[string]any{"script": "true", "target": map[string]any{"kind": "pane", "id": e.pane, "generation": info.Generation}}
	if pane == e.pane {
		errorOf(t, e.run(t, context.Background(), fresh), "process_changed", "not_sent")
	}
}

// A shell that ignores SIGHUP can outlive respawn-pane -k, alive and still the same process but
// no longer in the pane: the run answers process_changed all the same.
func TestTmuxRunRespawnedPaneWithSurvivingShell(t *testing.T) {
	t.Parallel()
	e := enrollPane(t)
	e.typeAndWait(t, "trap '' HUP")
	e.stdoutOf(t, "true")
	e.ts.Run("respawn-pane", "-k", "-t", e.pane, "env", "ZDOTDIR="+e.ts.ZDOTDIR, "zsh", "-i")
	e.ts.WaitFor(e.pane, func(s string) bool { return strings.HasPrefix(strings.TrimSpace(s), "%") })
	errorOf(t, e.run(t, context.Background(), map[string]any{"script": "true"}), "process_changed", "not_sent")
}

// A run starts no tmux process: the server's tmux binary is a wrapper that counts its calls, and
// twenty runs cost fewer than twenty (the only calls are the run stamps, written after the
// shell agreed, off the runs' path and coalesced). The last run's stamp does reach the pane.
func TestTmuxRunStartsNoTmuxProcess(t *testing.T) {
	t.Parallel()
	calls := countingTmux(t)
	e := invitePane(t, []string{"--tmux-bin", calls.wrapper})
	e.source(t)
	e.stdoutOf(t, "true") // the resident helper exists
	before := calls.count()
	const runs = 20
	var last string
	for range runs {
		d := data(t, e.run(t, context.Background(), map[string]any{"script": "true"}))
		last = d["authorization"].(map[string]any)["run_id"].(string)
	}
	t.Logf("%d runs, %d tmux processes", runs, calls.count()-before)
	if n := calls.count() - before; n >= runs {
		t.Errorf("%d runs started %d tmux processes; want fewer than one per run:\n%s", runs, n, calls.log())
	}
	var got string
	tmuxtest.Eventually(t, 10*time.Second, "the pane's @libtmux_mcp_run naming the last run "+last, func() bool {
		got = strings.TrimSpace(e.ts.Run("show-options", "-p", "-q", "-v", "-t", e.pane, "@libtmux_mcp_run"))
		return got == last
	}, func() string { return fmt.Sprintf("it is %q", got) })
}
