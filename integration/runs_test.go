package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Issue 29, over stdio with a real client: a run_shell_command that
// outlives its wait answers timed_out with a handle; list_runs shows it
// running; wait_for_run collects its exact exit status and output once it
// ended, and list_runs shows it ended. A second run is stopped with
// cancel_run, which answers interrupted, and the pane takes the next
// command.
func TestRunHandlesOverStdio(t *testing.T) {
	t.Parallel()
	ts := tmuxServer(t)
	pane := ts.ZshSession("z")
	p := start(t, cleanEnv(t, ts.Dir), "--socket", ts.Socket)
	gate := filepath.Join(ts.Dir, "gate")
	cmd := fmt.Sprintf("echo started; while [ ! -e %s ]; do sleep 0.05; done; echo finished >&2; exit 7", gate)
	obj, text := p.answer("run_shell_command", map[string]any{"paneId": pane, "command": cmd, "timeoutMs": 300})
	handle, _ := obj["handle"].(string)
	if obj["outcome"] != "timed_out" || handle == "" {
		t.Fatalf("run_shell_command: %s; want timed_out with a handle", text)
	}
	wantRun := func(state string) {
		t.Helper()
		obj, text := p.answer("list_runs", map[string]any{})
		runs, _ := obj["runs"].([]any)
		if len(runs) != 1 {
			t.Fatalf("list_runs: %s; want one run", text)
		}
		r := runs[0].(map[string]any)
		if r["handle"] != handle || r["state"] != state || r["paneId"] != pane || r["tool"] != "run_shell_command" {
			t.Errorf("list_runs: %s; want %s %s in %s", text, handle, state, pane)
		}
	}
	wantRun("running")
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	obj, text = p.answer("wait_for_run", map[string]any{"handle": handle, "timeoutMs": 20000})
	if obj["state"] != "completed" || obj["exitStatus"] != float64(7) || fmt.Sprint(obj["output"]) != "[started finished]" {
		t.Fatalf("wait_for_run: %s; want completed, exit 7, [started finished]", text)
	}
	wantRun("completed")

	obj, text = p.answer("run_shell_command", map[string]any{"paneId": pane, "command": "echo again; sleep 60", "timeoutMs": 300})
	second, _ := obj["handle"].(string)
	if obj["outcome"] != "timed_out" || second == "" {
		t.Fatalf("run_shell_command: %s; want timed_out with a handle", text)
	}
	obj, text = p.answer("cancel_run", map[string]any{"handle": second})
	if obj["state"] != "interrupted" || obj["exitStatus"] != nil {
		t.Fatalf("cancel_run: %s; want interrupted, no exit status", text)
	}
	obj, text = p.answer("run_shell_command", map[string]any{"paneId": pane, "command": "exit 3"})
	if obj["exitStatus"] != float64(3) {
		t.Fatalf("the next command: %s; want exit 3", text)
	}
}
