package main

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
)

// largeFrames is how many large frames TestHostileFramesLarge sends at
// once on one session, and largeOperations the operations in each: a
// call_read_tools_batch of about 4 MB, under the 4 MiB frame limit,
// refused by count.
const (
	largeFrames     = 4
	largeOperations = 180_000
)

// TestHostileFramesLarge sends four large frames at once on one session
// (four concurrent HTTP requests; four frames back to back on stdio), each
// a batch far over its count limit, and over HTTP four more at the same
// time from four other clients, each on its own session. Every frame must
// be refused with the tool's own text, and memory must settle within 2x
// idle RSS within 10 s. go-sdk keeps the last requests of each session it
// handled referenced, params and all: over HTTP, before these frames were
// answered without go-sdk, the eight kept 17 to 21 MiB.
func TestHostileFramesLarge(t *testing.T) {
	t.Parallel()
	tmuxtest.NeedLoad(t)
	tmuxtest.NotPerRelease(t, "the transports under large frames")
	ops := `{"operations":[` + strings.TrimSuffix(strings.Repeat(`{"tool":"list_panes"},`, largeOperations), ",") + `]}`
	refused := wantToolError(`call_read_tools_batch: \"operations\" has more than 256 items; send at most 256`)
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			sendLarge(t, transport, func(id string) string { return callFrame(id, "call_read_tools_batch", ops) }, refused)
		})
	}
}

// TestHostileFramesLargeAccepted is TestHostileFramesLarge with frames the
// server accepts and answers: pings whose params carry 3.9 MB of _meta. The
// stdio transport drops a call's params once it is answered; over HTTP
// nothing of ours holds the request go-sdk decoded, so after a large
// request the server pings the session itself, which pushes it out of
// go-sdk's handler queue (without that, the eight kept about 32 MB).
func TestHostileFramesLargeAccepted(t *testing.T) {
	t.Parallel()
	tmuxtest.NeedLoad(t)
	tmuxtest.NotPerRelease(t, "the transports under large frames")
	meta := `{"_meta":{"pad":"` + strings.Repeat("x", 3_900_000) + `"}}`
	answered := func(l string) string {
		if !strings.Contains(l, `"result":{}`) {
			return "want the ping's empty result"
		}
		return ""
	}
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			sendLarge(t, transport, func(id string) string {
				return `{"jsonrpc":"2.0","id":` + id + `,"method":"ping","params":` + meta + `}`
			}, answered)
		})
	}
}

// sendLarge sends largeFrames frames made by frameFor at once on one
// session (four concurrent HTTP requests; four frames back to back on
// stdio) and, over HTTP, four more at the same time from four other
// clients, each on its own session. Every answer must pass want ("" when
// it does), and memory must settle within 2x idle RSS within 10 s.
func sendLarge(t *testing.T, transport string, frameFor func(id string) string, want func(string) string) {
	ts, pane, _ := hostileServer(t)
	p := startHostile(t, ts, transport)
	deadline := time.Now().Add(hostileTimeout)
	warmIDs, idle := p.initialize(t, pane, deadline)
	sent := append([]string{`"init"`}, warmIDs...)
	var ids []string
	var sends []func(string)
	for i := range largeFrames {
		ids = append(ids, fmt.Sprintf(`"large-%d"`, i))
		sends = append(sends, p.send)
	}
	if p.openSession != nil {
		for i := range largeFrames {
			ids = append(ids, fmt.Sprintf(`"large-client-%d"`, i))
			initID := fmt.Sprintf(`"init-client-%d"`, i)
			sent = append(sent, initID)
			sends = append(sends, p.openSession(initID))
		}
	}
	var wg sync.WaitGroup
	for i, id := range ids {
		f := frameFor(id)
		wg.Go(func() { sends[i](f) })
	}
	wg.Wait()
	p.ans.await(t, ids, deadline)
	_, peak := rss(t, p.pid)
	settled, took := settleRSS(t, p.pid, idle)
	for _, l := range p.ans.lines(t, ids) {
		if msg := want(l); msg != "" {
			t.Errorf("%s\nanswer: %.400s", msg, l)
		}
	}
	answered := p.ans.check(t, nil, append(sent, ids...)...)
	checkRSS(t, settled, idle)
	t.Logf("%s: %d frames sent (%d of %d bytes at once), %d answers; RSS idle %d KiB, peak %d KiB, settled %d KiB %s after the load",
		transport, p.sentCount(), len(ids), len(frameFor(ids[0])), answered, idle, peak, settled, took)
}
