package integration

import (
	"slices"
	"strings"
	"testing"
)

// The cursor wait_for_text answers is good for the next call: text shown
// before it never matches, text printed after it does, and waits on a pane
// this server watches start no tmux process (the position and the rows go
// over the pane's control connection).
func TestWaitForTextCursorCarriesOn(t *testing.T) {
	t.Parallel()
	ts := tmuxServer(t)
	pane := bashPane(t, ts, "w")
	ts.Type(pane, "echo old-$((40+2))", true)
	ts.WaitFor(pane, func(s string) bool { return strings.Contains(s, "\nold-42") })
	calls := countingTmux(t)
	p := start(t, cleanEnv(t, ts.Dir), "--socket", ts.Socket, "--tmux-bin", calls.wrapper)

	first, text := p.answer("wait_for_text", map[string]any{"paneId": pane, "pattern": "old-42"})
	if first["outcome"] != "matched" || first["already"] != true {
		t.Fatalf("first wait: %s; want matched, already:true", text)
	}
	cur, _ := first["cursor"].(string)
	if !strings.HasPrefix(cur, "lv1.") {
		t.Fatalf("first wait answered cursor %q; want a cursor in the pane's output (lv1.)", cur)
	}

	before := calls.count()
	for i := range 5 {
		obj, text := p.answer("wait_for_text", map[string]any{"paneId": pane, "pattern": "old-42", "cursor": cur, "timeoutMs": 50})
		if obj["outcome"] != "timed_out" {
			t.Fatalf("wait %d with the first wait's cursor: %s; want timed_out (old-42 was shown before the cursor)", i, text)
		}
		if obj["cursor"] != cur {
			t.Errorf("wait %d answered cursor %v; want %s again (nothing new was printed)", i, obj["cursor"], cur)
		}
	}
	if n := calls.count() - before; n != 0 {
		t.Errorf("5 waits on a watched pane started %d tmux processes; want none:\n%s", n, calls.log())
	}

	ts.Type(pane, "echo new-$((40+3))", true)
	obj, text := p.answer("wait_for_text", map[string]any{"paneId": pane, "pattern": "new-43", "cursor": cur, "timeoutMs": 10000})
	if obj["outcome"] != "matched" || obj["already"] == true {
		t.Fatalf("wait for what came after the cursor: %s; want matched, not already", text)
	}
	out, _ := obj["output"].([]any)
	if !slices.Contains(out, any("new-43")) || slices.Contains(out, any("old-42")) {
		t.Errorf("output %v; want the new line and not the old one", out)
	}
}
