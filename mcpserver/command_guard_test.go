package mcpserver

import (
	"bytes"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/shellrun"
	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
)

// lockedBuffer is a log destination that handlers may write from any
// goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// take returns what was logged since the last take.
func (l *lockedBuffer) take() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.b.String()
	l.b.Reset()
	return s
}

// A command on a pane whose last check passed is typed under that check's
// guard, without a check of its own; every change that the check would
// refuse, made between two commands, still refuses the second one (nothing
// is typed, the private buffer is gone), and a change it would allow (a
// new shell) runs the command.
func TestRunShellCommandGuard(t *testing.T) {
	ts := tmuxtest.Start(t)
	pane := shellPane(t, ts, "zsh")
	var log lockedBuffer
	cs := connect(t, ts, Deps{Log: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	run := func(command string) runShellCommandResult {
		return runCmd(t, cs, map[string]any{"paneId": pane, "command": command, "timeoutMs": 15000})
	}
	wantStatus(t, "first", run("true"), 0)
	if l := log.take(); strings.Contains(l, "guard") {
		t.Fatalf("the first command on the pane was typed under a guard:\n%s", l)
	}
	wantStatus(t, "second", run("echo two; exit 2"), 2)
	if l := log.take(); !strings.Contains(l, "typed under the guard") {
		t.Fatalf("the second command was checked again; want it typed under the first check's guard. Log:\n%s", l)
	}

	refused := func(what, want string) {
		t.Helper()
		log.take()
		before := ts.CaptureFlat(pane)
		callErr(t, cs, "run_shell_command", map[string]any{"paneId": pane, "command": "echo should-not-run"}, want)
		if l := log.take(); strings.Contains(l, "typed under the guard") || !strings.Contains(l, "missed") && !strings.Contains(what, "cat") {
			t.Errorf("%s: want the guard to miss and nothing typed under it; log:\n%s", what, l)
		}
		if buffers := ts.Run("list-buffers", "-F", "#{buffer_name}"); strings.Contains(buffers, "ltmcp-") {
			t.Errorf("%s: a private buffer is left: %q", what, buffers)
		}
		if after := ts.CaptureFlat(pane); strings.Contains(after, "should-not-run") && !strings.Contains(before, "should-not-run") {
			t.Errorf("%s: the refused command reached the pane:\n%s", what, after)
		}
	}

	ts.Run("copy-mode", "-t", pane)
	refused("copy-mode", "copy-mode")
	ts.Run("send-keys", "-t", pane, "-X", "cancel")
	wantStatus(t, "after copy-mode", run("true"), 0) // a full check again: the guard is renewed

	other := strings.TrimSpace(ts.Run("split-window", "-d", "-P", "-F", "#{pane_id}", "-t", pane, "cat"))
	ts.Run("set-option", "-w", "-t", pane, "synchronize-panes", "on")
	refused("synchronize-panes", "synchronize-panes")
	ts.Run("set-option", "-w", "-t", pane, "synchronize-panes", "off")
	ts.Run("kill-pane", "-t", other)
	wantStatus(t, "after synchronize-panes", run("true"), 0)

	// The guard's shell facts are read before each use.
	ts.Type(pane, "cat", true)
	ts.WaitCommand(pane, "cat")
	refused("cat in the foreground", `runs "cat", not a shell at its prompt`)
	ts.Run("send-keys", "-t", pane, "C-d")
	tmuxtest.Eventually(t, 15*time.Second, "zsh back at its prompt", func() bool { return shellrun.ShellAtPrompt(paneShellPID(t, ts, pane)) })
	wantStatus(t, "after cat", run("true"), 0)

	viewer := ts.AttachPerson(strings.TrimSpace(ts.Run("display-message", "-p", "-t", pane, "#{session_name}")))
	ts.Type(viewer, "k", false) // a key on the person's client: typing mode refuses
	refused("a person typing", "a person is typing")
	ts.Run("kill-session", "-t", viewer)

	// A new shell in the pane: the guard misses, the full check passes.
	old := paneShellPID(t, ts, pane)
	ts.Run("respawn-pane", "-k", "-t", pane, "env", "ZDOTDIR="+ts.ZDOTDIR, "zsh", "-i")
	tmuxtest.Eventually(t, 15*time.Second, "the new zsh at its prompt", func() bool {
		// env execs zsh in the same process: wait for tmux to see zsh too.
		pid := paneShellPID(t, ts, pane)
		return pid != old && shellrun.ShellAtPrompt(pid) && tmuxSays(ts, pane, "#{pane_current_command}") == "zsh"
	})
	got := run("echo fresh")
	wantStatus(t, "in a new shell", got, 0)
	if strings.Join(got.Output, "\n") != "fresh" {
		t.Errorf("in a new shell: output %q; want [fresh]", got.Output)
	}
}

func paneShellPID(t *testing.T, ts *tmuxtest.Server, pane string) int {
	t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(ts.Run("display-message", "-p", "-t", pane, "#{pane_pid}")))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}
