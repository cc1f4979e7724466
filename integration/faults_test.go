package integration

import (
	"strings"
	"testing"
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
