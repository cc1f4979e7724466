package mcpserver

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolsOf lists the catalog's tools of the given toolsets.
func toolsOf(sets ...string) []string {
	var out []string
	for _, name := range ToolNames() {
		if slices.Contains(sets, catalog[name].spec().toolset) {
			out = append(out, name)
		}
	}
	return out
}

func TestSelect(t *testing.T) {
	t.Parallel()
	full := tmux.Provenance{State: tmux.StateNew, Config: tmux.ConfigMinimal}
	newOther := tmux.Provenance{State: tmux.StateNew, Config: tmux.ConfigOther}
	existing := tmux.Provenance{State: tmux.StateExisting, Config: tmux.ConfigOther}
	for _, tc := range []struct {
		why                       string
		prov                      tmux.Provenance
		toolsets, enable, exclude []string
		wantSets, wantTools       []string
		wantErr                   string
	}{
		{why: "a new server on the minimal config gets all four toolsets, tmux_run not among them",
			prov: full, wantSets: []string{Execute, Inspect, Manage, Teardown}, wantTools: toolsOf(Execute, Inspect, Manage, Teardown)},
		{why: "a new server on another config gets no teardown",
			prov: newOther, wantSets: []string{Execute, Inspect, Manage}, wantTools: toolsOf(Execute, Inspect, Manage)},
		{why: "an existing server gets no teardown",
			prov: existing, wantSets: []string{Execute, Inspect, Manage}, wantTools: toolsOf(Execute, Inspect, Manage)},
		{why: "explicit toolsets replace the default, even for a full server",
			prov: full, toolsets: []string{Inspect}, wantSets: []string{Inspect}, wantTools: toolsOf(Inspect)},
		{why: "explicit toolsets may add teardown to an existing server",
			prov: existing, toolsets: []string{Teardown, Inspect}, wantSets: []string{Inspect, Teardown}, wantTools: toolsOf(Inspect, Teardown)},
		{why: "an explicitly empty list selects no toolset",
			prov: full, toolsets: []string{}, wantSets: []string{}, wantTools: nil},
		{why: "empty toolsets plus inclusions is exactly those tools",
			prov: existing, toolsets: []string{}, enable: []string{"list_panes", "capture_pane"},
			wantSets: []string{}, wantTools: []string{"capture_pane", "list_panes"}},
		{why: "inclusions add to the toolsets",
			prov: existing, toolsets: []string{Inspect}, enable: []string{"send_keys"},
			wantSets: []string{Inspect}, wantTools: plus(toolsOf(Inspect), "send_keys")},
		{why: "tmux_run exists only when named, and brings tmux_run_start",
			prov: existing, enable: []string{"tmux_run"},
			wantSets: []string{Execute, Inspect, Manage}, wantTools: plus(toolsOf(Execute, Inspect, Manage), "tmux_run", "tmux_run_start")},
		{why: "with inspect only, tmux_run brings what follows tmux_run_start's handles",
			prov: existing, toolsets: []string{Inspect}, enable: []string{"tmux_run"},
			wantSets: []string{Inspect}, wantTools: plus(toolsOf(Inspect), "cancel_run", "list_runs", "tmux_run", "tmux_run_start", "wait_for_run")},
		{why: "tmux_run's company may be excluded one by one",
			prov: existing, toolsets: []string{Inspect}, enable: []string{"tmux_run"}, exclude: []string{"cancel_run"},
			wantSets: []string{Inspect}, wantTools: plus(toolsOf(Inspect), "list_runs", "tmux_run", "tmux_run_start", "wait_for_run")},
		{why: "tmux_run_start may be excluded from tmux_run's company",
			prov: existing, enable: []string{"tmux_run"}, exclude: []string{"tmux_run_start"},
			wantSets: []string{Execute, Inspect, Manage}, wantTools: plus(toolsOf(Execute, Inspect, Manage), "tmux_run")},
		{why: "exclusions remove from the toolsets",
			prov: existing, exclude: []string{"send_keys", "capture_pane"},
			wantSets: []string{Execute, Inspect, Manage}, wantTools: minus(toolsOf(Execute, Inspect, Manage), "send_keys", "capture_pane")},
		{why: "an exclusion wins over an inclusion of the same tool",
			prov: existing, toolsets: []string{}, enable: []string{"paste_text", "list_panes"}, exclude: []string{"paste_text"},
			wantSets: []string{}, wantTools: []string{"list_panes"}},
		{why: "excluding a tool outside the selection is harmless",
			prov: existing, toolsets: []string{Inspect}, exclude: []string{"send_keys"},
			wantSets: []string{Inspect}, wantTools: toolsOf(Inspect)},
		{why: "duplicates collapse", prov: existing, toolsets: []string{Inspect, Inspect}, enable: []string{"send_keys", "send_keys"},
			wantSets: []string{Inspect}, wantTools: plus(toolsOf(Inspect), "send_keys")},
		{why: "an unknown toolset", prov: existing, toolsets: []string{"admin"}, wantErr: `unknown toolset "admin"`},
		{why: "an unknown inclusion", prov: existing, enable: []string{"rm_rf"}, wantErr: `unknown tool "rm_rf"`},
		{why: "an unknown exclusion", prov: existing, exclude: []string{"kill_everything"}, wantErr: `unknown tool "kill_everything"`},
	} {
		sel, err := Select(tc.prov, tc.toolsets, tc.enable, tc.exclude)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: got %v; want an error containing %q", tc.why, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.why, err)
			continue
		}
		if !slices.Equal(nonNil(sel.Toolsets), tc.wantSets) || !slices.Equal(sel.Tools, tc.wantTools) {
			t.Errorf("%s: toolsets %v, tools %v; want %v, %v", tc.why, sel.Toolsets, sel.Tools, tc.wantSets, tc.wantTools)
		}
		for _, name := range ToolNames() {
			if sel.Has(name) != slices.Contains(tc.wantTools, name) {
				t.Errorf("%s: Has(%s) = %v", tc.why, name, sel.Has(name))
			}
		}
	}
}

