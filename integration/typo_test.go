package integration

import (
	"context"
	"strings"
	"testing"
)

// Issue 30, item 4: a person's typo in an enrolled zsh (a command substitution of a command that
// does not exist, in each form) keeps the enrollment: tmux_run still runs there.
func TestTypoKeepsEnrollment(t *testing.T) {
	t.Parallel()
	e := enrollPane(t)
	for i, typo := range []string{"x=$(nonexistent-cmd-lt)", "x=$(/nonexist/x)", "x=`nonexistent-cmd-lt`"} {
		marker := "typed-" + string(rune('a'+i))
		e.ts.Type(e.pane, typo+"; echo "+marker, true)
		e.ts.WaitFor(e.pane, func(s string) bool { return strings.Contains(s, "\n"+marker) })
		out := e.run(t, context.Background(), map[string]any{"script": "echo still-" + marker})
		d, ok := out["data"].(map[string]any)
		if !ok {
			t.Fatalf("after %q, tmux_run answered %v; want the enrollment kept\nserver stderr:\n%s", typo, out, e.p.stderr)
		}
		if got := d["stdout"].(map[string]any)["data"]; got != "still-"+marker+"\n" {
			t.Errorf("after %q: stdout %q", typo, got)
		}
	}
}
