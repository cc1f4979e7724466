package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/testbin"
	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
)

// usage is what a long-lived server holds that a leak would grow.
type usage struct {
	goroutines, fds, children int
}

// measure reads this process's goroutines, open fds and child processes,
// after giving finished goroutines a bounded chance to exit.
func measure(t *testing.T, baseline int) usage {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > baseline && time.Now().Before(deadline) {
		runtime.Gosched()
		time.Sleep(10 * time.Millisecond) // polling the runtime's count
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return usage{goroutines: runtime.NumGoroutine(), fds: len(fds), children: children(t)}
}

// grew reports whether u holds more of anything than before.
func (u usage) grew(before usage) bool {
	return u.goroutines > before.goroutines || u.fds > before.fds || u.children > before.children
}

// settle measures until nothing grew since before, or 5 s have passed: a tmux command or a
// control-mode connection in flight at one moment is not a leak; one that stays is.
func settle(t *testing.T, before usage) usage {
	t.Helper()
	after := measure(t, before.goroutines)
	for deadline := time.Now().Add(5 * time.Second); after.grew(before) && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond) // polling the process's own counts
		after = measure(t, before.goroutines)
	}
	return after
}

// children counts live processes whose parent is this process.
func children(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	self := strconv.Itoa(os.Getpid())
	n := 0
	for _, e := range entries {
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(stat)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) > 1 && fields[1] == self && fields[0] != "Z" {
			n++
		}
	}
	return n
}

// TestThousandRunsLeakNothing serves the whole program in this process
// (broker, registry, enrolled zsh, the built helper) and runs tmux_run 1,000
// times: goroutines, open fds and child processes must not grow.
func TestThousandRunsLeakNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 runs; skipped with -short")
	}
	bins := testbin.Build(t)
	ts := tmuxtest.Start(t)
	tmuxtest.Need(t, "zsh")
	pane := ts.ZshSession("leak")
	file := filepath.Join(ts.Dir, "enroll.zsh")
	p := serveInProcess(t, []string{"--socket", ts.Socket, "--enable-tool", "tmux_run", "--enroll-pane", pane + "=" + file, "--helper", bins.Helper, "--log-level", "error"},
		map[string]string{"LIBTMUX_MCP_SHELL_ANSWER_MS": "10000"})
	call := p.call
	ts.WaitFor(pane, func(string) bool { _, err := os.Stat(file); return err == nil })
	ts.Type(pane, "source "+file, true)
	var gen string
	deadline := time.Now().Add(30 * time.Second)
	for {
		row := call("get_pane_info", map[string]any{"paneId": pane})["pane"].(map[string]any)
		if row["enrollment"] == "enrolled" {
			gen = row["serverGeneration"].(string)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pane never enrolled; it shows:\n%s\nstderr: %s", ts.Capture(pane), p.stderr)
		}
		time.Sleep(20 * time.Millisecond) // polling the pane's state
	}
	run := func() {
		t.Helper()
		obj := call("tmux_run", map[string]any{"target": map[string]any{"kind": "pane", "id": pane, "generation": gen}, "script": "true"})
		if obj["ok"] != true {
			t.Fatalf("tmux_run: %v", obj)
		}
	}
	for range 20 { // warm up pools and lazily started goroutines
		run()
	}
	before := measure(t, 0)
	for range 1000 {
		run()
	}
	after := settle(t, before)
	if after.grew(before) {
		t.Errorf("after 1,000 runs: %+v; before: %+v (goroutines, open fds and child processes must not grow)", after, before)
	}
	p.stop()
}

// lockedBuffer is an io.Writer safe for the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