// TestHiddenToolsAreNeitherListedNorCallable calls excluded tools and
// tools outside the selection through a client, and changes the
// Selection after New to show the surface is frozen.
func TestHiddenToolsAreNeitherListedNorCallable(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := catPane(ts, "h")
	sel, err := Select(tmux.Provenance{}, []string{Inspect}, []string{"send_keys"}, []string{"capture_pane"})
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, ts, Deps{Selection: sel})
	// Changing the caller's Selection after New changes nothing.
	sel.Tools[slices.Index(sel.Tools, "send_keys")] = "paste_text"
	sel.Tools = append(sel.Tools, "send_keys_batch")

	listed := listedNames(t, cs)
	if want := plus(minus(toolsOf(Inspect), "capture_pane"), "send_keys"); !slices.Equal(listed, want) {
		t.Errorf("tools/list = %v; want %v", listed, want)
	}
	for _, name := range []string{"capture_pane", "paste_text", "send_keys_batch", "tmux_run"} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"paneId": pane, "text": "x"}})
		if err == nil && !res.IsError {
			raw, _ := json.Marshal(res)
			t.Errorf("tools/call %s (not selected) answered %s; want an error", name, raw)
		}
	}
	call(t, cs, "send_keys", map[string]any{"paneId": pane, "text": "x"}, nil)
	doc, _ := readCapabilities(t, cs)
	if !slices.Equal(doc.Tools, listed) {
		t.Errorf("tmux://capabilities tools %v; tools/list %v", doc.Tools, listed)
	}
}

func plus(a []string, b ...string) []string { return sorted(append(slices.Clone(a), b...)) }

func minus(a []string, b ...string) []string {
	return slices.DeleteFunc(slices.Clone(a), func(s string) bool { return slices.Contains(b, s) })
}

// TestBlockingTools: the calls stdin EOF cancels at once are exactly the
// waits and the runs; every other call read before EOF gets its answer.
func TestBlockingTools(t *testing.T) {
	t.Parallel()
	want := []string{"cancel_run", "capture_since", "run_shell_command", "tmux_run", "wait_for_channel", "wait_for_run", "wait_for_text"}
	if got := BlockingTools(); !slices.Equal(got, want) {
		t.Errorf("BlockingTools() = %v; want %v", got, want)
	}
}
