package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/libtmux/libtmux-mcp/internal/config"
	"github.com/libtmux/libtmux-mcp/mcpserver"
	"github.com/libtmux/libtmux-mcp/tmux"
)

// TestSelectionFromFlagsAndVariables resolves the tool surface as serve
// does (config.Load, then mcpserver.Select with the server's provenance)
// for each policy flag and variable, alone and together.
func TestSelectionFromFlagsAndVariables(t *testing.T) {
	t.Parallel()
	names := config.Names{Tools: mcpserver.ToolNames(), Toolsets: mcpserver.Toolsets}
	full := tmux.Provenance{State: tmux.StateNew, Config: tmux.ConfigMinimal}
	existing := tmux.Provenance{State: tmux.StateExisting, Config: tmux.ConfigOther}
	of := func(sets ...string) []string {
		sel, err := mcpserver.Select(existing, sets, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return sel.Tools
	}
	with := func(a []string, b ...string) []string {
		out := append(slices.Clone(a), b...)
		slices.Sort(out)
		return slices.Compact(out)
	}
	without := func(a []string, b ...string) []string {
		return slices.DeleteFunc(slices.Clone(a), func(s string) bool { return slices.Contains(b, s) })
	}
	for _, tc := range []struct {
		why     string
		prov    tmux.Provenance
		args    []string
		env     map[string]string
		want    []string
		wantErr string
	}{
		{why: "the default server (new, minimal) gets every toolset", prov: full,
			want: of(mcpserver.Toolsets...)},
		{why: "any other server gets inspect, manage, execute", prov: existing,
			want: of(mcpserver.Inspect, mcpserver.Manage, mcpserver.Execute)},
		{why: "LIBTMUX_TOOLSETS set but empty selects none", prov: full,
			env: map[string]string{"LIBTMUX_TOOLSETS": ""}, want: nil},
		{why: "--toolsets= selects none", prov: full, args: []string{"--toolsets="}, want: nil},
		{why: "LIBTMUX_TOOLSETS picks sets", prov: existing,
			env: map[string]string{"LIBTMUX_TOOLSETS": "inspect,execute"}, want: of(mcpserver.Inspect, mcpserver.Execute)},
		{why: "--toolsets wins over LIBTMUX_TOOLSETS", prov: existing, args: []string{"--toolsets", "inspect"},
			env: map[string]string{"LIBTMUX_TOOLSETS": "execute"}, want: of(mcpserver.Inspect)},
		{why: "LIBTMUX_TOOLS adds to the default", prov: existing,
			env: map[string]string{"LIBTMUX_TOOLS": "tmux_run"}, args: []string{"--enroll-pane", "%1=/tmp/x", "--helper", "/bin/true"},
			want: with(of(mcpserver.Inspect, mcpserver.Manage, mcpserver.Execute), "tmux_run", "tmux_run_start")},
		{why: "the migration of LIBTMUX_MCP_TOOLS=a,b: empty toolsets plus LIBTMUX_TOOLS", prov: full,
			env: map[string]string{"LIBTMUX_TOOLSETS": "", "LIBTMUX_TOOLS": "list_panes,capture_pane"}, want: []string{"capture_pane", "list_panes"}},
		{why: "--enable-tool with --toolsets=", prov: existing, args: []string{"--toolsets=", "--enable-tool", "send_keys"},
			want: []string{"send_keys"}},
		{why: "LIBTMUX_TOOLS set but empty adds nothing", prov: existing, env: map[string]string{"LIBTMUX_TOOLS": ""},
			want: of(mcpserver.Inspect, mcpserver.Manage, mcpserver.Execute)},
		{why: "LIBTMUX_EXCLUDE_TOOLS removes", prov: full, env: map[string]string{"LIBTMUX_EXCLUDE_TOOLS": "send_keys,paste_text"},
			want: without(of(mcpserver.Toolsets...), "send_keys", "paste_text")},
		{why: "--exclude-tool replaces LIBTMUX_EXCLUDE_TOOLS", prov: existing, args: []string{"--exclude-tool", "capture_pane"},
			env:  map[string]string{"LIBTMUX_EXCLUDE_TOOLS": "send_keys"},
			want: without(of(mcpserver.Inspect, mcpserver.Manage, mcpserver.Execute), "capture_pane")},
		{why: "an exclusion wins over an inclusion", prov: existing,
			env:  map[string]string{"LIBTMUX_TOOLSETS": "inspect", "LIBTMUX_TOOLS": "paste_text,send_keys", "LIBTMUX_EXCLUDE_TOOLS": "paste_text"},
			want: with(of(mcpserver.Inspect), "send_keys")},
		{why: "the retired allowlist stops startup with its migration", prov: full,
			env: map[string]string{"LIBTMUX_MCP_TOOLS": "list_panes"}, wantErr: "LIBTMUX_TOOLSETS= (empty) with LIBTMUX_TOOLS"},
		{why: "the retired safety level stops startup with its migration", prov: full,
			env: map[string]string{"LIBTMUX_SAFETY": "mutating"}, wantErr: "LIBTMUX_TOOLSETS=inspect,manage,execute"},
		{why: "an unknown toolset", prov: full, env: map[string]string{"LIBTMUX_TOOLSETS": "inspect,admin"}, wantErr: `"admin"`},
		{why: "an unknown exclusion", prov: full, args: []string{"--exclude-tool", "kill_it"}, wantErr: `"kill_it"`},
	} {
		cfg, err := config.Load(tc.args, func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }, names)
		var sel mcpserver.Selection
		if err == nil {
			sel, err = mcpserver.Select(tc.prov, cfg.Toolsets, cfg.EnableTools, cfg.ExcludeTools)
		}
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: got %v; want an error containing %q", tc.why, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.why, err)
		case !slices.Equal(sel.Tools, tc.want):
			t.Errorf("%s: tools %v; want %v", tc.why, sel.Tools, tc.want)
		}
	}
}
