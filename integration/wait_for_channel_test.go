package integration

import (
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
)

// A wait_for_channel that is signalled starts two tmux processes: the
// wait, which reads the server's identity first in the same invocation,
// and the identity read after it (a killed server also ends wait-for).
func TestWaitForChannelTwoProcesses(t *testing.T) {
	t.Parallel()
	ts := tmuxServer(t)
	ts.NewSession("c")
	calls := countingTmux(t)
	p := start(t, cleanEnv(t, ts.Dir), "--socket", ts.Socket, "--tmux-bin", calls.wrapper)
	p.answer("list_sessions", map[string]any{}) // start-up's own calls are done
	before := calls.count()
	type answer struct {
		obj  map[string]any
		text string
	}
	done := make(chan answer, 1)
	go func() {
		obj, text := p.answer("wait_for_channel", map[string]any{"channel": "two", "timeoutMs": 20000})
		done <- answer{obj, text}
	}()
	tmuxtest.Eventually(t, 10*time.Second, "the wait-for process starting", func() bool {
		return tmuxtest.CountProcesses(t, "wait-for", "two") > 0
	})
	ts.Run("wait-for", "-S", "two")
	var a answer
	select {
	case a = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("no answer within 20 s of the signal")
	}
	if a.obj["outcome"] != "signalled" {
		t.Fatalf("wait_for_channel: %s; want signalled", a.text)
	}
	if n := calls.count() - before; n != 2 {
		t.Errorf("the wait started %d tmux processes; want 2:\n%s", n, calls.log())
	}
}
