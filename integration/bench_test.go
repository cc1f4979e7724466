package integration

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkTmuxRunTrue measures one tmux_run of `true` end to end through
// the MCP client, the broker, the enrolled zsh and the helper; it reports
// the median and p95 latency.
func BenchmarkTmuxRunTrue(b *testing.B) {
	e := enrollPane(b)
	args := map[string]any{"script": "true"}
	samples := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		begin := time.Now()
		obj := e.run(b, context.Background(), args)
		samples = append(samples, time.Since(begin))
		if obj["ok"] != true {
			b.Fatalf("run %d: %v", i, obj)
		}
	}
	reportLatency(b, samples)
}

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
// to stdout, reported in bytes per second.
func BenchmarkTmuxRunThroughput256KiB(b *testing.B) {
	e := enrollPane(b)
	args := map[string]any{"script": "head -c 262144 /dev/zero | tr '\\0' x", "stdout_limit": 262144}
	b.SetBytes(262144)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := e.p.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "tmux_run", Arguments: withTarget(e, args)})
		if err != nil || res.IsError {
			b.Fatalf("run %d: %v %v", i, err, res)
		}
	}
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
