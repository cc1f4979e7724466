package mcpserver

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// waitText starts wait_for_text in the background; answer receives its
// reply.
func waitText(cs *mcp.ClientSession, args map[string]any) <-chan reply[waitForTextResult] {
	return callAsync[waitForTextResult](cs, "wait_for_text", args)
}

// waitingOn waits until the pool holds a connection (the wait has begun).
func waitingOn(t *testing.T, ts *tmuxtest.Server) {
	t.Helper()
	tmuxtest.Eventually(t, 10*time.Second, "a control client attached", func() bool {
		return strings.Contains(ts.Run("list-clients", "-F", "#{client_control_mode}"), "1")
	})
}

// briefViews keeps a pane's view 1 ms after a wait answers (5 minutes
// unless set), so that its control client closes a second later and
// waitingOn then sees the next wait's own connection.
var briefViews = Deps{Limits: Limits{ViewKeep: time.Millisecond}}

// noControlClient waits until the pool has closed its idle connections.
func noControlClient(t *testing.T, ts *tmuxtest.Server) {
	t.Helper()
	tmuxtest.Eventually(t, 10*time.Second, "the idle control client closing", func() bool {
		return !strings.Contains(ts.Run("list-clients", "-F", "#{client_control_mode}"), "1")
	})
}

func answer(t *testing.T, ch <-chan reply[waitForTextResult]) waitForTextResult {
	t.Helper()
	return receive(t, ch, 20*time.Second)
}

func TestWaitForText(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := bashSession(t, ts, "b")
	cs := connect(t, ts, briefViews)

	// Printed after the wait began; the typed line does not contain it.
	ch := waitText(cs, map[string]any{"paneId": pane, "pattern": "ready-42"})
	waitingOn(t, ts)
	ts.Type(pane, "echo first; echo ready-$((40+2))", true)
	got := answer(t, ch)
	if got.Outcome != "matched" || got.Match != "ready-42" || got.Cursor == "" {
		t.Fatalf("got %+v; want matched ready-42 with a cursor", got)
	}
	out := strings.Join(got.Output, "\n")
	if !strings.Contains(out, "first\nready-42") || !strings.Contains(strings.Join(got.Screen, "\n"), "ready-42") {
		t.Errorf("output %q screen %q; want what was printed since the wait began", got.Output, got.Screen)
	}

	// A regular expression, already on the screen: at once.
	got = answer(t, waitText(cs, map[string]any{"paneId": pane, "pattern": `ready-\d+$`, "regex": true}))
	if got.Outcome != "matched" || got.Match != "ready-42" {
		t.Errorf("regex: %+v", got)
	}

	// Printed and scrolled off the screen before any look: still found.
	noControlClient(t, ts) // so that waitingOn sees this wait's connection
	ch = waitText(cs, map[string]any{"paneId": pane, "pattern": `^4321$`, "regex": true})
	waitingOn(t, ts)
	ts.Type(pane, "seq 1 5000", true)
	if got := answer(t, ch); got.Outcome != "matched" || got.Match != "4321" {
		t.Errorf("a line that scrolled away: %+v", got.Outcome)
	}

	// Never printed: timed_out at the requested timeout, with the screen.
	begin := time.Now()
	got = answer(t, waitText(cs, map[string]any{"paneId": pane, "pattern": "never-printed", "timeoutMs": 400}))
	if got.Outcome != "timed_out" || got.EffectiveTimeoutMs != 400 || len(got.Screen) == 0 || time.Since(begin) > 5*time.Second {
		t.Errorf("timeout: %+v after %s", got, time.Since(begin))
	}

	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"paneId": "%99", "pattern": "x"}, "no pane %99"},
		{map[string]any{"paneId": pane, "pattern": ""}, "pattern must be"},
		{map[string]any{"paneId": pane, "pattern": "(", "regex": true}, "not a valid RE2"},
	} {
		callErr(t, cs, "wait_for_text", c.args, c.want)
	}
}

func TestWaitForTextPaneDied(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := ts.NewSession("s", "sleep", "600")
	ts.Run("split-window", "-d", "-t", pane, "sleep", "600")
	cs := connect(t, ts, briefViews)
	ch := waitText(cs, map[string]any{"paneId": pane, "pattern": "x"})
	waitingOn(t, ts)
	begin := time.Now()
	ts.Run("kill-pane", "-t", pane)
	got := answer(t, ch)
	if got.Outcome != "pane_died" || time.Since(begin) > 3*time.Second {
		t.Errorf("killed pane: %+v after %s; want pane_died at once", got, time.Since(begin))
	}

	// The whole server killed: pane_died as well.
	other := ts.NewSession("t", "sleep", "600")
	noControlClient(t, ts)
	ch = waitText(cs, map[string]any{"paneId": other, "pattern": "x"})
	waitingOn(t, ts)
	ts.Run("kill-server")
	if got := answer(t, ch); got.Outcome != "pane_died" {
		t.Errorf("killed server: %+v; want pane_died", got)
	}
}

