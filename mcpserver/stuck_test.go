package mcpserver

import (
	"strings"
	"testing"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
)

// Issue 27: a run that cannot end by waiting says why: a prompt waiting
// for input shows its unfinished line; a pager is named with the key that
// ends it.
func TestRunShellCommandSaysWhyItIsStuck(t *testing.T) {
	t.Parallel()
	tmuxtest.Need(t, "less")
	ts := tmuxtest.Start(t)
	cs := connect(t, ts, Deps{})

	asks := shellPane(t, ts, "bash")
	got := runCmd(t, cs, map[string]any{"paneId": asks, "command": `read -p "name? " x; echo "hello $x"`, "timeoutMs": 1000})
	if got.Outcome != "timed_out" || len(got.Output) == 0 || got.Output[len(got.Output)-1] != "name?" || !strings.Contains(got.Note, "waiting for input") {
		t.Errorf("a command waiting at read -p answered %+v; want timed_out, its unfinished line name? last, and a note saying it may wait for input", got)
	}

	pages := bashSession(t, ts, "pages")
	got = runCmd(t, cs, map[string]any{"paneId": pages, "command": "seq 1 500 | less", "timeoutMs": 1000})
	if got.Outcome != "timed_out" || !strings.Contains(got.Note, "less is a pager") || !strings.Contains(got.Note, `"keys":["q"]`) {
		t.Errorf("a command in a pager answered %+v; want timed_out naming the pager and q", got)
	}
	// A pager started by hand is named in the refusal to type there.
	manual := bashSession(t, ts, "manual")
	ts.Type(manual, "seq 1 500 | less", true)
	ts.WaitFor(manual, func(screen string) bool { // less's prompt, ":", on the last row
		return strings.HasSuffix(strings.TrimRight(screen, "\n "), "\n:")
	})
	callErr(t, cs, "run_shell_command", map[string]any{"paneId": manual, "command": "true"}, "less is a pager")
}

// Issue 27: right after an interrupt this server sent, a program that has
// not ended yet is refused with "retry", not with the advice just followed.
func TestRunShellCommandAfterAnInterrupt(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := shellPane(t, ts, "bash")
	cs := connect(t, ts, Deps{})
	// A program that takes its time to end on SIGINT (it ignores it).
	call(t, cs, "send_keys", map[string]any{"paneId": pane, "text": "sh -c 'trap \"\" INT; exec sleep 60'", "enter": true}, nil)
	ts.WaitFor(pane, func(string) bool {
		return strings.TrimSpace(ts.Run("display-message", "-p", "-t", pane, "#{pane_current_command}")) == "sleep"
	})
	call(t, cs, "send_keys", map[string]any{"paneId": pane, "keys": []string{"C-c"}}, nil)
	msg := callErr(t, cs, "run_shell_command", map[string]any{"paneId": pane, "command": "true"}, "retry in about a second")
	if strings.Contains(msg, "send_keys C-c") {
		t.Errorf("the refusal %q advises the C-c just sent", msg)
	}
}
