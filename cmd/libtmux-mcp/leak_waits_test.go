package main

import (
	"strings"
	"testing"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
)

// TestThousandWaitsLeakNothing serves the whole program in this process and makes 1,000 short
// waits in turn (wait_for_text that times out after 1 ms, capture_since that waits 1 ms for
// lines that never come), each through a control-mode connection: goroutines, open fds and child processes must not grow.
func TestThousandWaitsLeakNothing(t *testing.T) {
	tmuxtest.NeedLoad(t)
	ts := tmuxtest.Start(t)
	pane := ts.NewSession("leak", "sh", "-c", "echo ready; exec sleep 600")
	ts.WaitFor(pane, func(s string) bool { return strings.HasPrefix(s, "ready") })
	p := serveInProcess(t, []string{"--socket", ts.Socket, "--log-level", "error"}, nil)
	call := p.call
	cursor := call("capture_since", map[string]any{"paneId": pane})["cursor"]
	wait := func(i int) {
		t.Helper()
		if i%2 == 0 {
			obj := call("wait_for_text", map[string]any{"paneId": pane, "pattern": "never printed", "timeoutMs": 1})
			if obj["outcome"] != "timed_out" {
				t.Fatalf("wait_for_text: %v", obj)
			}
			return
		}
		obj := call("capture_since", map[string]any{"paneId": pane, "cursor": cursor, "waitMs": 1})
		if lines, _ := obj["lines"].([]any); len(lines) > 0 {
			t.Fatalf("capture_since found lines in a quiet pane: %v", obj)
		}
		if obj["streaming"] != true {
			t.Fatalf("capture_since did not wait through control mode: %v", obj)
		}
		cursor = obj["cursor"]
	}
	for i := range 20 { // warm up pools and lazily started goroutines and processes
		wait(i)
	}
	// capture_since keeps its pane watched (the view goes on counting its
	// lines for minutes): its control-mode connection stays, on purpose.
	before := baseline(t, 1)
	for i := range 1000 {
		wait(i)
	}
	after := settle(t, before, "1,000 waits")
	t.Logf("after 1,000 waits: %+v; before: %+v", after, before)
	p.stop()
}
