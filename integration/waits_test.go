package integration

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/testbin"
	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// quietPane is a session whose pane prints one line and then nothing.
func quietPane(t testing.TB, ts *tmuxtest.Server) string {
	t.Helper()
	pane := ts.NewSession("quiet", "sh", "-c", "echo quiet; exec sleep 3600")
	ts.WaitFor(pane, func(screen string) bool { return strings.Contains(screen, "quiet") })
	return pane
}

// TestWaitsConcurrent sends 100 waits (50 wait_for_text on one pane,
// sharing one control connection, and 50 wait_for_channel), then 20
// list_panes calls behind them: the list_panes answers arrive while the
// waits block. Then the pane prints the text and every channel is
// signalled: each wait answers its event, and they end in one wave.
func TestWaitsConcurrent(t *testing.T) {
	t.Parallel()
	ts := tmuxServer(t)
	pane := ts.NewSession("quiet", "sh", "-c", "echo quiet; read x; echo released-$x; exec sleep 3600")
	ts.WaitFor(pane, func(screen string) bool { return strings.Contains(screen, "quiet") })
	p := start(t, cleanEnv(t, ts.Dir), "--socket", ts.Socket)

	var wg sync.WaitGroup
	ends := make(chan time.Duration, 100)
	errs := make(chan error, 120)
	var released atomic.Int64 // when the events were sent, in ns since begin
	begin := time.Now()
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Far longer than any wait here: only the events end them.
			name, args, want := "wait_for_text", map[string]any{"paneId": pane, "pattern": "released-now", "timeoutMs": 30000}, `"outcome":"matched"`
			if i%2 == 1 {
				name, args, want = "wait_for_channel", map[string]any{"channel": fmt.Sprintf("go-%d", i), "timeoutMs": 30000}, `"outcome":"signalled"`
			}
			res, err := p.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
			switch {
			case err != nil:
				errs <- fmt.Errorf("%s: %v", name, err)
			case res.IsError:
				errs <- fmt.Errorf("%s: %s", name, resultText(res))
			case !strings.Contains(resultText(res), want):
				errs <- fmt.Errorf("%s: %s; want %s", name, resultText(res), want)
			}
			ends <- time.Since(begin) - time.Duration(released.Load())
		}()
	}
	// Sent behind the waits (once the first of them is blocking in tmux).
	tmuxtest.Eventually(t, 10*time.Second, "a wait attaching a control client", func() bool {
		return controlClients(ts) != ""
	})
	var lists []time.Duration
	for i := 0; i < 20; i++ {
		sent := time.Now()
		p.answer("list_panes", map[string]any{})
		lists = append(lists, time.Since(sent))
		if n := len(ends); n > 0 {
			t.Fatalf("list_panes %d answered after %d of the waits had ended, not while they blocked", i, n)
		}
	}
	// Every wait must be blocking before the events: a channel signalled
	// before its waiter arrives is not seen.
	tmuxtest.Eventually(t, 30*time.Second, "50 wait-for processes", func() bool {
		return tmuxtest.CountProcesses(t, ts.Socket, "wait-for") >= 50
	})
	released.Store(int64(time.Since(begin)))
	ts.Run("send-keys", "-t", pane, "now", "Enter")
	for i := 1; i < 100; i += 2 {
		ts.Run("wait-for", "-S", fmt.Sprintf("go-%d", i))
	}
	wg.Wait()
	close(ends)
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var last time.Duration
	for d := range ends {
		last = max(last, d)
	}
	// One wave is a figure of this machine: asserted with
	// LIBTMUX_MCP_TIMING_TESTS=1 (.ci/run does, once).
	if last >= 4*time.Second && tmuxtest.Timing() {
		t.Errorf("the last of 100 waits answered %s after its event; want one wave, under 4 s", last)
	}
	t.Logf("100 waits: the last answered %s after the events; 20 list_panes behind them, slowest %s", last, maxDur(lists))
}

func maxDur(ds []time.Duration) time.Duration {
	var m time.Duration
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}

