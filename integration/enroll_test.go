package integration

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
)

// Issue 28: a server started with tmux_run and no --enroll-pane; a person lends any zsh pane of
// its tmux server by typing eval "$(libtmux-mcp enroll)" there.

// lender starts a server with tmux_run and no --enroll-pane on ts, plus args.
func lender(t testing.TB, ts *tmuxtest.Server, args ...string) *proc {
	t.Helper()
	b := build(t)
	args = append([]string{"--socket", ts.Socket, "--enable-tool", "tmux_run", "--helper", b.helper}, args...)
	p := start(t, cleanEnv(t, shortTempDir(t), "LIBTMUX_MCP_SHELL_ANSWER_MS=4000", "LIBTMUX_MCP_LOG=info"), args...)
	p.startupLine()
	return p
}

// enrollLine is the command a person types, with the built binary's path.
func enrollLine(t testing.TB, args ...string) string {
	return `eval "$(` + strings.Join(append([]string{build(t).server, "enroll"}, args...), " ") + `)"`
}

// typeEnroll types the enroll command into pane, as a person does (keys from outside the server).
func typeEnroll(t testing.TB, ts *tmuxtest.Server, pane string, args ...string) {
	t.Helper()
	ts.Type(pane, enrollLine(t, args...), true)
}

// paneState is the pane's enrollment as get_pane_info reports it.
func paneState(t testing.TB, p *proc, pane string) string {
	t.Helper()
	obj, text := p.answer("get_pane_info", map[string]any{"paneId": pane})
	pi, ok := obj["pane"].(map[string]any)
	if !ok {
		t.Fatalf("get_pane_info %s: %s", pane, text)
	}
	s, _ := pi["enrollment"].(string)
	return s
}

// waitEnrolled waits until p logs an enrollment, the pane says so and its prompt attached.
func waitEnrolled(t testing.TB, p *proc, ts *tmuxtest.Server, pane string) *enrolled {
	t.Helper()
	if !p.stderr.waitCount("tmux_run pane enrolled", 1, 30*time.Second) {
		t.Fatalf("the pane did not enroll; it shows:\n%s\nserver stderr:\n%s", ts.Capture(pane), p.stderr)
	}
	ts.WaitFor(pane, func(s string) bool { return strings.Contains(s, "tmux_run enrolled in pane "+pane) })
	e := &enrolled{p: p, ts: ts, pane: pane, schema: outputSchema(t, p)}
	sh := shellPID(t, e)
	tmuxtest.Eventually(t, 20*time.Second, "the enrolled shell's prompt attaching its connection", func() bool { return holdsSocket(sh) },
		func() string { return notAttached(ts, pane, sh, p) })
	obj, _ := p.answer("get_pane_info", map[string]any{"paneId": pane})
	e.gen = obj["pane"].(map[string]any)["serverGeneration"].(string)
	return e
}

// notAttached says what a test that waited for the enrolled shell's prompt connection can see:
// the pane, the shell's open files and the servers' logs.
func notAttached(ts *tmuxtest.Server, pane string, shell int, servers ...*proc) string {
	msg := "the pane shows:\n" + ts.Capture(pane) + "\nthe shell's open files:\n" + openFiles(shell)
	for _, p := range servers {
		msg += fmt.Sprintf("\nserver %d stderr:\n%s", p.cmd.Process.Pid, p.stderr)
	}
	return msg
}

// status runs libtmux-mcp status as the person would in a pane of ts.
func status(t testing.TB, ts *tmuxtest.Server, pane string) string {
	t.Helper()
	tmuxEnv := strings.TrimSpace(ts.Run("display-message", "-p", "#{socket_path},#{pid},0"))
	cmd := exec.Command(build(t).server, "status")
	cmd.Env = []string{"TMUX=" + tmuxEnv, "TMUX_PANE=" + pane}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("libtmux-mcp status: %v\n%s", err, out)
	}
	return string(out)
}

