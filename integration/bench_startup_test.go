package integration

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
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
		keepServing(b, ts)
		samples = append(samples, startupToToolsList(b, env, ours))
		if peer != nil {
			keepServing(b, ts)
			peerSamples = append(peerSamples, startupToToolsList(b, env, peer))
		}
	}
	reportStartup(b, "start-up to the first tools/list", samples, peerSamples, strings.Join(peer, " "))
}

// keepServing makes sure, untimed, that the tmux server runs and holds the
// session "s" before a server under test starts: what is measured is a
// start on a running tmux server. A peer may end the tmux server when it
// exits (Kcrong/tmux-mcp runs kill-server at shutdown, even on a socket it
// was given); the next start would then find none and start one, a
// different and slower path, and every start after it too.
func keepServing(b *testing.B, ts *tmuxtest.Server) {
	b.Helper()
	b.StopTimer()
	defer b.StartTimer()
	if _, err := ts.Client.Run(context.Background(), "has-session", "-t", "=s"); err == nil {
		return
	}
	ts.NewSession("s", "sleep", "3600") // something to list
}

// reportStartup reports ours' latency and, when a peer ran, the peer's
// median and p95 and the ratio of the medians, with a log line saying what
// was measured.
func reportStartup(b *testing.B, what string, ours, peer []time.Duration, peerName string) {
	oursMedian, _ := quantiles(ours)
	reportLatency(b, ours)
	if len(peer) == 0 {
		return
	}
	median, p95 := quantiles(peer)
	b.ReportMetric(ms(median), "peer-median-ms")
	b.ReportMetric(ms(p95), "peer-p95-ms")
	b.ReportMetric(ms(oursMedian)/ms(median), "ours/peer")
	b.Logf("%s, %d runs each: ours %.2f ms median, peer (%s) %.2f ms median, ours/peer %.2f",
		what, len(ours), ms(oursMedian), peerName, ms(median), ms(oursMedian)/ms(median))
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
	return startupTo(b, env, argv, "")
}

// startupTo is startupToToolsList that, when tool is not empty, also
// calls tool (with no arguments) after the listing, as a client's first
// use does, and returns how long its answer took from the process start.
func startupTo(b *testing.B, env, argv []string, tool string) time.Duration {
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
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil || len(res.Tools) == 0 {
		b.Fatalf("%s: tools/list answered %v tools, error %v\nstderr:\n%s", strings.Join(argv, " "), res, err, stderr.String())
	}
	if tool != "" {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
		if err != nil || r.IsError {
			b.Fatalf("%s: %s answered %+v, error %v\nstderr:\n%s", strings.Join(argv, " "), tool, r, err, stderr.String())
		}
	}
	return time.Since(begin)
}

// BenchmarkStartupToFirstCall measures a client's wait from starting the
// server process to the answer of its first tool call, list_sessions,
// after the handshake and tools/list: what the first use of a freshly
// started server costs. With LIBTMUX_MCP_BENCH_PEER as for
// BenchmarkStartupToToolsList and LIBTMUX_MCP_BENCH_PEER_TOOL naming the
// peer's tool that lists sessions (say session_list), each iteration starts
// both, alternating which goes first, on the same tmux server, and it
// reports both medians and their ratio from that one run.
func BenchmarkStartupToFirstCall(b *testing.B) {
	ts := tmuxServer(b)
	env := cleanEnv(b, shortTempDir(b))
	ours := append([]string{build(b).server}, "--socket", ts.Socket)
	peer := benchPeer(ts.Socket)
	peerTool := os.Getenv("LIBTMUX_MCP_BENCH_PEER_TOOL")
	if peer != nil && peerTool == "" {
		b.Fatal("LIBTMUX_MCP_BENCH_PEER_TOOL must name the peer's tool that lists sessions")
	}
	samples := make([]time.Duration, 0, b.N)
	var peerSamples []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if peer != nil && i%2 == 1 {
			keepServing(b, ts)
			peerSamples = append(peerSamples, startupTo(b, env, peer, peerTool))
		}
		keepServing(b, ts)
		samples = append(samples, startupTo(b, env, ours, "list_sessions"))
		if peer != nil && i%2 == 0 {
			keepServing(b, ts)
			peerSamples = append(peerSamples, startupTo(b, env, peer, peerTool))
		}
	}
	reportStartup(b, "start-up to the first answered call", samples, peerSamples, strings.Join(peer, " ")+", "+peerTool)
}