// cpuTicks reads a process's user+system CPU time, in clock ticks.
func cpuTicks(t testing.TB, pid int) int {
	t.Helper()
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	s := string(stat)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	// After the name: state(0) … utime(11) stime(12).
	u, _ := strconv.Atoi(f[11])
	sy, _ := strconv.Atoi(f[12])
	return u + sy
}

// TestWaitForTextIdleCPU: a 3-second wait_for_text that never matches
// costs the server process under 1% of it, 30 ms of CPU, once it is in
// place: it sleeps until tmux reports output, it does not poll (a look at
// the pane every 100 ms costs more). CPU time is threadsCPU's nanoseconds:
// /proc/PID/stat counts 10 ms ticks, and a quiet wait shows 0 to 20 ms of
// them by chance. A figure of this machine, asserted with
// LIBTMUX_MCP_TIMING_TESTS=1 (.ci/run does, once, in a step that runs its
// tests one at a time, so the wait's length is the step's).
func TestWaitForTextIdleCPU(t *testing.T) {
	t.Parallel()
	tmuxtest.NeedTiming(t)
	if testbin.Race() {
		t.Skip("the race detector's own cost would be measured; run without -race")
	}
	ts := tmuxServer(t)
	pane := quietPane(t, ts)
	p := start(t, cleanEnv(t, ts.Dir), "--socket", ts.Socket)
	p.answer("list_panes", map[string]any{})
	pid := p.cmd.Process.Pid
	const wait = 3 * time.Second
	answered := make(chan string, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		res, err := p.cs.CallTool(ctx, &mcp.CallToolParams{Name: "wait_for_text", Arguments: map[string]any{"paneId": pane, "pattern": "never-printed", "timeoutMs": wait.Milliseconds()}})
		if err != nil {
			answered <- err.Error()
			return
		}
		answered <- resultText(res)
	}()
	// The idle part is measured: from the wait's control client attached
	// (the call's own start-up is not idle) to its answer.
	tmuxtest.Eventually(t, 10*time.Second, "the wait attaching a control client", func() bool {
		return controlClients(ts) != ""
	})
	before := threadsCPU(t, pid)
	got := <-answered
	used := threadsCPU(t, pid) - before
	if !strings.Contains(got, `"outcome":"timed_out"`) {
		t.Fatalf("wait_for_text: %s; want timed_out", got)
	}
	if used >= wait/100 {
		t.Errorf("a %s wait used %s of CPU; want under %s", wait, used, wait/100)
	}
	t.Logf("a %s wait_for_text used %s of the server's CPU", wait, used)
}

// threadsCPU is the CPU time pid's threads have used so far, in
// nanoseconds: the sum of the first field of /proc/PID/task/*/schedstat. A
// thread that ends takes its time with it (a Go program's threads last).
func threadsCPU(t testing.TB, pid int) time.Duration {
	t.Helper()
	files, err := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/schedstat")
	if err != nil || len(files) == 0 {
		t.Fatalf("no /proc/%d/task/*/schedstat: %v", pid, err)
	}
	var sum time.Duration
	for _, f := range files {
		b, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			continue // the thread ended
		}
		if err != nil {
			t.Fatal(err)
		}
		fields := strings.Fields(string(b))
		if len(fields) == 0 {
			t.Fatalf("%s: %q", f, b)
		}
		ns, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		sum += time.Duration(ns)
	}
	return sum
}

// descendants lists the processes below pid whose command line contains
// word.
func descendants(pid int, word string) []string {
	parent := map[int]int{}
	cmdline := map[int]string{}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		p, _ := strconv.Atoi(filepath.Base(d))
		stat, err := os.ReadFile(d + "/stat")
		if err != nil {
			continue
		}
		s := string(stat)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 2 {
			continue
		}
		parent[p], _ = strconv.Atoi(f[1])
		cl, _ := os.ReadFile(d + "/cmdline")
		cmdline[p] = strings.ReplaceAll(string(cl), "\x00", " ")
	}
	var out []string
	for p, cl := range cmdline {
		for q := parent[p]; q > 1; q = parent[q] {
			if q == pid {
				if strings.Contains(cl, word) {
					out = append(out, strconv.Itoa(p)+": "+cl)
				}
				break
			}
		}
	}
	return out
}

