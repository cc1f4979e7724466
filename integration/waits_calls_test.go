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
	{"list_runs", noArgs, func(t *testing.T, f fixture, obj map[string]any, text string) {
		runs, _ := obj["runs"].([]any)
		if len(runs) != 1 {
			t.Fatalf("list_runs: %s; want the one run_shell_command", text)
		}
		r := runs[0].(map[string]any)
		if r["state"] != "completed" || r["exitStatus"] != float64(3) || r["paneId"] != f.shellPaneID {
			t.Errorf("list_runs: %s; want the run, completed with 3", text)
		}
		f.made["run"], _ = r["handle"].(string)
	}},
	{"wait_for_run", func(f fixture) map[string]any { return map[string]any{"handle": f.made["run"]} },
		func(t *testing.T, f fixture, obj map[string]any, text string) {
			if obj["state"] != "completed" || obj["exitStatus"] != float64(3) || !strings.Contains(text, `"output":["<&>"]`) {
				t.Errorf("wait_for_run: %s; want completed, exitStatus 3, output <&>", text)
			}
		}},
	{"run_shell_command", func(f fixture) map[string]any {
		return map[string]any{"paneId": f.shellPaneID, "command": "sleep 60", "timeoutMs": 300}
	}, func(t *testing.T, f fixture, obj map[string]any, text string) {
		if obj["outcome"] != "timed_out" || obj["handle"] == nil {
			t.Fatalf("run_shell_command: %s; want timed_out with a handle", text)
		}
		f.made["sleep"], _ = obj["handle"].(string)
	}},
	{"cancel_run", func(f fixture) map[string]any { return map[string]any{"handle": f.made["sleep"]} },
		wantText(func(f fixture) string { return `"state":"interrupted"` })},
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
