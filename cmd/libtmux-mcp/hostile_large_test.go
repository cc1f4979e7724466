package main

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
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
	if testing.Short() {
		t.Skip("hostile frames; skipped with -short")
	}
	ops := `{"operations":[` + strings.TrimSuffix(strings.Repeat(`{"tool":"list_panes"},`, largeOperations), ",") + `]}`
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
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
				f := callFrame(id, "call_read_tools_batch", ops)
				wg.Go(func() { sends[i](f) })
			}
			wg.Wait()
			p.ans.await(t, ids, deadline)
			_, peak := rss(t, p.pid)
			settled, took := settleRSS(t, p.pid, idle)
			want := wantToolError(`call_read_tools_batch: \"operations\" has more than 256 items; send at most 256`)
			for _, l := range p.ans.lines(t, ids) {
				if msg := want(l); msg != "" {
					t.Errorf("%s\nanswer: %.400s", msg, l)
				}
			}
			answered := p.ans.check(t, nil, append(sent, ids...)...)
			checkRSS(t, settled, idle)
			t.Logf("%s: %d frames sent (%d of %d bytes at once), %d answers; RSS idle %d KiB, peak %d KiB, settled %d KiB %s after the load",
				transport, p.sentCount(), len(ids), len(callFrame(ids[0], "call_read_tools_batch", ops)), answered, idle, peak, settled, took)
		})
	}
}