// TestWaitCancellation cancels waits from the client: each call returns at
// once, and no tmux wait-for process is left behind; a wait's control-mode
// client goes after the pool's idle second, while run_shell_command's and
// capture_since's stay (they keep their pane watched, see docs/internals.md).
func TestWaitCancellation(t *testing.T) {
	t.Parallel()
	ts := tmuxServer(t)
	pane := quietPane(t, ts)
	shell := ts.NewSession("sh", "env", "PS1=$ ", "sh", "-i")
	ts.WaitFor(shell, func(s string) bool { return strings.HasPrefix(strings.TrimSpace(s), "$") })
	p := start(t, cleanEnv(t, ts.Dir), "--socket", ts.Socket)
	pid := p.cmd.Process.Pid
	for _, c := range []struct {
		name  string
		args  map[string]any
		child string
		kept  bool // the process stays: a pane watched on purpose
	}{
		{"wait_for_channel", map[string]any{"channel": "never"}, "wait-for", false},
		{"wait_for_text", map[string]any{"paneId": pane, "pattern": "never-printed"}, " -C ", false},
		{"run_shell_command", map[string]any{"paneId": shell, "command": "sleep 30"}, " -C ", true},
		{"capture_since", nil, " -C ", true},
	} {
		args := c.args
		if args == nil {
			obj, _ := p.answer("capture_since", map[string]any{"paneId": pane})
			args = map[string]any{"paneId": pane, "cursor": obj["cursor"], "waitMs": 60000}
		}
		before := len(descendants(pid, c.child))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := p.cs.CallTool(ctx, &mcp.CallToolParams{Name: c.name, Arguments: args})
			done <- err
		}()
		if c.args != nil {
			tmuxtest.Eventually(t, 10*time.Second, fmt.Sprintf("%s starting a %q process", c.name, c.child), func() bool { return len(descendants(pid, c.child)) > before })
		}
		if c.name == "run_shell_command" {
			ts.WaitForText(shell, "sleep 30")
		}
		begin := time.Now()
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("%s: cancelled call returned %v", c.name, err)
		}
		// The server has stopped the wait once a later call is answered.
		p.answer("list_panes", map[string]any{})
		// A bound, not a figure (usually well under a second): a wait
		// that went on would last its own timeout, 30 s or more.
		if took := time.Since(begin); took > 10*time.Second {
			t.Errorf("%s: freed %s after the cancel; want it freed at once, not at the wait's own timeout", c.name, took)
		}
		if c.kept {
			continue
		}
		// wait-for goes at once; the control client after the pool's idle
		// second.
		tmuxtest.Eventually(t, 5*time.Second, fmt.Sprintf("%s's %q processes ending", c.name, c.child), func() bool { return len(descendants(pid, c.child)) == 0 },
			func() string { return fmt.Sprintf("left behind: %v", descendants(pid, c.child)) })
	}
}

