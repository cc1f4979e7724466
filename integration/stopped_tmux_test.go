package integration

import (
	"context"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Issue 32: with the tmux server stopped (SIGSTOP), every call answers within the command
// deadline, the calls over a control connection (capture_since, run_shell_command) as well as
// the ones that start a tmux process, and the answer says in words what happened and what to
// check: no command line, no socket path, no Go error text. Once tmux resumes, the next call
// works.
func TestStoppedTmuxAnswersWithinTheDeadline(t *testing.T) {
	t.Parallel()
	ts := tmuxServer(t)
	pane := ts.ZshSession("z")
	p := start(t, cleanEnv(t, ts.Dir, "LIBTMUX_MCP_COMMAND_TIMEOUT_MS=1000"), "--socket", ts.Socket)
	// A view exists before tmux stops: capture_since and run_shell_command use its connection.
	first, _ := p.answer("capture_since", map[string]any{"paneId": pane})
	p.answer("run_shell_command", map[string]any{"paneId": pane, "command": "echo ready"})

	pid, err := strconv.Atoi(strings.TrimSpace(ts.Run("display-message", "-p", "#{pid}")))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			syscall.Kill(pid, syscall.SIGCONT)
		}
	}
	defer resume()

	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"capture_since", map[string]any{"paneId": pane, "cursor": first["cursor"]}},
		{"run_shell_command", map[string]any{"paneId": pane, "command": "echo typed-while-stopped", "timeoutMs": 20000}},
		{"list_panes", map[string]any{}},
		{"capture_pane", map[string]any{"paneId": pane}},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		begin := time.Now()
		res, err := p.cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		took := time.Since(begin)
		cancel()
		if err != nil {
			t.Errorf("%s with tmux stopped: no answer within 15 s (%v)", c.tool, err)
			continue
		}
		text := resultText(res)
		if !res.IsError || !strings.Contains(text, "tmux did not answer within 1s") || !strings.Contains(text, "stopped") {
			t.Errorf("%s with tmux stopped, after %s: %s; want a tool error saying tmux did not answer within 1s", c.tool, took.Round(time.Millisecond), text)
		}
		for _, leak := range []string{ts.Socket, "tmux -u", "context deadline exceeded"} {
			if strings.Contains(text, leak) {
				t.Errorf("%s: the answer carries %q: %s", c.tool, leak, text)
			}
		}
		t.Logf("%s answered after %s", c.tool, took.Round(time.Millisecond))
	}

	resume()
	tmuxtest.Eventually(t, 20*time.Second, "capture_since working again once tmux resumed", func() bool {
		res := p.call("capture_since", map[string]any{"paneId": pane})
		return !res.IsError
	}, func() string { return p.stderr.String() })
	obj, text := p.answer("run_shell_command", map[string]any{"paneId": pane, "command": "echo after-resume"})
	if obj["exitStatus"] != 0.0 {
		t.Errorf("run_shell_command after tmux resumed: %s", text)
	}
	// The command answered as refused was not typed when tmux resumed.
	if screen := ts.Capture(pane); strings.Contains(screen, "typed-while-stopped") {
		t.Errorf("the command refused while tmux was stopped reached the pane after it resumed:\n%s", screen)
	}
}
