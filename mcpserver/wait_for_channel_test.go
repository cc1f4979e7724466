package mcpserver

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// withServer fills d as cmd/libtmux-mcp would for ts (with d.Tmux as its
// client when set).
func withServer(t *testing.T, ts *tmuxtest.Server, d Deps) Deps {
	t.Helper()
	var err error
	if d.Tmux == nil {
		if d.Tmux, err = tmux.NewClient(tmux.Route{SocketPath: ts.Socket}, 0); err != nil {
			t.Fatal(err)
		}
	}
	if d.Startup, err = d.Tmux.Ensure(context.Background(), tmux.Want{}); err != nil {
		t.Fatal(err)
	}
	if d.Selection, err = Select(d.Startup.Provenance, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	return d
}

// connectLife serves d with handlers tied to life, which the test cancels
// to play a shutdown while the transport stays up.
func connectLife(t *testing.T, ts *tmuxtest.Server, d Deps) (*mcp.ClientSession, context.CancelFunc) {
	t.Helper()
	d = withServer(t, ts, d)
	life, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	runCtx, endRun := context.WithCancel(context.Background())
	t.Cleanup(endRun)
	return connectServer(t, runCtx, New(life, d)), stop
}

func TestWaitForChannel(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	ts.NewSession("s")
	cs := connect(t, ts, Deps{Limits: Limits{WaitMax: 5 * time.Second}})

	// A signal sent before the wait is kept once.
	var sig signalChannelResult
	call(t, cs, "signal_channel", map[string]any{"channel": "early"}, &sig)
	if !sig.Signalled || sig.Channel != "early" {
		t.Errorf("signal_channel: %+v", sig)
	}
	var got waitForChannelResult
	call(t, cs, "wait_for_channel", map[string]any{"channel": "early"}, &got)
	if got.Outcome != "signalled" || got.EffectiveTimeoutMs != 5000 {
		t.Errorf("wait after signal: %+v; want signalled with the 5000 ms ceiling", got)
	}

	// Signalled during the wait, by a pane's shell.
	done := callAsync[waitForChannelResult](cs, "wait_for_channel", map[string]any{"channel": "later", "timeoutMs": 60000})
	waitingFor(t, ts) // the wait has begun: the signal comes during it, not before
	ts.Run("wait-for", "-S", "later")
	r := receive(t, done, 10*time.Second)
	if r.Outcome != "signalled" || r.EffectiveTimeoutMs != 5000 {
		t.Errorf("wait then signal: %+v; want signalled, clamped to 5000", r)
	}

	// Nobody signals: timed_out at the requested timeout.
	begin := time.Now()
	call(t, cs, "wait_for_channel", map[string]any{"channel": "never", "timeoutMs": 300}, &got)
	if got.Outcome != "timed_out" || got.EffectiveTimeoutMs != 300 || time.Since(begin) > 3*time.Second {
		t.Errorf("unsignalled: %+v after %s; want timed_out at 300 ms", got, time.Since(begin))
	}

	for _, bad := range []string{"", "has space", "ltmcp-x", strings.Repeat("a", 129), "a;b"} {
		callErr(t, cs, "wait_for_channel", map[string]any{"channel": bad}, "channel")
		callErr(t, cs, "signal_channel", map[string]any{"channel": bad}, "channel")
	}
}

func TestWaitForChannelServerDied(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	ts.NewSession("s")
	cs := connect(t, ts, Deps{})
	done := callAsync[waitForChannelResult](cs, "wait_for_channel", map[string]any{"channel": "c"})
	waitingFor(t, ts)
	ts.KillServer() // gone, not going: the signal_channel below must find no server
	r := receive(t, done, 10*time.Second)
	if r.Outcome != "server_died" {
		t.Errorf("server killed during the wait: %+v; want server_died", r)
	}
	// signal_channel, and a wait begun on a dead server, are tool errors
	// naming it.
	callErr(t, cs, "signal_channel", map[string]any{"channel": "c"}, "not running")
	callErr(t, cs, "wait_for_channel", map[string]any{"channel": "c", "timeoutMs": 5000}, "not running")
}

// waitingFor waits until some tmux process of this test runs wait-for
// (the wait has begun), and fails the test when none does within 10 s.
func waitingFor(t *testing.T, ts *tmuxtest.Server) {
	t.Helper()
	tmuxtest.Eventually(t, 10*time.Second, "a tmux wait-for process starting", func() bool {
		return len(childrenRunning(t, "wait-for", ts.Socket)) > 0
	})
}

func TestWaitForChannelCancelledByShutdown(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	ts.NewSession("s")
	cs, shutdown := connectLife(t, ts, Deps{})
	done := callAsync[waitForChannelResult](cs, "wait_for_channel", map[string]any{"channel": "c"})
	waitingFor(t, ts)
	shutdown()
	r := receive(t, done, 5*time.Second)
	if r.Outcome != "cancelled" {
		t.Errorf("shutdown during the wait: %+v; want cancelled", r)
	}
	if left := childrenRunning(t, "wait-for", ts.Socket); len(left) > 0 {
		t.Errorf("tmux wait-for processes left behind: %v", left)
	}
}
