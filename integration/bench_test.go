package integration

import (
	"context"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkTmuxRunTrue measures one tmux_run of `true` end to end through
// the MCP client, the broker, the enrolled zsh and the resident helper, and
// beside it, in the same run against the same server, capture_pane (one tmux
// process: the floor any tool call pays). The calls alternate, so both see
// the same machine. It reports the median and p95 of each, their ratio, and
// the resident helper's resident set size.
//
//	go test -run '^$' -bench 'TmuxRun' -benchtime 400x ./integration/
func BenchmarkTmuxRunTrue(b *testing.B) {
	e := enrollPane(b)
	args := map[string]any{"script": "true"}
	capture := map[string]any{"paneId": e.pane}
	runs := make([]time.Duration, 0, b.N)
	captures := make([]time.Duration, 0, b.N)
	e.run(b, context.Background(), map[string]any{"script": "true"}) // starts the resident helper
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		begin := time.Now()
		obj := e.run(b, context.Background(), args)
		runs = append(runs, time.Since(begin))
		if obj["ok"] != true {
			b.Fatalf("run %d: %v", i, obj)
		}
		begin = time.Now()
		e.p.call("capture_pane", capture)
		captures = append(captures, time.Since(begin))
	}
	b.StopTimer()
	run50, run95 := quantiles(runs)
	cap50, cap95 := quantiles(captures)
	b.ReportMetric(ms(run50), "median-ms")
	b.ReportMetric(ms(run95), "p95-ms")
	b.ReportMetric(ms(cap50), "capture-median-ms")
	b.ReportMetric(ms(cap95), "capture-p95-ms")
	b.ReportMetric(ms(run50)/ms(cap50), "median/capture")
	b.ReportMetric(ms(run95)/ms(cap95), "p95/capture-p95")
	busy := helperRSS(b, e)
	b.ReportMetric(busy, "helper-rss-KiB")
	// An idle helper returns its free memory after a second: wait for that (bounded).
	idle := busy
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && idle >= busy; {
		time.Sleep(100 * time.Millisecond) // polling the helper's RSS
		idle = rssOf(b, helperPIDOf(b, e, false))
	}
	b.ReportMetric(idle, "helper-idle-rss-KiB")
	b.ReportMetric(0, "ns/op")
}

// helperRSS is the resident set size of the pane's resident helper, in KiB.
func helperRSS(b *testing.B, e *enrolled) float64 { return rssOf(b, helperPIDOf(b, e, true)) }

// helperPIDOf finds the resident helper: by a run (the script's parent), or, without running
// anything, as the process whose last run is remembered.
var lastHelper string

func helperPIDOf(b *testing.B, e *enrolled, run bool) string {
	if run || lastHelper == "" {
		d := data(b, e.run(b, context.Background(), map[string]any{"script": "echo $PPID"}))
		lastHelper = strings.TrimSpace(d["stdout"].(map[string]any)["data"].(string))
	}
	return lastHelper
}

func rssOf(b *testing.B, pid string) float64 {
	status, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return 0 // no resident helper: it exited with its run
	}
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return n
		}
	}
	return 0
}

func quantiles(samples []time.Duration) (median, p95 time.Duration) {
	s := slices.Clone(samples)
	slices.Sort(s)
	pick := func(q float64) time.Duration { return s[int(q*float64(len(s)-1))] }
	return pick(0.5), pick(0.95)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// BenchmarkCaptureBaseline measures a capture_pane call on the same kind of
// server, as the floor any tool call pays (client, JSON-RPC, one tmux call).
func BenchmarkCaptureBaseline(b *testing.B) {
	e := enrollPane(b)
	samples := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		begin := time.Now()
		e.p.call("capture_pane", map[string]any{"paneId": e.pane})
		samples = append(samples, time.Since(begin))
	}
	reportLatency(b, samples)
}

// BenchmarkTmuxRunThroughput256KiB measures a script that writes 256 KiB
// to stdout, end to end (the answer carries it twice, as structured content
// and as text); it reports the median call, the rate, and the CPU the
// server and the client spent per call.
func BenchmarkTmuxRunThroughput256KiB(b *testing.B) {
	e := enrollPane(b)
	args := map[string]any{"script": "head -c 262144 /dev/zero | tr '\\0' x", "stdout_limit": 262144}
	samples := make([]time.Duration, 0, b.N)
	b.SetBytes(262144)
	server := e.p.cmd.Process.Pid
	serverTicks, clientCPU := cpuTicks(b, server), selfCPU(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		begin := time.Now()
		res, err := e.p.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "tmux_run", Arguments: withTarget(e, args)})
		samples = append(samples, time.Since(begin))
		if err != nil || res.IsError {
			b.Fatalf("run %d: %v %v", i, err, res)
		}
	}
	b.StopTimer()
	median, p95 := quantiles(samples)
	b.ReportMetric(ms(median), "median-ms")
	b.ReportMetric(ms(p95), "p95-ms")
	// Where a call's time goes: the server's CPU (run, broker, encoding)
	// and this process's, the go-sdk client decoding the answer.
	b.ReportMetric(float64(cpuTicks(b, server)-serverTicks)*10/float64(b.N), "server-cpu-ms")
	b.ReportMetric(ms((selfCPU(b)-clientCPU)/time.Duration(b.N)), "client-cpu-ms")
}

// selfCPU is this process's user and system CPU time so far.
func selfCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func withTarget(e *enrolled, args map[string]any) map[string]any {
	out := map[string]any{"target": map[string]any{"kind": "pane", "id": e.pane, "generation": e.gen}}
	for k, v := range args {
		out[k] = v
	}
	return out
}

func reportLatency(b *testing.B, samples []time.Duration) {
	sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
	pick := func(q float64) time.Duration { return samples[int(q*float64(len(samples)-1))] }
	b.ReportMetric(float64(pick(0.5).Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(pick(0.95).Microseconds())/1000, "p95-ms")
	b.ReportMetric(0, "ns/op")
}
