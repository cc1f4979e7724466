package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
)

// claimRefusal is the start of the refusal of a pane another process holds.
func claimRefusal(holder *proc) string {
	return "claimed by libtmux-mcp process " + strconv.Itoa(holder.cmd.Process.Pid)
}

// paneClaim is the claim list_panes shows for pane; nil when none.
func paneClaim(t *testing.T, p *proc, pane string) map[string]any {
	t.Helper()
	obj, _ := p.answer("list_panes", map[string]any{})
	for _, r := range obj["panes"].([]any) {
		row := r.(map[string]any)
		if row["paneId"] == pane {
			c, _ := row["claim"].(map[string]any)
			return c
		}
	}
	t.Fatalf("list_panes has no pane %s", pane)
	return nil
}

// Two server processes on one tmux server: while one's command runs in a pane the other is
// refused at once, told which process holds it and what it runs; list_panes in each shows the
// claim (and whose it is); a holder killed with SIGKILL leaves a claim the other takes over.
func TestOneClaimPerPaneAcrossProcesses(t *testing.T) {
	t.Parallel()
	ts := tmuxServer(t)
	pane := ts.ZshSession("claims")
	a := start(t, cleanEnv(t, ts.Dir), "--socket", ts.Socket, "--toolsets", allToolsets)
	b := start(t, cleanEnv(t, ts.Dir), "--socket", ts.Socket, "--toolsets", allToolsets)

	obj, text := a.answer("run_shell_command", map[string]any{"paneId": pane, "command": "sleep 30", "timeoutMs": 300})
	if obj["outcome"] != "timed_out" {
		t.Fatalf("a's sleep 30: %s; want timed_out", text)
	}
	handle, _ := obj["handle"].(string)

	start := time.Now()
	res := b.call("run_shell_command", map[string]any{"paneId": pane, "command": "echo from-b"})
	took := time.Since(start)
	text = resultText(res)
	if !res.IsError || !strings.Contains(text, claimRefusal(a)) || !strings.Contains(text, `"sleep 30"`) || !strings.Contains(text, handle) {
		t.Fatalf("b's run on a's pane: %s; want a refusal naming process %d, its command and handle %s", text, a.cmd.Process.Pid, handle)
	}
	t.Logf("refused in %s: %s", took, text)
	if tmuxtest.Timing() && took > time.Second {
		t.Errorf("the refusal took %s; want under 1 s", took)
	}

	if c := paneClaim(t, b, pane); c == nil || c["pid"] != float64(a.cmd.Process.Pid) || c["thisProcess"] != false || c["tool"] != "run_shell_command" || c["command"] != "sleep 30" {
		t.Errorf("b's list_panes claim of %s: %v; want a's pid, not this process, run_shell_command, sleep 30", pane, c)
	}
	if c := paneClaim(t, a, pane); c == nil || c["thisProcess"] != true || c["handle"] != handle {
		t.Errorf("a's list_panes claim of %s: %v; want this process, handle %s", pane, c, handle)
	}
	// The person sees it too, in the pane.
	if out := status(t, ts, pane); !strings.Contains(out, "pane "+pane+" is "+claimRefusal(a)) || !strings.Contains(out, `"sleep 30"`) {
		t.Errorf("libtmux-mcp status in %s says %q; want the claim of process %d", pane, out, a.cmd.Process.Pid)
	}

	// a dies mid-run; its sleep goes on in the pane until the person stops it.
	a.cmd.Process.Signal(syscall.SIGKILL)
	a.waitExit(20 * time.Second) // the client's transport reaps it
	ts.Run("send-keys", "-t", pane, "C-c")
	ts.WaitFor(pane, func(s string) bool { return strings.HasSuffix(strings.TrimSpace(s), "%") })
	obj, text = b.answer("run_shell_command", map[string]any{"paneId": pane, "command": "echo took-over"})
	if obj["outcome"] != "completed" || !strings.Contains(text, "took-over") {
		t.Fatalf("b's run after a was killed: %s; want completed", text)
	}
	if note, _ := obj["note"].(string); !strings.Contains(note, "which is gone; this run took the claim over") || !strings.Contains(note, strconv.Itoa(a.cmd.Process.Pid)) {
		t.Errorf("note %q does not say the run took over the claim of process %d", note, a.cmd.Process.Pid)
	}
	if c := paneClaim(t, b, pane); c != nil {
		t.Errorf("list_panes shows a claim after the run ended: %v", c)
	}
	if out := status(t, ts, pane); !strings.Contains(out, "no agent's command runs here") {
		t.Errorf("libtmux-mcp status after the run ended says %q; want no claim", out)
	}
}