func TestWaitForTextCancelledAndNoStream(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := ts.NewSession("s", "sleep", "600")
	cs, shutdown := connectLife(t, ts, Deps{})
	ch := waitText(cs, map[string]any{"paneId": pane, "pattern": "x"})
	waitingOn(t, ts)
	shutdown()
	if got := answer(t, ch); got.Outcome != "cancelled" {
		t.Errorf("shutdown: %+v; want cancelled", got)
	}

	off := connect(t, ts, Deps{Limits: Limits{NoLive: true}}) // LIBTMUX_MCP_LIVE=0
	callErr(t, off, "wait_for_text", map[string]any{"paneId": pane, "pattern": "x"}, "no_stream")
}

// TestWaitForTextPaneDiesAndStays: a program that exits in a pane kept by
// remain-on-exit prints nothing and changes no layout; the #{pane_dead}
// subscription tells the wait.
func TestWaitForTextPaneDiesAndStays(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	ts.Run("set", "-g", "remain-on-exit", "on")
	pane := ts.NewSession("s", "sleep", "600")
	cs := connect(t, ts, Deps{})
	ch := waitText(cs, map[string]any{"paneId": pane, "pattern": "never-printed", "timeoutMs": 20000})
	waitingOn(t, ts)
	begin := time.Now()
	ts.KillPaneProcess(pane)
	got := answer(t, ch)
	if got.Outcome != "pane_died" || time.Since(begin) > 5*time.Second {
		t.Errorf("program gone, pane kept: %+v after %s; want pane_died within a few seconds", got.Outcome, time.Since(begin))
	}
}

// TestWaitForTextIgnoresTypedInput: text this server typed with send_keys
// or paste_text shows in the pane as the shell's echo, which is not output.
func TestWaitForTextIgnoresTypedInput(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := bashSession(t, ts, "typed")
	cs := connect(t, ts, Deps{Limits: Limits{Attended: "ignore"}})
	for _, tc := range []struct{ tool, text string }{
		{"send_keys", "zz-typed-by-send-keys"},
		{"paste_text", "zz-typed-by-paste"},
	} {
		call(t, cs, tc.tool, map[string]any{"paneId": pane, "text": tc.text}, nil)
		ts.WaitFor(pane, func(s string) bool { return strings.Contains(s, tc.text) })
		got := answer(t, waitText(cs, map[string]any{"paneId": pane, "pattern": tc.text, "timeoutMs": 500}))
		if got.Outcome != "timed_out" {
			t.Errorf("%s: wait_for_text on the echo of typed text = %s (%q); want timed_out", tc.tool, got.Outcome, got.Match)
		}
		call(t, cs, "send_keys", map[string]any{"paneId": pane, "keys": []string{"C-u"}}, nil)
	}
}

// A line typed while bash still runs its last command is shown twice: the terminal echoes it at
// once, and readline draws it again after its prompt once the command ends. Neither is output.
func TestWaitForTextIgnoresEchoShownTwice(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := bashSession(t, ts, "twice")
	cs := connect(t, ts, Deps{Limits: Limits{Attended: "ignore"}})
	gate := tmuxtest.ShortTempDir(t, "g") + "/go"
	call(t, cs, "send_keys", map[string]any{"paneId": pane, "text": "sleep 1", "enter": true}, nil)
	line := "while [ ! -e " + gate + " ]; do sleep 0.05; done; echo BUILD-DONE"
	call(t, cs, "send_keys", map[string]any{"paneId": pane, "text": line, "enter": true}, nil)
	ts.WaitFor(pane, func(s string) bool { return strings.Count(s, line) == 2 }) // the echo, then readline's
	got := answer(t, waitText(cs, map[string]any{"paneId": pane, "pattern": "BUILD-DONE", "timeoutMs": 500}))
	if got.Outcome != "timed_out" {
		t.Errorf("wait_for_text with the typed line shown twice = %s (%q); want timed_out: BUILD-DONE was never printed", got.Outcome, got.Match)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	got = answer(t, waitText(cs, map[string]any{"paneId": pane, "pattern": "BUILD-DONE", "timeoutMs": 20000}))
	if got.Outcome != "matched" {
		t.Errorf("wait_for_text after the gate opened = %+v; want matched", got)
	}
}
