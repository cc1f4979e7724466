package mcpserver

import (
	"strings"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/shellrun"
	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
)

// Text this server typed at a shell's prompt without Enter stays on the
// shell's command line; run_shell_command refuses the pane then, instead
// of typing its command after that text (which would run the text with
// the command as its arguments), until the line is entered or cleared.
// Keys sent to a program other than the shell leave nothing behind.
func TestRunShellCommandRefusesUnenteredInput(t *testing.T) {
	for _, shell := range []string{"bash", "zsh"} {
		t.Run(shell, func(t *testing.T) {
			ts := tmuxtest.Start(t)
			pane := shellPane(t, ts, shell)
			cs := connect(t, ts, Deps{})
			run := map[string]any{"paneId": pane, "command": "echo ran-$((6*7))"}
			wantStatus(t, "first", runCmd(t, cs, run), 0) // the pane's view now follows it

			call(t, cs, "send_keys", map[string]any{"paneId": pane, "text": "echo half-typed"}, nil)
			callErr(t, cs, "run_shell_command", run, `unentered_input: pane `+pane+`'s command line may still hold "echo half-typed"`)
			if screen := ts.Capture(pane); strings.Count(screen, "ran-42") != 1 {
				t.Errorf("the refused command ran:\n%s", screen)
			}
			call(t, cs, "send_keys", map[string]any{"paneId": pane, "keys": []string{"C-U"}}, nil) // tmux reads C-U as C-u
			got := runCmd(t, cs, run)
			wantStatus(t, "after C-u", got, 0)
			if strings.Join(got.Output, "|") != "ran-42" {
				t.Errorf("after C-u: output %q; want [ran-42] (nothing of the cleared text)", got.Output)
			}

			// A newline in the text enters the line before it, which a
			// server without the pane's view (LIBTMUX_MCP_LIVE=0) knows from
			// the text alone.
			noView := connect(t, ts, Deps{Limits: Limits{NoLive: true}})
			call(t, noView, "send_keys", map[string]any{"paneId": pane, "text": "echo typed-with-newline\n"}, nil)
			ts.WaitFor(pane, func(s string) bool { return strings.Contains(s, "\ntyped-with-newline") })
			tmuxtest.Eventually(t, 15*time.Second, "the shell back at its prompt", func() bool { return shellrun.ShellAtPrompt(paneShellPID(t, ts, pane)) })
			wantStatus(t, "after text ending in a newline", runCmd(t, noView, run), 0)

			// Entered by someone else (a person's Enter): the pane's view
			// sees the line finish, and the record ends.
			call(t, cs, "paste_text", map[string]any{"paneId": pane, "text": "echo pasted-then-entered"}, nil)
			callErr(t, cs, "run_shell_command", run, "unentered_input")
			ts.Run("send-keys", "-t", pane, "Enter")
			ts.WaitFor(pane, func(s string) bool { return strings.Contains(s, "\npasted-then-entered") })
			tmuxtest.Eventually(t, 15*time.Second, "the shell back at its prompt", func() bool { return shellrun.ShellAtPrompt(paneShellPID(t, ts, pane)) })
			wantStatus(t, "after a person's Enter", runCmd(t, cs, run), 0)

			// Keys to a program in the foreground are the program's.
			ts.Type(pane, "cat", true)
			ts.WaitCommand(pane, "cat")
			call(t, cs, "send_keys", map[string]any{"paneId": pane, "text": "to-cat"}, nil)
			call(t, cs, "send_keys", map[string]any{"paneId": pane, "keys": []string{"Enter", "C-d"}}, nil)
			tmuxtest.Eventually(t, 15*time.Second, "the shell back at its prompt", func() bool { return shellrun.ShellAtPrompt(paneShellPID(t, ts, pane)) })
			wantStatus(t, "after keys to cat", runCmd(t, cs, run), 0)
		})
	}
}
