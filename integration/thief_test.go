package integration

import (
	"context"
	"strings"
	"testing"
)

// Issue 30, item 3: a process that inherited the prompt's broker connection and reads it can
// take a request's bytes after zle saw the connection readable; the shell's handler must then
// find nothing and go on, never block in read(2) and freeze the person's prompt. Here the
// handler is called when nothing is there (a widget bound to C-t), as it would be after such a
// theft: the line typed next runs at once, and the enrollment still serves runs.
func TestEmptyConnectionNeverFreezesThePrompt(t *testing.T) {
	t.Parallel()
	e := enrollPane(t)
	e.ts.Type(e.pane, `_lt_poke() { _libtmux_mcp_on_fd $_libtmux_mcp_fd }; zle -N _lt_poke; bindkey '^T' _lt_poke; clear`, true)
	e.ts.WaitFor(e.pane, func(s string) bool { return !strings.Contains(s, "_lt_poke") })
	e.ts.Run("send-keys", "-t", e.pane, "C-t")
	e.ts.Type(e.pane, "echo marker-$((40+2))", true)
	e.ts.WaitFor(e.pane, func(s string) bool { return strings.Contains(s, "\nmarker-42") })

	d := data(t, e.run(t, context.Background(), map[string]any{"script": "echo still-enrolled"}))
	if got := d["stdout"].(map[string]any)["data"]; got != "still-enrolled\n" {
		t.Errorf("tmux_run after the empty read: stdout %q", got)
	}
}
