package mcpserver

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/libtmux/libtmux-mcp/tmux"
)

// maxToolsListBytes bounds tools/list with every toolset enabled: the
// whole list is sent into the model's context at the start of a session.
const maxToolsListBytes = 40_000

// TestToolsListSize measures tools/list, as a client receives it, with all
// four toolsets on (tmux_run is in none, so it is not counted), as the
// compact JSON of the listed tools. Run with -v for the figures.
func TestToolsListSize(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sel, err := Select(tmux.Provenance{State: tmux.StateNew, Config: tmux.ConfigMinimal}, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(sel.Toolsets) != len(Toolsets) {
		t.Fatalf("toolsets %v; want all four", sel.Toolsets)
	}
	cs := connectServer(t, ctx, New(ctx, Deps{Selection: sel}))
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(res.Tools)
	if err != nil {
		t.Fatal(err)
	}
	n := len(res.Tools)
	t.Logf("tools/list with every toolset: %d tools, %d bytes, %d bytes per tool on average", n, len(raw), len(raw)/max(n, 1))
	for _, tl := range res.Tools {
		one, _ := json.Marshal(tl)
		t.Logf("  %-24s %5d bytes", tl.Name, len(one))
	}
	if len(raw) >= maxToolsListBytes {
		t.Errorf("tools/list is %d bytes; it must stay under %d: shorten descriptions and field descriptions, or return fewer result fields", len(raw), maxToolsListBytes)
	}
}