func TestEnrollTypedByThePersonThenTmuxRun(t *testing.T) {
	t.Parallel()
	ts := tmuxServer(t)
	p := lender(t, ts)
	pane := ts.ZshSession("lent") // made after the server started
	if got := paneState(t, p, pane); got != "none" {
		t.Fatalf("a fresh pane's enrollment = %q; want none", got)
	}
	typeEnroll(t, ts, pane)
	e := waitEnrolled(t, p, ts, pane)
	if got := strings.TrimSpace(ts.Run("show-options", "-p", "-v", "-t", pane, "@libtmux_mcp_enrolled")); got != strconv.Itoa(p.cmd.Process.Pid) {
		t.Errorf("@libtmux_mcp_enrolled = %q on the enrolled pane; want the server's pid %d", got, p.cmd.Process.Pid)
	}

	d := data(t, e.run(t, context.Background(), map[string]any{"script": "echo lent\nexit 7"}))
	if c := d["completion"].(map[string]any); c["state"] != "exited" || c["exit_status"] != 7.0 {
		t.Fatalf("completion %v; want exited 7", c)
	}
	if got := d["stdout"].(map[string]any)["data"]; got != "lent\n" {
		t.Errorf("stdout %q; want %q", got, "lent\n")
	}

	out := status(t, ts, pane)
	for _, want := range []string{"pid " + strconv.Itoa(p.cmd.Process.Pid), "libtmux-mcp-integration", "pane " + pane + " enrolled", "exit 7", "echo lent"} {
		if !strings.Contains(out, want) {
			t.Errorf("libtmux-mcp status does not say %q:\n%s", want, out)
		}
	}

	ts.Type(pane, "libtmux_mcp_unenroll", true)
	tmuxtest.Eventually(t, 20*time.Second, "the pane option cleared after libtmux_mcp_unenroll", func() bool {
		out, _ := ts.Client.Run(context.Background(), "show-options", "-p", "-t", pane)
		return !strings.Contains(out, "@libtmux_mcp_enrolled")
	})
}

func TestEnrollRefusesABashPane(t *testing.T) {
	t.Parallel()
	ts := tmuxServer(t)
	p := lender(t, ts)
	pane := bashPane(t, ts, "b")
	typeEnroll(t, ts, pane)
	ts.WaitForText(pane, "runs bash, not zsh: tmux_run enrolls only zsh; start zsh in the pane (exec zsh)")
	if got := paneState(t, p, pane); got != "none" {
		t.Errorf("the bash pane's enrollment = %q; want none", got)
	}
}

func TestEnrollWithSeveralServersNamesThem(t *testing.T) {
	t.Parallel()
	ts := tmuxServer(t)
	p1, p2 := lender(t, ts), lender(t, ts)
	pane := ts.ZshSession("two")
	typeEnroll(t, ts, pane)
	pid1, pid2 := strconv.Itoa(p1.cmd.Process.Pid), strconv.Itoa(p2.cmd.Process.Pid)
	ts.WaitForText(pane, "2 libtmux-mcp servers with tmux_run serve this tmux server; name one with --server PID")
	if screen := ts.CaptureFlat(pane); !strings.Contains(screen, "pid "+pid1) || !strings.Contains(screen, "pid "+pid2) {
		t.Fatalf("the list does not name both servers (%s, %s):\n%s", pid1, pid2, ts.Capture(pane))
	}
	if got := paneState(t, p1, pane) + "," + paneState(t, p2, pane); got != "none,none" {
		t.Fatalf("enrollment with both servers after the list = %s; want none,none", got)
	}
	ts.Run("send-keys", "-t", pane, "C-l") // clear, so the next answer is the only one shown
	typeEnroll(t, ts, pane, "--server", pid2)
	waitEnrolled(t, p2, ts, pane)
	if got := paneState(t, p1, pane); got != "none" {
		t.Errorf("the other server sees the pane %q; want none", got)
	}
}

func TestEnrollTypedByTheServerRefused(t *testing.T) {
	t.Parallel()
	ts := tmuxServer(t)
	p := lender(t, ts)
	for _, c := range []struct {
		tool string
		args func(pane string) map[string]any
	}{
		{"send_keys", func(pane string) map[string]any {
			return map[string]any{"paneId": pane, "text": enrollLine(t), "enter": true}
		}},
		{"run_shell_command", func(pane string) map[string]any {
			return map[string]any{"paneId": pane, "command": enrollLine(t), "timeoutMs": 20000}
		}},
	} {
		pane := ts.ZshSession(c.tool)
		_, text := p.answer(c.tool, c.args(pane))
		ts.WaitForText(pane, "so it cannot tell that a person typed this request")
		if got := paneState(t, p, pane); got != "none" {
			t.Errorf("after %s typed the command the pane is %q; want none (%s)", c.tool, got, text)
		}
	}
	if strings.Contains(p.stderr.String(), "tmux_run pane enrolled") || strings.Contains(p.stderr.String(), "invited on request") {
		t.Errorf("the server's own input invited or enrolled a pane; stderr:\n%s", p.stderr)
	}
}

