package integration

import (
	"slices"
	"strings"
	"testing"
)

// waitCalls are the valid calls TestEveryTool makes of the waits; they
// go before the teardown tools.
var waitCalls = []toolCall{
	{"capture_since", func(f fixture) map[string]any { return map[string]any{"paneId": f.paneID} },
		wantText(func(f fixture) string { return "<&> ready" })},
	{"run_shell_command", func(f fixture) map[string]any {
		return map[string]any{"paneId": f.shellPaneID, "command": "echo '<&>' && exit 3"}
	}, func(t *testing.T, f fixture, obj map[string]any, text string) {
		if obj["outcome"] != "completed" || obj["exitStatus"] != float64(3) || !strings.Contains(text, `"output":["<&>"]`) {
			t.Errorf("run_shell_command: %s; want completed, exitStatus 3, output <&>", text)
		}
	}},
	{"wait_for_text", func(f fixture) map[string]any { return map[string]any{"paneId": f.paneID, "pattern": "<&> ready"} },
		wantText(func(f fixture) string { return `"outcome":"matched"` })},
	{"signal_channel", func(f fixture) map[string]any { return map[string]any{"channel": "every-tool"} },
		wantText(func(f fixture) string { return `"signalled":true` })},
	{"wait_for_channel", func(f fixture) map[string]any { return map[string]any{"channel": "every-tool", "timeoutMs": 5000} },
		wantText(func(f fixture) string { return `"outcome":"signalled"` })},
}

func init() {
	teardown := []string{"kill_pane", "kill_window", "kill_session", "clear_pane_scrollback"}
	i := slices.IndexFunc(toolCalls, func(c toolCall) bool { return slices.Contains(teardown, c.name) })
	if i < 0 {
		i = len(toolCalls)
	}
	toolCalls = slices.Insert(toolCalls, i, waitCalls...)
}
