package integration

import (
	"strings"
	"testing"
	"time"
)

// BenchmarkRunShellCommandTrue measures run_shell_command `true` end to end
// through the MCP client: the protection check, typing the framed line into
// an interactive zsh, the wait-for completion signal and the capture. It
// reports the median and p95, to read beside BenchmarkTmuxRunTrue and
// BenchmarkCaptureBaseline of the same run.
func BenchmarkRunShellCommandTrue(b *testing.B) {
	ts := tmuxServer(b)
	pane := ts.ZshSession("bench")
	p := start(b, cleanEnv(b, ts.Dir), "--socket", ts.Socket)
	args := map[string]any{"paneId": pane, "command": "true"}
	samples := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		begin := time.Now()
		res := p.call("run_shell_command", args)
		samples = append(samples, time.Since(begin))
		if text := resultText(res); res.IsError || !strings.Contains(text, `"exitStatus":0`) {
			b.Fatalf("run %d: %s", i, text)
		}
		if i%20 == 19 {
			b.StopTimer()
			ts.Run("clear-history", "-t", pane) // keep the capture small
			b.StartTimer()
		}
	}
	reportLatency(b, samples)
}

// BenchmarkRunShellCommandSeq2000 reports the characters of the answer to
// `seq 1 2000` (8,893 bytes of output): the text content the model reads.
func BenchmarkRunShellCommandSeq2000(b *testing.B) {
	ts := tmuxServer(b)
	pane := ts.ZshSession("bench")
	p := start(b, cleanEnv(b, ts.Dir), "--socket", ts.Socket)
	args := map[string]any{"paneId": pane, "command": "seq 1 2000"}
	samples := make([]time.Duration, 0, b.N)
	chars := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		begin := time.Now()
		res := p.call("run_shell_command", args)
		samples = append(samples, time.Since(begin))
		text := resultText(res)
		if res.IsError || !strings.Contains(text, `"2000"`) {
			b.Fatalf("run %d: %s", i, text)
		}
		chars = len([]rune(text))
	}
	reportLatency(b, samples)
	b.ReportMetric(float64(chars), "answer-chars")
}
