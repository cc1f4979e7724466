package mcpserver

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
	"github.com/libtmux/libtmux-mcp/tmux"
)

// Without control mode the command line is typed by one tmux process. A
// call cancelled after tmux typed the line but before that process
// answered (here a tmux program that holds its answer 30 s after typing)
// answers cancelled, saying the command may have been typed and may
// still run, not a tool error about a cancelled context.
func TestRunShellCommandCancelledWhileTypingByProcess(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := ts.ZshSession("z")
	real, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatal(err)
	}
	typed := filepath.Join(ts.Dir, "typed")
	slow := filepath.Join(ts.Dir, "slow-tmux")
	script := "#!/bin/sh\ncase \" $* \" in\n*\" send-keys \"*) '" + real + "' \"$@\"; rc=$?; : > '" + typed + "'; sleep 30; exit $rc;;\nesac\nexec '" + real + "' \"$@\"\n"
	tmuxtest.WriteExecutable(t, slow, script)
	c, err := tmux.NewClient(tmux.Route{SocketPath: ts.Socket, Bin: slow}, 0)
	if err != nil {
		t.Fatal(err)
	}
	cs, shutdown := connectLife(t, ts, Deps{Tmux: c, Limits: Limits{NoLive: true}})
	done := callAsync[runShellCommandResult](cs, "run_shell_command", map[string]any{"paneId": pane, "command": "echo started; sleep 30"})
	tmuxtest.WaitFile(t, typed, func() string { return ts.Capture(pane) })
	ts.WaitFor(pane, func(screen string) bool { return strings.Contains(screen, "\nstarted") })
	shutdown()
	got := receive(t, done, 10*time.Second)
	if got.Outcome != "cancelled" || got.ExitStatus != nil || !strings.Contains(got.Note, "may have been typed") {
		t.Errorf("cancelled while typing: %+v; want cancelled, saying the command may have been typed and may still run", got)
	}
}
