package integration

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkStartupToToolsList measures a client's wait from starting the
// server process to the answer of its first tools/list: process start,
// configuration, the one tmux call that reads the running server, the MCP
// handshake and the listing. It reports the median and p95.
//
// With LIBTMUX_MCP_BENCH_PEER set to another server's command line, {SOCK}
// standing for the tmux socket's path, for example
//
//	LIBTMUX_MCP_BENCH_PEER="/path/to/other-server --socket {SOCK}"
//
// each iteration starts both, ours first, on the same tmux server, and it
// reports the peer's median and p95 and the ratio of the medians (ours /
// the peer's) from that one run. The peer sees the same environment as
// ours (PATH, a private HOME, TMUX_TMPDIR).
func BenchmarkStartupToToolsList(b *testing.B) {
	ts := tmuxServer(b)
	env := cleanEnv(b, shortTempDir(b))
	ours := append([]string{build(b).server}, "--socket", ts.Socket) // built before the timer starts
	peer := benchPeer(ts.Socket)
	samples := make([]time.Duration, 0, b.N)
	var peerSamples []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		samples = append(samples, startupToToolsList(b, env, ours))
		if peer != nil {
			peerSamples = append(peerSamples, startupToToolsList(b, env, peer))
		}
	}
	oursMedian, _ := quantiles(samples)
	reportLatency(b, samples)
	if peer != nil {
		median, p95 := quantiles(peerSamples)
		b.ReportMetric(ms(median), "peer-median-ms")
		b.ReportMetric(ms(p95), "peer-p95-ms")
		b.ReportMetric(ms(oursMedian)/ms(median), "ours/peer")
		b.Logf("start-up to the first tools/list, %d runs each: ours %.2f ms median, peer (%s) %.2f ms median, ours/peer %.2f",
			len(samples), ms(oursMedian), strings.Join(peer, " "), ms(median), ms(oursMedian)/ms(median))
	}
}

// benchPeer is LIBTMUX_MCP_BENCH_PEER's command line, split at spaces, with
// {SOCK} standing for socket; nil when the variable is unset.
func benchPeer(socket string) []string {
	var peer []string
	for _, f := range strings.Fields(os.Getenv("LIBTMUX_MCP_BENCH_PEER")) {
		peer = append(peer, strings.ReplaceAll(f, "{SOCK}", socket))
	}
	return peer
}

// startupToToolsList starts argv as an MCP server over stdio, and returns
// how long its first tools/list took to answer, from the process start.
// The process is stopped (stdin closed) before it returns, untimed.
func startupToToolsList(b *testing.B, env, argv []string) time.Duration {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	stderr := newSyncBuffer()
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "libtmux-mcp-bench", Version: "0"}, nil)
	begin := time.Now()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second},
		&mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		b.Fatalf("connect to %s: %v\nstderr:\n%s", strings.Join(argv, " "), err, stderr.String())
	}
	res, err := cs.ListTools(ctx, nil)
	took := time.Since(begin)
	if err != nil || len(res.Tools) == 0 {
		b.Fatalf("%s: tools/list answered %v tools, error %v\nstderr:\n%s", strings.Join(argv, " "), res, err, stderr.String())
	}
	cs.Close()
	return took
}
