package mcpserver

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
)

// Issue 32, item 1: a zsh or bash running the read builtin owns its
// terminal as at its prompt, and a framed command typed there became
// read's answer (the person's answer then ran as a command, the call
// timed out, the pane stayed run_in_progress). run_shell_command refuses
// such a pane within about a second, types nothing, quotes the prompt the
// pane shows (from its view) and names send_keys; read then takes exactly
// the line typed next, and the pane takes a command again once read ended.
// Twice per pane: on a fresh pane (the full check), and after a run (the
// typing guard of the last check). Both strategies: the view, and
// LIBTMUX_MCP_LIVE=0. A program in the foreground (cat) is still refused,
// at once.
func TestReadingInputRefused(t *testing.T) {
	t.Parallel()
	for _, shell := range []string{"zsh", "bash"} {
		for _, live := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s live=%v", shell, live), func(t *testing.T) {
				t.Parallel()
				ts := tmuxtest.Start(t)
				pane := shellPane(t, ts, shell)
				cs := connect(t, ts, Deps{Limits: Limits{NoLive: !live}})
				read := map[string]string{"zsh": "read x", "bash": "read -r x"}[shell]

				for round, answer := range []string{"first answer", "second; echo injected"} {
					what := fmt.Sprintf("round %d", round+1)
					prompt := fmt.Sprintf("Name%d?", round+1) // not on the screen before this round
					ts.Type(pane, `printf '`+prompt+` '; `+read+`; echo "GOT<$x>"`, true)
					ts.WaitFor(pane, func(screen string) bool { return strings.Contains(screen, "\n"+prompt) })

					start := time.Now()
					// timeoutMs bounds the call where it is not refused: typed
					// into read, the frame never prints its status line.
					msg := callErr(t, cs, "run_shell_command", map[string]any{"paneId": pane, "command": "echo typed-into-read", "timeoutMs": 3000}, "is reading input itself")
					took := time.Since(start)
					for _, want := range []string{"not waiting at its prompt", "nothing was typed", "send_keys", "C-c"} {
						if !strings.Contains(msg, want) {
							t.Errorf("%s: refusal %q; want it to contain %q", what, msg, want)
						}
					}
					if live && !strings.Contains(msg, `last line is "`+prompt+`"`) {
						t.Errorf("%s: refusal %q; want it to quote the pane's last line, %q", what, msg, prompt)
					}
					// Under a second of looks again, then the refusal; more only
					// on a loaded machine.
					if took > 5*time.Second || (tmuxtest.Timing() && took > time.Second) {
						t.Errorf("%s: refused after %s; want it within a second", what, took)
					}
					if screen := ts.CaptureFlat(pane); strings.Contains(screen, "typed-into-read") {
						t.Fatalf("%s: the command was typed into read:\n%s", what, ts.Capture(pane))
					}

					// read takes exactly the line typed next (an injected
					// command included, which stays text).
					ts.Type(pane, answer, true)
					ts.WaitFor(pane, func(screen string) bool { return strings.Contains(screen, "GOT<"+answer+">") })
					if screen := ts.Capture(pane); strings.Contains(screen, "\ninjected") {
						t.Errorf("%s: the answer ran as a command:\n%s", what, screen)
					}

					// The pane is free at once: no claim was left behind.
					got := runCmd(t, cs, map[string]any{"paneId": pane, "command": "echo ok", "timeoutMs": 15000})
					wantStatus(t, what+": echo ok after read", got, 0)
					if fmt.Sprint(got.Output) != "[ok]" {
						t.Errorf("%s: echo ok after read: output %q; want [ok]", what, got.Output)
					}
				}

				// A program in the foreground is refused at once, without the
				// second of looks a shell reading input gets.
				ts.Type(pane, "cat", true)
				ts.WaitCommand(pane, "cat")
				start := time.Now()
				callErr(t, cs, "run_shell_command", map[string]any{"paneId": pane, "command": "echo typed-into-cat", "timeoutMs": 3000}, "not a shell at its prompt")
				if took := time.Since(start); tmuxtest.Timing() && took > 500*time.Millisecond {
					t.Errorf("cat in the foreground refused after %s; want at once", took)
				}
				ts.Run("send-keys", "-t", pane, "C-d")
				ts.WaitCommand(pane, shell)
				wantStatus(t, "echo ok after cat", runCmd(t, cs, map[string]any{"paneId": pane, "command": "echo ok", "timeoutMs": 15000}), 0)
			})
		}
	}
}
