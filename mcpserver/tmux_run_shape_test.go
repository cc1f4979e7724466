package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/libtmux/libtmux-mcp/tmux"
)

// Issue 27: tmux_run's argument mistakes name the argument, what it must
// be and an example; no decoder's words, no Go types.
func TestTmuxRunArgumentShapes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sel, err := Select(tmux.Provenance{}, []string{}, []string{"tmux_run"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs := connectServer(t, ctx, New(ctx, Deps{Selection: sel, Runner: refusingRunner{}}))
	target := map[string]any{"kind": "pane", "id": "%1", "generation": "g"}
	for _, c := range []struct {
		why        string
		args       map[string]any
		code, want string
	}{
		{"a pane id for target", map[string]any{"target": "%2", "script": "true"}, "invalid_target", "target must be an object, not a string"},
		{"a number for target.id", map[string]any{"target": map[string]any{"kind": "pane", "id": 3, "generation": "g"}, "script": "true"}, "invalid_target", "target.id must be a string, not a number"},
		{"an unknown member of target", map[string]any{"target": map[string]any{"kind": "pane", "id": "%1", "generation": "g", "pid": 1}, "script": "true"}, "invalid_target", `target has no member "pid"`},
		{"an unknown argument", map[string]any{"target": target, "script": "true", "cwd": "/"}, "invalid_script", `has no member "cwd"`},
		{"an array for script", map[string]any{"target": target, "script": []string{"make"}}, "invalid_script", "script must be a string (a POSIX sh script), not an array"},
		{"a string for a limit", map[string]any{"target": target, "script": "true", "stdout_limit": "big"}, "invalid_script", "stdout_limit must be an integer number of bytes, not a string"},
	} {
		e, raw := tmuxRunRefusal(t, cs, c.args)
		if e.Code != c.code || e.Delivery != "not_sent" || !strings.Contains(e.Message, c.want) {
			t.Errorf("%s: %s; want %s, not_sent, saying %q", c.why, raw, c.code, c.want)
		}
		for _, leak := range []string{"unmarshal", "Go struct", "tmuxRunArgs", "json:"} {
			if strings.Contains(e.Message, leak) {
				t.Errorf("%s: the message %q shows the implementation (%q)", c.why, e.Message, leak)
			}
		}
	}
}
