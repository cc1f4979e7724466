package mcpserver

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The four toolsets. They are unordered capabilities, not trust levels.
const (
	Inspect  = "inspect"
	Manage   = "manage"
	Execute  = "execute"
	Teardown = "teardown"
)

// Toolsets lists every toolset name.
var Toolsets = []string{Execute, Inspect, Manage, Teardown}

// OptIn marks a tool that belongs to no toolset and exists only when named
// with --enable-tool.
const OptIn = ""

// KnownTool reports whether name is a tool of this server.
func KnownTool(name string) bool { return catalog[name] != nil }

// KnownToolset reports whether name is a toolset.
func KnownToolset(name string) bool { return slices.Contains(Toolsets, name) }

// ToolNames lists every tool of this server, sorted.
func ToolNames() []string {
	names := make([]string, 0, len(catalog))
	for n := range catalog {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// BlockingTools names the tools whose calls wait on the world (waits and
// runs) and could outlive their client by minutes, sorted.
func BlockingTools() []string {
	var names []string
	for n, t := range catalog {
		if t.spec().blocks {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// Selection is the frozen tool surface of one server. New keeps its own
// copy, so changing a Selection (or the environment) after New changes
// nothing a client sees.
type Selection struct {
	Toolsets []string // effective toolsets, sorted
	Enabled  []string // named inclusions
	Excluded []string // exclusions
	Tools    []string // the tools that exist, sorted
}

// Has reports whether tool is part of the selection. It is the one gate:
// a tool is listed and callable only when Has accepts it (New serves
// exactly those), and a tool that calls other tools on the agent's behalf
// (call_read_tools_batch) must ask Has for every nested operation, so an
// excluded tool is not reachable through it either.
func (s Selection) Has(tool string) bool { _, ok := slices.BinarySearch(s.Tools, tool); return ok }

// frozen returns a deep copy of s with Tools sorted, for New to keep.
func (s Selection) frozen() Selection {
	return Selection{Toolsets: slices.Clone(s.Toolsets), Enabled: slices.Clone(s.Enabled),
		Excluded: slices.Clone(s.Excluded), Tools: sorted(s.Tools)}
}

// DefaultToolsets is the toolset selection for a server of provenance p:
// all four only for a new server on the shipped minimal configuration.
func DefaultToolsets(p tmux.Provenance) []string {
	if p.Full() {
		return []string{Execute, Inspect, Manage, Teardown}
	}
	return []string{Execute, Inspect, Manage}
}

// withTmuxRun are the tools enabling tmux_run brings along: tmux_run_start (the same opt-in, the
// same panes) and what follows its handles. Without wait_for_run, cancel_run and list_runs (the
// execute toolset's), a server started as the README lends a pane (--toolsets inspect
// --enable-tool tmux_run) started runs it could never follow, collect or stop. They reach no
// pane by themselves: the only handles such a server has are tmux_run_start's. Exclusions still
// take them off.
var withTmuxRun = []string{"tmux_run_start", "wait_for_run", "cancel_run", "list_runs"}

// Select resolves the selection: toolsets (nil for the provenance default),
// then named inclusions, then exclusions. Unknown names are errors.
func Select(p tmux.Provenance, toolsets, enable, exclude []string) (Selection, error) {
	if toolsets == nil {
		toolsets = DefaultToolsets(p)
	}
	for _, ts := range toolsets {
		if !KnownToolset(ts) {
			return Selection{}, fmt.Errorf("unknown toolset %q; the toolsets are %s", ts, strings.Join(Toolsets, ", "))
		}
	}
	for _, list := range [][]string{enable, exclude} {
		for _, name := range list {
			if !KnownTool(name) {
				return Selection{}, fmt.Errorf("unknown tool %q; the tools are %s", name, strings.Join(ToolNames(), ", "))
			}
		}
	}
	on := map[string]bool{}
	for name, t := range catalog {
		if ts := t.spec().toolset; ts != OptIn && slices.Contains(toolsets, ts) {
			on[name] = true
		}
	}
	for _, name := range enable {
		on[name] = true
		if name == "tmux_run" {
			for _, with := range withTmuxRun {
				on[with] = true
			}
		}
	}
	for _, name := range exclude {
		delete(on, name)
	}
	sel := Selection{
		Toolsets: sorted(toolsets),
		Enabled:  sorted(enable),
		Excluded: sorted(exclude),
	}
	for name := range on {
		sel.Tools = append(sel.Tools, name)
	}
	sort.Strings(sel.Tools)
	return sel, nil
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	sort.Strings(out)
	return slices.Compact(out)
}

// hiddenError is the answer to a call of a tool this build has but this
// process did not enable: what turns it on. The tool stays unlisted.
func (s *server) hiddenError(name string) error {
	t := catalog[name]
	ts := t.spec().toolset
	switch {
	case slices.Contains(s.sel.Excluded, name):
		return fmt.Errorf("%s is switched off on this server: it was excluded with --exclude-tool (LIBTMUX_EXCLUDE_TOOLS); whoever runs the server can restart it without that exclusion", name)
	case ts == OptIn:
		return fmt.Errorf("%s is not enabled on this server: it is opt-in, and whoever runs the server turns it on by restarting it with --enable-tool %s; then a person lends a zsh pane by typing eval \"$(libtmux-mcp enroll)\" in it", name, name)
	}
	on := strings.Join(append(slices.Clone(s.sel.Toolsets), ts), ",")
	return fmt.Errorf("%s is not enabled on this server: it is in the %s toolset, which this server was not started with (toolsets: %s); whoever runs the server can restart it with --toolsets %s (or LIBTMUX_TOOLSETS=%s), or add just this tool with --enable-tool %s (LIBTMUX_TOOLS)",
		name, ts, orNone(s.sel.Toolsets), on, on, name)
}

func orNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}

// refuseHidden answers a tools/call of a hidden tool with hiddenError, as
// a tool error the model reads, instead of go-sdk's bare "unknown tool".
// Names that are not tools of this build still get go-sdk's answer.
func (s *server) refuseHidden(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "tools/call" {
			if call, ok := req.(*mcp.CallToolRequest); ok && call.Params != nil && KnownTool(call.Params.Name) && !s.sel.Has(call.Params.Name) {
				res := &mcp.CallToolResult{}
				res.SetError(s.hiddenError(call.Params.Name))
				return res, nil
			}
		}
		return next(ctx, method, req)
	}
}
