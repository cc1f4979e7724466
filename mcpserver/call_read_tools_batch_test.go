package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func ops(n int, tool string, args map[string]any) []map[string]any {
	out := make([]map[string]any, n)
	for i := range out {
		out[i] = map[string]any{"tool": tool}
		if args != nil {
			out[i]["arguments"] = args
		}
	}
	return out
}

func TestReadBatch(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := shPane(t, ts, "batch")
	ts.Type(pane, "echo hello", true)
	ts.WaitFor(pane, func(s string) bool { return strings.Count(s, "hello") >= 2 })
	cs, client := serve(t, ts, Deps{})

	// 16 operations run, each through its tool's own handler.
	var got batchResult
	call(t, cs, batchName, map[string]any{"operations": ops(16, "snapshot_pane", map[string]any{"paneId": pane})}, &got)
	if got.Succeeded != 16 || got.Failed != 0 || len(got.Results) != 16 || got.StoppedAt != nil {
		t.Fatalf("16 operations = %+v", got)
	}
	for i, r := range got.Results {
		raw, _ := json.Marshal(r.Result)
		var snap snapshotPaneResult
		if err := json.Unmarshal(raw, &snap); err != nil {
			t.Fatalf("row %d: decode %s: %v", i, raw, err)
		}
		if r.Index != i || !r.OK || snap.PaneID != pane || !strings.Contains(strings.Join(snap.Lines, "\n"), "hello") {
			t.Errorf("row %d = %+v", i, r)
		}
	}

	// Refusals of the whole batch: nothing runs, not one tmux call.
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"operations": ops(17, "list_sessions", nil)}, "17 operations; a batch takes at most 16, so nothing ran"},
		{map[string]any{"operations": []any{}}, "operations is empty"},
		{map[string]any{"operations": ops(1, batchName, map[string]any{"operations": ops(1, "list_sessions", nil)})}, "cannot run inside a batch"},
		{map[string]any{"operations": append(ops(1, "list_sessions", nil), ops(1, "no_such_tool", nil)...)}, `operation 1: no tool "no_such_tool" on this server`},
		{map[string]any{"operations": ops(1, "list_sessions", nil), "onError": "ignore"}, "not stop or continue"},
	} {
		before := client.Calls()
		callErr(t, cs, batchName, tc.args, tc.want)
		if n := client.Calls() - before; n != 0 {
			t.Errorf("refused batch made %d tmux calls", n)
		}
	}

	// onError: stop skips what follows a failure; continue runs it.
	mixed := []map[string]any{
		{"tool": "list_sessions"},
		{"tool": "get_pane_info", "arguments": map[string]any{"paneId": "%99"}},
		{"tool": "get_pane_info", "arguments": map[string]any{"paneId": 3}},
		{"tool": "get_pane_info", "arguments": map[string]any{"paneId": pane}},
	}
	got = batchResult{}
	call(t, cs, batchName, map[string]any{"operations": mixed}, &got)
	if got.Succeeded != 1 || got.Failed != 3 || got.StoppedAt == nil || *got.StoppedAt != 1 ||
		!strings.Contains(got.Results[1].Error, "no pane %99") || !strings.Contains(got.Results[3].Error, "not run: row 1 failed") {
		t.Errorf("onError stop = %+v", got)
	}
	got = batchResult{}
	call(t, cs, batchName, map[string]any{"operations": mixed, "onError": "continue"}, &got)
	if got.Succeeded != 2 || got.Failed != 2 || got.StoppedAt != nil || !got.Results[3].OK ||
		!strings.Contains(got.Results[2].Error, "get_pane_info: paneId must be a string, not number; its arguments are paneId") {
		t.Errorf("onError continue = %+v", got)
	}
}

// TestReadBatchRespectsTheSelection: a hidden tool is not callable through
// the batch, nor is a tool outside inspect; the batch's capability row is
// the union of what it can still call.
func TestReadBatchRespectsTheSelection(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := shPane(t, ts, "sel")
	sel, err := Select(tmux.Provenance{}, []string{Inspect}, []string{"tmux_run"}, []string{"capture_pane", "show_environment"})
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, ts, Deps{Selection: sel})
	for _, tc := range []struct{ tool, want string }{
		{"capture_pane", "capture_pane is switched off on this server: it was excluded with --exclude-tool"},
		{"tmux_run", "tmux_run is not a read-only tool"},
	} {
		if msg := callErr(t, cs, batchName, map[string]any{"operations": ops(1, tc.tool, map[string]any{"paneId": pane})}, tc.want); !strings.Contains(msg, "nothing ran") {
			t.Errorf("batch of %s: error %q; want it to say nothing ran", tc.tool, msg)
		}
	}
	if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "capture_pane", Arguments: map[string]any{"paneId": pane}}); err == nil && !res.IsError {
		t.Error("the excluded capture_pane answered a direct call")
	}
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range res.Tools {
		if tl.Name != batchName {
			continue
		}
		raw, _ := json.Marshal(tl.Meta[CapabilityMetaKey])
		if strings.Contains(string(raw), "process-environment") || !strings.Contains(string(raw), "terminal-content") {
			t.Errorf("batch capability with show_environment excluded = %s", raw)
		}
	}
}

// TestReadBatchByteCap fills a pane with long lines so that 16 full
// captures pass the 1,000,000-byte cap; the rows past it say so.
func TestReadBatchByteCap(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := shPane(t, ts, "cap")
	ts.Run("resize-window", "-t", pane, "-x", "1000", "-y", "80")
	ts.Type(pane, "clear; i=0; while [ $i -lt 200 ]; do printf '%0999d\\n' $i; i=$((i+1)); done; echo END", true)
	ts.WaitFor(pane, func(s string) bool { return strings.Contains(s, "\nEND\n") })
	cs := connect(t, ts, Deps{})
	args := map[string]any{"paneId": pane, "start": -300}
	var got batchResult
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: batchName, Arguments: map[string]any{"operations": ops(16, "capture_pane", args), "onError": "continue"}})
	if err != nil || res.IsError {
		t.Fatalf("batch: %v %+v", err, res)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("decode %.300s: %v", raw, err)
	}
	text, _ := json.Marshal(res.Content)
	if total := len(raw) + len(text); total > 1_000_000 {
		t.Errorf("batch answer is %d bytes (structured %d + text); cap is 1,000,000", total, len(raw))
	}
	if got.StoppedAt == nil || got.Succeeded == 0 || got.Succeeded == 16 {
		t.Fatalf("capped batch: stoppedAt %v, %d succeeded", got.StoppedAt, got.Succeeded)
	}
	at := *got.StoppedAt
	t.Logf("%d of 16 captures fit; answer %d bytes of structuredContent", got.Succeeded, len(raw))
	if !strings.Contains(got.Results[at].Error, "answer cap stopped this row") {
		t.Errorf("row %d = %q", at, got.Results[at].Error)
	}
	for _, r := range got.Results[at+1:] {
		if r.OK || !strings.Contains(r.Error, "answer cap was reached") {
			t.Errorf("row %d past the cap = ok %v, %q", r.Index, r.OK, r.Error)
		}
	}
}
