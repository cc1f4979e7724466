package integration

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkCaptureSinceNothingNew measures capture_since with a cursor when nothing new
// arrived: the latency of the call and the bytes of the answer's text, the cost of one poll
// of a quiet pane.
//
//	go test -run '^$' -bench 'CaptureSinceNothingNew' -benchtime 20x ./integration/
func BenchmarkCaptureSinceNothingNew(b *testing.B) {
	ts := tmuxServer(b)
	pane := ts.ZshSession("bench")
	ts.Type(pane, "seq 1 30", true)
	ts.WaitFor(pane, func(s string) bool { return strings.Contains(s, "\n30\n") })
	p := start(b, cleanEnv(b, ts.Dir), "--socket", ts.Socket)
	obj, _ := p.answer("capture_since", map[string]any{"paneId": pane})
	args := map[string]any{"paneId": pane, "cursor": obj["cursor"]}
	samples := make([]time.Duration, 0, b.N)
	size := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		begin := time.Now()
		res := p.call("capture_since", args)
		samples = append(samples, time.Since(begin))
		text := resultText(res)
		if res.IsError || !strings.Contains(text, `"lines":[]`) && strings.Contains(text, `"lines":[`) {
			b.Fatalf("call %d: something new, or an error: %s", i, text)
		}
		size = len(text)
		if i == 0 {
			b.Logf("answer: %s", text)
		}
	}
	b.StopTimer()
	reportLatency(b, samples)
	b.ReportMetric(float64(size), "answer-bytes")
}

// BenchmarkTmuxRunRSS1000 runs tmux_run `true` 1,000 times in one enrolled pane, then reports
// the resident set size of the server process and of the pane's resident helper, in KiB.
//
//	go test -run '^$' -bench 'TmuxRunRSS1000' -benchtime 1x ./integration/
func BenchmarkTmuxRunRSS1000(b *testing.B) {
	e := enrollPane(b)
	args := map[string]any{"script": "true"}
	// At least 1,000 runs, and b.N when more is asked for, so that one
	// `-bench . -benchtime 200x` run prints this figure too.
	b.ResetTimer()
	for j := 0; j < max(b.N, 1000); j++ {
		if obj := e.run(b, context.Background(), args); obj["ok"] != true {
			b.Fatalf("run %d: %v", j, obj)
		}
	}
	b.StopTimer()
	b.ReportMetric(rssOf(b, strconv.Itoa(e.p.cmd.Process.Pid)), "server-rss-KiB")
	b.ReportMetric(helperRSS(b, e), "helper-rss-KiB")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkEightEnrolledPanes enrolls eight zsh panes with one server and runs tmux_run `true`
// in all eight at once per iteration; it reports the median and p95 of one such wave (the
// time until the last of the eight answers).
//
//	go test -run '^$' -bench 'EightEnrolledPanes' -benchtime 20x ./integration/
func BenchmarkEightEnrolledPanes(b *testing.B) {
	const n = 8
	bins := build(b)
	ts := tmuxServer(b)
	panes := make([]string, n)
	files := make([]string, n)
	args := []string{"--socket", ts.Socket, "--enable-tool", "tmux_run", "--helper", bins.helper}
	for i := range panes {
		panes[i] = ts.ZshSession(fmt.Sprintf("run%d", i))
		files[i] = filepath.Join(ts.Dir, fmt.Sprintf("enroll%d.zsh", i))
		args = append(args, "--enroll-pane", panes[i]+"="+files[i])
	}
	p := start(b, cleanEnv(b, shortTempDir(b), "LIBTMUX_MCP_SHELL_ANSWER_MS=4000", "LIBTMUX_MCP_LOG=info"), args...)
	p.startupLine()
	for _, f := range files {
		if _, ok := p.stderr.line("source "+f, 30*time.Second); !ok {
			b.Fatalf("no invitation for %s on stderr:\n%s", f, p.stderr)
		}
	}
	for i := range panes {
		ts.Type(panes[i], "source "+files[i], true)
	}
	if !p.stderr.waitCount("tmux_run pane enrolled", n, 60*time.Second) {
		b.Fatalf("not all %d panes enrolled; server stderr:\n%s", n, p.stderr)
	}
	targets := make([]map[string]any, n)
	for i, pane := range panes {
		obj, _ := p.answer("get_pane_info", map[string]any{"paneId": pane})
		info := obj["pane"].(map[string]any)
		if info["enrollment"] != "enrolled" {
			b.Fatalf("pane %s: enrollment %v", pane, info["enrollment"])
		}
		targets[i] = map[string]any{"kind": "pane", "id": pane, "generation": info["serverGeneration"]}
	}
	wave := func() {
		var wg sync.WaitGroup
		errs := make([]string, n)
		for i := range targets {
			wg.Go(func() {
				// Not p.call: a benchmark fails only from its own goroutine.
				res, err := p.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "tmux_run",
					Arguments: map[string]any{"target": targets[i], "script": "true"}})
				if err != nil {
					errs[i] = err.Error()
				} else if res.IsError {
					errs[i] = resultText(res)
				}
			})
		}
		wg.Wait()
		for i, e := range errs {
			if e != "" {
				b.Fatalf("pane %s: %s", panes[i], e)
			}
		}
	}
	wave() // starts the resident helpers
	samples := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		begin := time.Now()
		wave()
		samples = append(samples, time.Since(begin))
	}
	reportLatency(b, samples)
}

// BenchmarkWaitForTextShown measures wait_for_text for text the pane already shows (answered
// at once, already:true), the call an agent makes to check that a server says "listening": its
// latency. TestWaitForTextCursorCarriesOn checks that such a wait starts no tmux process.
//
//	go test -run '^$' -bench 'WaitForTextShown' -benchtime 200x ./integration/
func BenchmarkWaitForTextShown(b *testing.B) {
	ts := tmuxServer(b)
	pane := ts.ZshSession("bench")
	ts.Type(pane, "echo listening-on-$((8000+80))", true)
	ts.WaitFor(pane, func(s string) bool { return strings.Contains(s, "\nlistening-on-8080") })
	p := start(b, cleanEnv(b, ts.Dir), "--socket", ts.Socket)
	args := map[string]any{"paneId": pane, "pattern": "listening-on-8080"}
	if obj, text := p.answer("wait_for_text", args); obj["already"] != true {
		b.Fatalf("first wait: %s", text)
	}
	samples := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		begin := time.Now()
		res := p.call("wait_for_text", args)
		samples = append(samples, time.Since(begin))
		if text := resultText(res); res.IsError || !strings.Contains(text, `"already":true`) {
			b.Fatalf("call %d: %s", i, text)
		}
	}
	b.StopTimer()
	reportLatency(b, samples)
}
