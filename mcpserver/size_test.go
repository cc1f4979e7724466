package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/libtmux/libtmux-mcp/tmux"
)

// maxToolsListBytes bounds tools/list with every tool of this build
// enabled, tmux_run included: the whole list is sent into the model's
// context at the start of a session.
const maxToolsListBytes = 43_000

// TestToolsListSize measures tools/list, as a client receives it, with
// every tool of this build on (all four toolsets and tmux_run), as the
// compact JSON of the listed tools. Run with -v for the figures.
func TestToolsListSize(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sel, err := Select(tmux.Provenance{State: tmux.StateNew, Config: tmux.ConfigMinimal}, nil, []string{"tmux_run"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(sel.Toolsets) != len(Toolsets) || len(sel.Tools) != len(catalog) {
		t.Fatalf("toolsets %v, %d tools; want all four and all %d tools", sel.Toolsets, len(sel.Tools), len(catalog))
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
	t.Logf("tools/list with every tool: %d tools, %d bytes, %d bytes per tool on average", n, len(raw), len(raw)/max(n, 1))
	for _, tl := range res.Tools {
		one, _ := json.Marshal(tl)
		t.Logf("  %-24s %5d bytes", tl.Name, len(one))
	}
	// The README states the figure; keep it true.
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("(%d tools, %s bytes today", n, commas(len(raw)))
	if !strings.Contains(string(readme), want) {
		t.Errorf("README does not say %q; update its tools/list figure under ## Tools", want)
	}
	if len(raw) > maxToolsListBytes {
		t.Errorf("tools/list is %d bytes; it must stay at most %d: shorten descriptions and field descriptions, or return fewer result fields", len(raw), maxToolsListBytes)
	}
}

// commas writes n with thousands separators, as the README does.
func commas(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
