package mcpserver

import (
	"os"
	"strings"
	"testing"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
)

// Issue 27: after BUILD-DONE was printed once, a wait for the next one
// either waits for new output (with a cursor) or says that what it matched
// was already on the screen.
func TestWaitForTextCursorIgnoresThePast(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := bashSession(t, ts, "b")
	cs := connect(t, ts, Deps{})
	first := runCmd(t, cs, map[string]any{"paneId": pane, "command": "echo BUILD-DONE"})
	wantStatus(t, "the first build", first, 0)

	// Without a cursor, the old line matches at once and says so.
	got := answer(t, waitText(cs, map[string]any{"paneId": pane, "pattern": "BUILD-DONE", "timeoutMs": 5000}))
	if got.Outcome != "matched" || !got.Already || !strings.Contains(got.Note, "cursor") {
		t.Fatalf("a wait for text already shown answered %+v; want matched, already, and a note naming cursor", got)
	}

	// With run_shell_command's cursor, only the next build's line matches.
	// A gate holds the second BUILD-DONE back.
	gate := tmuxtest.ShortTempDir(t, "g") + "/go"
	call(t, cs, "send_keys", map[string]any{"paneId": pane, "text": "while [ ! -e " + gate + " ]; do sleep 0.05; done; echo BUILD-DONE", "enter": true}, nil)
	held := answer(t, waitText(cs, map[string]any{"paneId": pane, "pattern": "BUILD-DONE", "cursor": first.Cursor, "timeoutMs": 1000}))
	if held.Outcome != "timed_out" {
		t.Fatalf("with the second build held back, the wait with a cursor answered %+v; want timed_out", held)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	got = answer(t, waitText(cs, map[string]any{"paneId": pane, "pattern": "BUILD-DONE", "cursor": first.Cursor, "timeoutMs": 20000}))
	if got.Outcome != "matched" || got.Already {
		t.Fatalf("the wait with a cursor answered %+v; want matched, not already", got)
	}
	if n := strings.Count("\n"+ts.Capture(pane)+"\n", "\nBUILD-DONE\n"); n != 2 {
		t.Errorf("when the wait matched, the pane showed BUILD-DONE on %d lines; want 2 (it matched before the output came)", n)
	}

	// Its own cursor waits for the build after that.
	callErr(t, cs, "wait_for_text", map[string]any{"paneId": pane, "pattern": "x", "cursor": "lc1.garbage"}, "cursor")
	later := answer(t, waitText(cs, map[string]any{"paneId": pane, "pattern": "BUILD-DONE", "cursor": got.Cursor, "timeoutMs": 300}))
	if later.Outcome != "timed_out" {
		t.Errorf("a wait from the matched wait's cursor answered %+v; want timed_out (nothing new was printed)", later)
	}
}
