package main

import (
	"fmt"
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

// measure reads this process's goroutines, open fds and child processes.
func measure(t *testing.T) usage {
	t.Helper()
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

// baseline measures once this process runs no child: the warm-up's last
// tmux command and its control-mode client (closed after the live pool's
// idle second) are gone, as they must be again after the loop.
// kept is how many child processes the warm-up leaves on purpose: a
// control-mode connection that keeps a watched pane's view.
func baseline(t *testing.T, kept int) usage {
	t.Helper()
	var n int
	tmuxtest.Eventually(t, 5*time.Second, "the warm-up's child processes ending", func() bool {
		n = children(t)
		return n == kept
	}, func() string { return fmt.Sprintf("%d still run; want %d", n, kept) })
	return measure(t)
}

// settle waits, at most 5 s, until nothing grew since before, and fails the
// test naming what stayed: a tmux command or a control-mode connection in
// flight at one moment is not a leak; one that stays is.
func settle(t *testing.T, before usage, what string) usage {
	t.Helper()
	var after usage
	tmuxtest.Eventually(t, 5*time.Second, what+" leaving goroutines, open fds and child processes where they were", func() bool {
		runtime.Gosched()
		after = measure(t)
		return !after.grew(before)
	}, func() string {
		return fmt.Sprintf("after: %+v; before: %+v (goroutines, open fds and child processes must not grow)", after, before)
	})
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
	tmuxtest.NeedLoad(t)
	tmuxtest.NotPerRelease(t, "the server's goroutines, descriptors and children over 1,000 tmux_run calls through the broker and the helper")
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
	tmuxtest.Eventually(t, 30*time.Second, "the pane enrolling", func() bool {
		row := call("get_pane_info", map[string]any{"paneId": pane})["pane"].(map[string]any)
		gen, _ = row["serverGeneration"].(string)
		return row["enrollment"] == "enrolled"
	}, func() string { return fmt.Sprintf("it shows:\n%s\nstderr: %s", ts.Capture(pane), p.stderr) })
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
	before := baseline(t, 0)
	for range 1000 {
		run()
	}
	settle(t, before, "1,000 runs")
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