// TestWaitCancelledBySIGTERM: SIGTERM during a wait answers it cancelled,
// then the server exits 0 and leaves no tmux child behind.
func TestWaitCancelledBySIGTERM(t *testing.T) {
	t.Parallel()
	ts := tmuxServer(t)
	pane := quietPane(t, ts)
	p := start(t, cleanEnv(t, ts.Dir), "--socket", ts.Socket)
	pid := p.cmd.Process.Pid
	type answer struct {
		name string
		res  *mcp.CallToolResult
		err  error
	}
	answers := make(chan answer, 2)
	for _, c := range []struct {
		name string
		args map[string]any
	}{
		{"wait_for_text", map[string]any{"paneId": pane, "pattern": "never-printed"}},
		{"wait_for_channel", map[string]any{"channel": "never"}},
	} {
		go func() {
			res, err := p.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.name, Arguments: c.args})
			answers <- answer{c.name, res, err}
		}()
	}
	tmuxtest.Eventually(t, 10*time.Second, "the waits starting (wait-for and a control client)", func() bool {
		return len(descendants(pid, "wait-for")) > 0 && len(descendants(pid, " -C ")) > 0
	})
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		a := <-answers
		if a.err != nil || a.res.IsError || !strings.Contains(resultText(a.res), `"outcome":"cancelled"`) {
			t.Errorf("%s during SIGTERM: %v %v; want outcome cancelled\nstderr:\n%s", a.name, a.err, a.res, p.stderr)
		}
	}
	p.waitExit(10 * time.Second)
	if code := p.exitStatus(); code != 0 {
		t.Errorf("exit status %d after SIGTERM; want 0\nstderr:\n%s", code, p.stderr)
	}
	if left := descendants(pid, "tmux"); len(left) > 0 {
		t.Errorf("tmux processes left behind: %v", left)
	}
}

// TestRunShellCommandSize: the answer to `seq 1 2000` (8,893 bytes of
// output) stays under 10,000 characters: the read budget keeps the
// newest lines and the text copy is the structured answer, once.
func TestRunShellCommandSize(t *testing.T) {
	t.Parallel()
	ts := tmuxServer(t)
	pane := ts.NewSession("sh", "env", "PS1=$ ", "sh", "-i")
	ts.WaitFor(pane, func(s string) bool { return strings.HasPrefix(strings.TrimSpace(s), "$") })
	p := start(t, cleanEnv(t, ts.Dir), "--socket", ts.Socket)
	res := p.call("run_shell_command", map[string]any{"paneId": pane, "command": "seq 1 2000"})
	text := resultText(res)
	if res.IsError || !strings.Contains(text, `"exitStatus":0`) || !strings.Contains(text, `"2000"`) {
		t.Fatalf("seq 1 2000: %s", text)
	}
	if n := len([]rune(text)); n >= 10000 {
		t.Errorf("the answer's text is %d characters; want under 10,000", n)
	}
	t.Logf("seq 1 2000 (8,893 bytes of output): the answer's text is %d characters", len([]rune(text)))
}

// TestLiveOff: LIBTMUX_MCP_LIVE=0 attaches no control client: wait_for_text
// answers a no_stream tool error, capture_since answers at once with
// streaming:false, run_shell_command still completes.
func TestLiveOff(t *testing.T) {
	t.Parallel()
	ts := tmuxServer(t)
	pane := quietPane(t, ts)
	shell := ts.NewSession("sh", "env", "PS1=$ ", "sh", "-i")
	ts.WaitFor(shell, func(s string) bool { return strings.HasPrefix(strings.TrimSpace(s), "$") })
	p := start(t, cleanEnv(t, ts.Dir, "LIBTMUX_MCP_LIVE=0"), "--socket", ts.Socket)

	res := p.call("wait_for_text", map[string]any{"paneId": pane, "pattern": "x"})
	if !res.IsError || !strings.Contains(resultText(res), "no_stream") {
		t.Errorf("wait_for_text: %s; want a no_stream tool error", resultText(res))
	}
	obj, _ := p.answer("capture_since", map[string]any{"paneId": pane})
	begin := time.Now()
	obj, _ = p.answer("capture_since", map[string]any{"paneId": pane, "cursor": obj["cursor"], "waitMs": 10000})
	if obj["streaming"] != false || time.Since(begin) > 5*time.Second {
		t.Errorf("capture_since: %v after %s; want streaming:false at once", obj, time.Since(begin))
	}
	obj, _ = p.answer("run_shell_command", map[string]any{"paneId": shell, "command": "exit 4"})
	if obj["exitStatus"] != float64(4) {
		t.Errorf("run_shell_command: %v; want exitStatus 4", obj)
	}
	if pids := controlClients(ts); pids != "" {
		t.Errorf("a control client attached with LIBTMUX_MCP_LIVE=0: pid %s", pids)
	}
}
