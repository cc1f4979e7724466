package integration

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestTmuxServerKilledBetweenReads: once the tmux server is gone, every
// read answers a tool error that names the dead server and the recovery,
// and the MCP session itself keeps serving.
func TestTmuxServerKilledBetweenReads(t *testing.T) {
	t.Parallel()
	ts := tmuxServer(t)
	pane := ts.NewSession("doomed", "sh")
	p := start(t, cleanEnv(t, shortTempDir(t)), "--socket", ts.Socket)
	p.answer("capture_pane", map[string]any{"paneId": pane})
	ts.KillServer() // gone, not going: the reads below must find no server
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"capture_pane", map[string]any{"paneId": pane}},
		{"list_panes", nil},
		{"get_server_info", nil},
	} {
		res := p.call(tc.tool, tc.args)
		text := resultText(res)
		if !res.IsError || !strings.Contains(text, "not running") || !strings.Contains(text, ts.Socket) {
			t.Errorf("%s after kill-server: isError=%v %q; want a tool error naming the dead server on %s", tc.tool, res.IsError, text, ts.Socket)
		}
	}
	if len(p.listTools()) == 0 {
		t.Error("the session stopped serving after the tmux server died")
	}
}

// TestKilledServerLeavesNoControlClient: a server killed with SIGKILL
// while it watches a pane that prints leaves no control client behind, so
// the person's kill-server still ends their tmux server. tmux keeps a
// control client until the output it holds for it is written, and the
// killed server was the pipe's only reader: without the parent-death
// signal the client stayed, and the tmux server with it after kill-server
// (3.3a, 3.4, 3.5a and 3.6a here; 3.2a and 3.7c did not keep it in this
// test, but 3.7c did when the server had stopped reading first).
func TestKilledServerLeavesNoControlClient(t *testing.T) {
	t.Parallel()
	ts := tmuxServer(t)
	pane := ts.NewSession("loud", "sh", "-c", "while :; do echo loud; done")
	p := start(t, cleanEnv(t, ts.Dir), "--socket", ts.Socket)
	// The wait never answers: the server is killed under it.
	go p.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "wait_for_text", Arguments: map[string]any{"paneId": pane, "pattern": "never-printed", "timeoutMs": 30000}})
	tmuxtest.Eventually(t, 10*time.Second, "the wait attaching a control client", func() bool { return controlClients(ts) != "" })
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.waitExit(20 * time.Second)
	var left string
	tmuxtest.Eventually(t, 10*time.Second, "the killed server's control client going", func() bool {
		left = controlClients(ts)
		return left == ""
	}, func() string { return "control clients (pids): " + left })
	ts.KillServer() // fails unless the tmux server exits
}
