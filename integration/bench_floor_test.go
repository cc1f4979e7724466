package integration

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// BenchmarkRunShellCommandSeq2000Floor measures how much of
// run_shell_command's `seq 1 2000` is the shell's and tmux's, in one run on
// one tmux server: run_shell_command and capture_pane through the MCP client
// on one zsh pane (as BenchmarkRunShellCommandSeq2000 does), and, alternating
// with them, the same framed line pasted into a second zsh pane by a bare
// control client that only waits for the status line in %output (no MCP, no
// protection check, no view: the floor of any frame-based run), followed by
// a capture-pane process on that pane. Beside the usual figures it reports
// floor-median-ms, floor/capture, capture-process-median-ms and
// best-possible/capture: the floor plus the share of a call that capture_pane
// pays beyond its tmux process (JSON-RPC, the SDK, the handler), over
// capture_pane; while that is over 2, no change outside the frame brings the
// run under 2x capture_pane.
//
//	go test ./integration -run '^$' -bench 'Seq2000Floor' -benchtime 100x
func BenchmarkRunShellCommandSeq2000Floor(b *testing.B) {
	ts := tmuxServer(b)
	pane := shellBenchPane(b, ts, "zsh")
	bare := ts.ZshSession("bare")
	ts.Run("resize-window", "-t", bare, "-x", "80", "-y", "24")
	p := start(b, cleanEnv(b, ts.Dir), "--socket", ts.Socket)
	args := map[string]any{"paneId": pane, "command": "seq 1 2000"}
	capture := map[string]any{"paneId": pane}
	p.call("run_shell_command", args)
	ctl := exec.Command("tmux", "-S", ts.Socket, "-C", "attach", "-t", "=bare")
	in, err := ctl.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := ctl.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := ctl.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { in.Close(); ctl.Process.Kill(); ctl.Wait() })
	output := bareOutput(out, bare)
	runs := make([]time.Duration, 0, b.N)
	captures := make([]time.Duration, 0, b.N)
	floors := make([]time.Duration, 0, b.N)
	processes := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		run, capt, _ := runThenCapture(b, p, i, args, capture, `"exitStatus":0`)
		runs, captures = append(runs, run), append(captures, capt)
		floors = append(floors, bareRun(b, in, output, bare, fmt.Sprintf("ltfloor%05d", i), func() string { return ts.Capture(bare) }))
		begin := time.Now()
		if err := exec.Command("tmux", "-S", ts.Socket, "capture-pane", "-p", "-t", bare).Run(); err != nil {
			b.Fatal(err)
		}
		processes = append(processes, time.Since(begin))
	}
	b.StopTimer()
	reportBeside(b, runs, captures)
	floor, _ := quantiles(floors)
	capture50, _ := quantiles(captures)
	process, _ := quantiles(processes)
	b.ReportMetric(ms(floor), "floor-median-ms")
	b.ReportMetric(ms(floor)/ms(capture50), "floor/capture")
	b.ReportMetric(ms(process), "capture-process-median-ms")
	// The least any MCP run_shell_command could answer in: the floor plus
	// the share of a call that capture_pane pays beyond its tmux process.
	b.ReportMetric((ms(floor)+ms(capture50)-ms(process))/ms(capture50), "best-possible/capture")
}

// bareOutput sends the %output data of pane, as tmux escaped it, one
// notification at a time.
func bareOutput(r io.Reader, pane string) <-chan string {
	ch := make(chan string, 256)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "%output "+pane+" "); ok {
				ch <- data
			}
		}
	}()
	return ch
}

// bareRun pastes the zsh frame that run_shell_command types for
// `seq 1 2000` (see newStreamFrame: eval of the whole subshell, one fork,
// HASH_DIRS off in it) into pane over the control client, and
// returns the time until its status line shows in the pane's output.
func bareRun(b *testing.B, in io.Writer, output <-chan string, pane, nonce string, show func() string) time.Duration {
	line := " builtin echo " + nonce + "''-s;\\eval $'( builtin setopt nohashdirs;seq 1 2000\\012)';builtin echo $'\\n'" + nonce + "''-e:$?"
	quoted := "'" + strings.ReplaceAll(line, "'", `'\''`) + "'"
	want := nonce + "-e:0"
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	begin := time.Now()
	fmt.Fprintf(in, "set-buffer -b ltfloor -- %s ; paste-buffer -p -d -b ltfloor -t %s ; send-keys -t %s Enter\n", quoted, pane, pane)
	seen := "" // the tail of the output so far: a marker may be cut between notifications
	for {
		select {
		case data, ok := <-output:
			if !ok {
				b.Fatal("the bare control client ended")
			}
			seen = seen[max(len(seen)-len(want), 0):] + data
			if strings.Contains(seen, want) {
				return time.Since(begin)
			}
		case <-deadline.C:
			b.Fatalf("no status line %q in pane %s within 10 s; the pane shows:\n%s", want, pane, show())
		}
	}
}
