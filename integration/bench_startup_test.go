package integration

import (
	"testing"
	"time"
)

// BenchmarkStartupToToolsList measures a client's wait from starting the
// server process to the answer of its first tools/list: process start,
// configuration, the one tmux call that reads the running server, the MCP
// handshake and the listing. It reports the median and p95.
func BenchmarkStartupToToolsList(b *testing.B) {
	ts := tmuxServer(b)
	env := cleanEnv(b, shortTempDir(b))
	build(b) // not timed
	samples := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		begin := time.Now()
		p := start(b, env, "--socket", ts.Socket)
		if len(p.listTools()) == 0 {
			b.Fatal("the server listed no tools")
		}
		samples = append(samples, time.Since(begin))
		b.StopTimer()
		p.close()
		b.StartTimer()
	}
	reportLatency(b, samples)
}
