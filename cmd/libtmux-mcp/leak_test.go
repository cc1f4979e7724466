package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/config"
	"github.com/libtmux/libtmux-mcp/internal/testbin"
	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
	"github.com/libtmux/libtmux-mcp/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
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
	names := config.Names{Tools: mcpserver.ToolNames(), Toolsets: mcpserver.Toolsets}
	env := map[string]string{"LIBTMUX_MCP_SHELL_ANSWER_MS": "10000"}
	cfg, err := config.Load([]string{"--socket", ts.Socket, "--enable-tool", "tmux_run", "--enroll-pane", pane + "=" + file, "--helper", bins.Helper, "--log-level", "error"},
		func(k string) (string, bool) { v, ok := env[k]; return v, ok }, names)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, ct := mcp.NewInMemoryTransports()
	stderr := &lockedBuffer{}
	done := make(chan error, 1)
	go func() { done <- serve(ctx, cfg, st, stderr) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "leak", Version: "0"}, nil).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	call := func(name string, args map[string]any) map[string]any {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		raw, _ := json.Marshal(res.StructuredContent)
		var obj map[string]any
		json.Unmarshal(raw, &obj)
		if res.IsError {
			t.Fatalf("%s: %s", name, raw)
		}
		return obj
	}
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
			t.Fatalf("the pane never enrolled; it shows:\n%s\nstderr: %s", ts.Capture(pane), stderr)
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
	cs.Close()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve: %v", err)
	}
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