// Two processes call run_shell_command on one pane at the same moment, 25 rounds on a zsh pane
// and 25 on a bash pane: each command that ran completed with its output, none timed out, and
// each refusal named the other process.
func TestTwoProcessesRacingForOnePane(t *testing.T) {
	t.Parallel()
	ts := tmuxServer(t)
	panes := map[string]string{"zsh": ts.ZshSession("z"), "bash": bashPane(t, ts, "b")}
	procs := []*proc{
		start(t, cleanEnv(t, ts.Dir), "--socket", ts.Socket, "--toolsets", allToolsets),
		start(t, cleanEnv(t, ts.Dir), "--socket", ts.Socket, "--toolsets", allToolsets),
	}
	ran, refused := 0, 0
	var slowest time.Duration
	for _, shell := range []string{"zsh", "bash"} {
		pane := panes[shell]
		for round := range 25 {
			type answer struct {
				text    string
				isError bool
				outcome any
				took    time.Duration
			}
			answers := make([]answer, 2)
			var wg sync.WaitGroup
			for i, p := range procs {
				wg.Go(func() {
					start := time.Now()
					res := p.call("run_shell_command", map[string]any{"paneId": pane, "command": fmt.Sprintf("echo %s-%d-p%d", shell, round, i), "timeoutMs": 20000})
					obj, _ := res.StructuredContent.(map[string]any)
					answers[i] = answer{text: resultText(res), isError: res.IsError, outcome: obj["outcome"], took: time.Since(start)}
				})
			}
			wg.Wait()
			for i, an := range answers {
				other := procs[1-i]
				switch {
				case an.isError:
					if !strings.Contains(an.text, claimRefusal(other)) {
						t.Errorf("%s round %d, process %d: refusal %q does not name the other process (%d)", shell, round, i, an.text, other.cmd.Process.Pid)
					}
					refused++
					slowest = max(slowest, an.took)
				case an.outcome != "completed" || !strings.Contains(an.text, fmt.Sprintf("%s-%d-p%d", shell, round, i)):
					t.Errorf("%s round %d, process %d: %s; want completed with its output", shell, round, i, an.text)
				default:
					ran++
				}
			}
		}
	}
	t.Logf("%d commands ran, %d refused; the slowest refusal took %s", ran, refused, slowest)
	if ran < 50 {
		t.Errorf("%d of 100 calls ran; each round should run at least one", ran)
	}
	if tmuxtest.Timing() && slowest > time.Second {
		t.Errorf("the slowest refusal took %s; want under 1 s", slowest)
	}
}

// A foreground tmux_run holds its pane's claim: run_shell_command from another process is refused
// while the script runs, so the two never meet in one shell.
func TestTmuxRunHoldsThePaneAgainstAnotherProcess(t *testing.T) {
	t.Parallel()
	e := enrollPane(t)
	b := start(t, cleanEnv(t, e.ts.Dir), "--socket", e.ts.Socket, "--toolsets", allToolsets)
	gate := filepath.Join(shortTempDir(t), "gate")
	done := e.runAsync(context.Background(), "while [ ! -e "+gate+" ]; do sleep 0.05; done; echo released")
	var claim map[string]any
	tmuxtest.Eventually(t, 10*time.Second, "b's list_panes showing the tmux_run's claim", func() bool {
		claim = paneClaim(t, b, e.pane)
		return claim != nil
	})
	if claim["pid"] != float64(e.p.cmd.Process.Pid) || claim["tool"] != "tmux_run" {
		t.Errorf("claim %v; want the tmux_run of process %d", claim, e.p.cmd.Process.Pid)
	}
	res := b.call("run_shell_command", map[string]any{"paneId": e.pane, "command": "echo from-b"})
	if text := resultText(res); !res.IsError || !strings.Contains(text, claimRefusal(e.p)) || !strings.Contains(text, "tmux_run") {
		t.Errorf("b's run_shell_command during a tmux_run: %s; want a refusal naming process %d's tmux_run", text, e.p.cmd.Process.Pid)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case obj := <-done:
		if obj["ok"] != true {
			t.Fatalf("the tmux_run: %v", obj)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the tmux_run did not end after its gate opened")
	}
	obj, text := b.answer("run_shell_command", map[string]any{"paneId": e.pane, "command": "echo from-b"})
	if obj["outcome"] != "completed" || !strings.Contains(text, "from-b") {
		t.Errorf("b's run after the tmux_run ended: %s; want completed", text)
	}
}
