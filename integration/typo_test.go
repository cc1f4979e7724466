package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
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

// Issue 30, item 4: `exec bash` while a background job of the shell still holds its liveness
// FIFO is seen at the next run, from the process itself (it exec'd): enrollment_lost, not
// not_at_prompt for as long as the job lives.
func TestExecWithAJobHoldingTheFIFO(t *testing.T) {
	t.Parallel()
	e := enrollPane(t)
	e.ts.Type(e.pane, "{ sleep 60; : } & exec bash --norc --noprofile", true)
	tmuxtest.Eventually(t, 15*time.Second, "the pane running bash", func() bool {
		return strings.TrimSpace(e.ts.Run("display-message", "-p", "-t", e.pane, "#{pane_current_command}")) == "bash"
	}, func() string { return e.ts.Capture(e.pane) })
	out := e.run(t, context.Background(), map[string]any{"script": "echo ran"})
	er := errorOf(t, out, "enrollment_lost", "not_sent")
	if msg, _ := er["message"].(string); !strings.Contains(msg, "exec'd") {
		t.Errorf("enrollment_lost message %q does not say the shell exec'd", msg)
	}
}
