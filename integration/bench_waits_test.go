package integration

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
)

// shellBenchPane starts a bash or zsh pane, 80x24.
func shellBenchPane(b *testing.B, ts *tmuxtest.Server, shell string) string {
	var pane string
	if shell == "bash" {
		pane = bashPane(b, ts, "bench")
	} else {
		pane = ts.ZshSession("bench")
	}
	ts.Run("resize-window", "-t", pane, "-x", "80", "-y", "24")
	return pane
}

// BenchmarkRunShellCommandTrue measures run_shell_command `true` end to end
// through the MCP client (the check, typing the framed line, completion and
// status from the pane's output, over the control connection) for bash and
// zsh, with calls back to back and with calls 2 s apart (as an agent's
// are), and beside each call a capture_pane in the same run (one tmux
// process: the floor any tool call pays). The 2 s case makes at most 15
// calls whatever -benchtime asks.
//
//	go test ./integration -run '^$' -bench 'RunShellCommand' -benchtime 200x
func BenchmarkRunShellCommandTrue(b *testing.B) {
	for _, shell := range []string{"bash", "zsh"} {
		for _, gap := range []time.Duration{0, 2 * time.Second} {
			name := shell + "/back-to-back"
			if gap > 0 {
				name = shell + "/2s-apart"
			}
			b.Run(name, func(b *testing.B) {
				ts := tmuxServer(b)
				pane := shellBenchPane(b, ts, shell)
				p := start(b, cleanEnv(b, ts.Dir), "--socket", ts.Socket)
				args := map[string]any{"paneId": pane, "command": "true"}
				capture := map[string]any{"paneId": pane}
				p.call("run_shell_command", args) // the pane is watched from here on
				n := b.N
				if gap > 0 {
					n = min(n, 15)
				}
				runs := make([]time.Duration, 0, n)
				captures := make([]time.Duration, 0, n)
				b.ResetTimer()
				for i := 0; i < n; i++ {
					if gap > 0 {
						b.StopTimer()
						time.Sleep(gap) // the agent's pause between calls
						b.StartTimer()
					}
					run, capt, _ := runThenCapture(b, p, i, args, capture, `"exitStatus":0`)
					runs, captures = append(runs, run), append(captures, capt)
				}
				b.StopTimer()
				reportBeside(b, runs, captures)
			})
		}
	}
}

// runThenCapture times run_shell_command with args, which must answer
// without error and hold every want, then capture_pane with capture, as
// one iteration i of a benchmark; it returns both times and the run's
// answer text.
func runThenCapture(b *testing.B, p *proc, i int, args, capture map[string]any, want ...string) (run, capt time.Duration, text string) {
	b.Helper()
	begin := time.Now()
	res := p.call("run_shell_command", args)
	run = time.Since(begin)
	text = resultText(res)
	for _, w := range want {
		if res.IsError || !strings.Contains(text, w) {
			b.Fatalf("run %d: %s", i, text)
		}
	}
	begin = time.Now()
	p.call("capture_pane", capture)
	return run, time.Since(begin), text
}

