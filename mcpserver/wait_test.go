package mcpserver

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestEffectiveTimeout(t *testing.T) {
	t.Parallel()
	s := &server{deps: Deps{Limits: Limits{WaitMax: 30 * time.Second}}}
	ms := func(v int64) *int64 { return &v }
	for _, c := range []struct {
		in   *int64
		want time.Duration
	}{
		{nil, 30 * time.Second},             // omitted: the ceiling
		{ms(0), 30 * time.Second},           // not positive: the ceiling
		{ms(1500), 1500 * time.Millisecond}, // within: as asked
		{ms(120000), 30 * time.Second},      // over: clamped
		{ms(1 << 62), 30 * time.Second},     // overflowing: clamped
		{ms(30000), 30 * time.Second},       // the ceiling itself
	} {
		if got := s.effectiveTimeout(c.in); got != c.want {
			t.Errorf("effectiveTimeout(%v) = %s; want %s", c.in, got, c.want)
		}
	}
}

// TestWaitProgress: a client that sends a progress token gets progress
// notifications while a wait blocks.
func TestWaitProgress(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	ts.NewSession("s")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var got []*mcp.ProgressNotificationParams
	cs := connectWithProgress(t, ts, func(p *mcp.ProgressNotificationParams) {
		mu.Lock()
		got = append(got, p)
		mu.Unlock()
	})
	params := &mcp.CallToolParams{Name: "wait_for_channel", Arguments: map[string]any{"channel": "slow", "timeoutMs": 4500}}
	params.SetProgressToken("tok-1")
	res, err := cs.CallTool(ctx, params)
	if err != nil || res.IsError {
		t.Fatalf("wait_for_channel: %v %v", err, res)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) < 1 || got[0].ProgressToken != "tok-1" || !strings.Contains(got[0].Message, "wait_for_channel") || got[0].Total != 4500 {
		t.Errorf("progress notifications %+v; want at least one for tok-1 with total 4500", got)
	}
}