// Input from another libtmux-mcp process on the same tmux server refuses the request as this
// server's own would: an agent whose server has send_keys cannot enroll a pane with another
// server that has tmux_run (issue 30, finding 1).
func TestEnrollTypedByAnotherServerRefused(t *testing.T) {
	t.Parallel()
	ts := tmuxServer(t)
	p := lender(t, ts)
	typist := start(t, cleanEnv(t, ts.Dir), "--socket", ts.Socket, "--toolsets", "execute")
	pane := ts.ZshSession("typed")
	typist.answer("send_keys", map[string]any{"paneId": pane, "text": enrollLine(t), "enter": true})
	ts.WaitForText(pane, "libtmux-mcp process "+strconv.Itoa(typist.cmd.Process.Pid)+" sent input to pane "+pane)
	if got := paneState(t, p, pane); got != "none" {
		t.Errorf("after another server typed the command the pane is %q; want none", got)
	}
	if strings.Contains(p.stderr.String(), "invited on request") {
		t.Errorf("another server's input invited a pane; stderr:\n%s", p.stderr)
	}
	// A pane no agent typed into is still the person's to lend.
	fresh := ts.ZshSession("fresh")
	typeEnroll(t, ts, fresh)
	waitEnrolled(t, p, ts, fresh)
}

func TestEnrollWhereNoServerServes(t *testing.T) {
	t.Parallel()
	ts := tmuxServer(t)
	pane := ts.ZshSession("alone")
	typeEnroll(t, ts, pane)
	ts.WaitForText(pane, "no libtmux-mcp server with tmux_run serves this pane's tmux server")
	ts.WaitForText(pane, "--socket-name default")
	ts.WaitForText(pane, "tmux -L libtmux-mcp attach")
}

// Issue 30, item 7: a second server's invitation sourced in a pane enrolled with the first is
// refused before it changes anything: the first enrollment still serves runs. And the second
// server, asked from the pane, does not invite it at all: the pane's mark names the first.
func TestSecondInvitationChangesNothing(t *testing.T) {
	t.Parallel()
	ts := tmuxServer(t)
	pane := ts.ZshSession("kept")
	file := filepath.Join(ts.Dir, "second.zsh")
	p1, p2 := lender(t, ts), lender(t, ts, "--enroll-pane", pane+"="+file)
	if _, ok := p2.stderr.line("source "+file, 30*time.Second); !ok {
		t.Fatalf("no invitation from the second server on stderr:\n%s", p2.stderr)
	}
	typeEnroll(t, ts, pane, "--server", strconv.Itoa(p1.cmd.Process.Pid))
	e := waitEnrolled(t, p1, ts, pane)
	typeEnroll(t, ts, pane, "--server", strconv.Itoa(p2.cmd.Process.Pid))
	ts.WaitForText(pane, fmt.Sprintf("pane %s is lent to the tmux_run of libtmux-mcp process %d already", pane, p1.cmd.Process.Pid))
	ts.Type(pane, "source "+file, true)
	ts.WaitForText(pane, "this shell is already enrolled")
	// The command line detached the shell's connection; the prompt after it attaches a new one.
	sh := shellPID(t, e)
	tmuxtest.Eventually(t, 20*time.Second, "the enrolled shell's prompt attaching its connection again", func() bool { return holdsSocket(sh) },
		func() string { return notAttached(ts, pane, sh, p1, p2) })
	d := data(t, e.run(t, context.Background(), map[string]any{"script": "echo first"}))
	if got := d["stdout"].(map[string]any)["data"]; got != "first\n" {
		t.Errorf("the first server's run after the second invitation: stdout %q", got)
	}
	if got := paneState(t, p2, pane); got == "enrolled" {
		t.Errorf("the second server sees the pane %q; want it not enrolled there", got)
	}
}