// reportBeside reports the median and p95 of runs beside those of
// captures, and their ratios.
func reportBeside(b *testing.B, runs, captures []time.Duration) {
	run50, run95 := quantiles(runs)
	cap50, cap95 := quantiles(captures)
	b.ReportMetric(ms(run50), "median-ms")
	b.ReportMetric(ms(run95), "p95-ms")
	b.ReportMetric(ms(cap50), "capture-median-ms")
	b.ReportMetric(ms(cap95), "capture-p95-ms")
	b.ReportMetric(ms(run50)/ms(cap50), "median/capture")
	b.ReportMetric(ms(run95)/ms(cap95), "p95/capture-p95")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkRunShellCommandSeq2000 measures `seq 1 2000` (8,893 bytes of
// output; the answer keeps the head and the tail) beside capture_pane, and
// reports the characters of the answer's text.
//
// With LIBTMUX_MCP_BENCH_PEER set (see BenchmarkStartupToToolsList), the
// peer runs the same command on a zsh pane of its own, alternating with
// ours, and the benchmark reports the peer's median and ours/peer: an A/B
// of two builds in one run. Each has its own shell because a run can leave
// state in a shell that speeds up the next (zsh's command table).
//
//	LIBTMUX_MCP_BENCH_PEER="/path/to/other-server --socket {SOCK}" \
//	  go test ./integration -run '^$' -bench 'Seq2000$' -benchtime 300x
func BenchmarkRunShellCommandSeq2000(b *testing.B) {
	ts := tmuxServer(b)
	pane := shellBenchPane(b, ts, "zsh")
	p := start(b, cleanEnv(b, ts.Dir), "--socket", ts.Socket)
	args := map[string]any{"paneId": pane, "command": "seq 1 2000"}
	capture := map[string]any{"paneId": pane}
	p.call("run_shell_command", args)
	var peer *proc
	var peerArgs, peerCapture map[string]any
	if argv := benchPeer(ts.Socket); argv != nil {
		peerPane := ts.ZshSession("peer")
		ts.Run("resize-window", "-t", peerPane, "-x", "80", "-y", "24")
		peer = startProgram(b, argv[0], cleanEnv(b, ts.Dir), argv[1:]...)
		peerArgs = map[string]any{"paneId": peerPane, "command": "seq 1 2000"}
		peerCapture = map[string]any{"paneId": peerPane}
		peer.call("run_shell_command", peerArgs)
	}
	runs := make([]time.Duration, 0, b.N)
	captures := make([]time.Duration, 0, b.N)
	var peerRuns []time.Duration
	chars := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		run, capt, text := runThenCapture(b, p, i, args, capture, `"2000"`, `"droppedLines":1800`)
		runs, captures = append(runs, run), append(captures, capt)
		chars = len([]rune(text))
		if peer != nil {
			run, _, _ := runThenCapture(b, peer, i, peerArgs, peerCapture, `"2000"`)
			peerRuns = append(peerRuns, run)
		}
	}
	b.StopTimer()
	reportBeside(b, runs, captures)
	b.ReportMetric(float64(chars), "answer-chars")
	if peer != nil {
		ours, _ := quantiles(runs)
		median, _ := quantiles(peerRuns)
		b.ReportMetric(ms(median), "peer-median-ms")
		b.ReportMetric(ms(ours)/ms(median), "ours/peer")
	}
}

// BenchmarkCaptureSinceSoak is issue 16's soak: a pane prints repeating and
// distinct lines at full speed for 20 s (history-limit 2000) while an
// agent calls capture_since every 200-700 ms; at the end received + missed
// must equal printed, exactly. It reports the lines, the server's CPU
// during the soak and its resident set size after it. Once per run,
// whatever -benchtime asks.
//
//	go test ./integration -run '^$' -bench 'CaptureSinceSoak' -benchtime 1x
func BenchmarkCaptureSinceSoak(b *testing.B) {
	ts := tmuxServer(b)
	tmuxtest.Need(b, "bash")
	ts.Run("set-option", "-g", "history-limit", "2000")
	gate := filepath.Join(ts.Dir, "gate")
	script := `while [ ! -e ` + gate + ` ]; do sleep 0.02; done; n=0; end=$((SECONDS+20)); while [ $SECONDS -lt $end ]; do for k in 1 2 3 4 5 6 7 8 9 10; do echo same; echo "beat $((n % 3))"; echo "distinct $n"; n=$((n+3)); done; done; echo "END $n"; exec sleep 3600`
	pane := ts.NewSession("soak", "bash", "--norc", "--noprofile", "-c", script)
	ts.Run("resize-window", "-t", pane, "-x", "80", "-y", "24")
	p := start(b, cleanEnv(b, ts.Dir), "--socket", ts.Socket)
	obj, _ := p.answer("capture_since", map[string]any{"paneId": pane})
	cursor := obj["cursor"].(string)
	server := p.cmd.Process.Pid
	ticks := cpuTicks(b, server)
	begin := time.Now()
	b.ResetTimer()
	os.WriteFile(gate, nil, 0o600)
	received, missed, calls, printed := 0, 0, 0, -1
	for printed < 0 && time.Since(begin) < 60*time.Second {
		time.Sleep(time.Duration(200+rand.IntN(500)) * time.Millisecond) // the agent's polling cadence
		obj, text := p.answer("capture_since", map[string]any{"paneId": pane, "cursor": cursor})
		calls++
		cursor = obj["cursor"].(string)
		missed += int(obj["missedLines"].(float64))
		if (obj["continuous"] == true) != (obj["missedLines"].(float64) == 0) {
			b.Fatalf("continuous and missedLines disagree: %s", text)
		}
		for _, l := range obj["lines"].([]any) {
			received++
			if s := l.(string); strings.HasPrefix(s, "END ") {
				printed, _ = strconv.Atoi(strings.TrimPrefix(s, "END "))
				printed++ // the END line
			}
		}
	}
	b.StopTimer()
	if received+missed != printed {
		b.Fatalf("received %d + missed %d = %d; want %d printed", received, missed, received+missed, printed)
	}
	b.ReportMetric(float64(printed), "lines-printed")
	b.ReportMetric(float64(received), "lines-received")
	b.ReportMetric(float64(calls), "calls")
	b.ReportMetric(float64(cpuTicks(b, server)-ticks)*10/time.Since(begin).Seconds()/10, "server-cpu-%")
	b.ReportMetric(rssOf(b, strconv.Itoa(server)), "server-rss-KiB")
	b.ReportMetric(0, "ns/op")
}
