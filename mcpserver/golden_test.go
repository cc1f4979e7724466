package mcpserver

import (
	"context"
	"encoding/json"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var update = flag.Bool("update", false, "rewrite the golden tool schemas in schemas/")

// allTools lists every tool of the catalog through a client, with every
// tool selected. No tmux server is needed: listing calls no handler.
func allTools(t *testing.T) []*mcp.Tool {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	srv := New(ctx, Deps{Selection: Selection{Toolsets: Toolsets, Tools: ToolNames()}})
	cs := connectServer(t, ctx, srv)
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != len(catalog) {
		t.Fatalf("listed %d tools; the catalog has %d", len(res.Tools), len(catalog))
	}
	return res.Tools
}

// TestGoldenSchemas compares each tool's name, title, description,
// annotations, _meta and schemas with schemas/NAME.json, twice: as
// tools/list shows it (the server publishes the golden file's schemas),
// and as the spec and the tool's types give it by reflection, so a golden
// file cannot drift from the types it stands for. Run
// `go test ./mcpserver -run TestGoldenSchemas -update` after a reviewed
// change: it writes the reflected form; descriptions are what the model
// reads.
func TestGoldenSchemas(t *testing.T) {
	t.Parallel()
	all := Selection{Toolsets: Toolsets, Tools: ToolNames()}
	listed := map[string]*mcp.Tool{}
	if !*update {
		for _, tool := range allTools(t) {
			listed[tool.Name] = tool
		}
	}
	for _, name := range ToolNames() {
		tl := catalog[name]
		want := tl.spec().mcpTool()
		want.InputSchema, want.OutputSchema = tl.schemas()
		if b, ok := tl.(*batchTool); ok {
			want.Meta = b.meta(all)
		}
		path := filepath.Join("schemas", name+".json")
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, goldenJSON(t, want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		golden, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: no golden file (%v); run with -update and review it", name, err)
			continue
		}
		for _, got := range []struct {
			how  string
			tool *mcp.Tool
		}{{"its types and spec give", want}, {"tools/list shows", listed[name]}} {
			if g := goldenJSON(t, got.tool); string(g) != string(golden) {
				t.Errorf("%s: what %s differs from %s; if the change is intended, run `go test ./mcpserver -run TestGoldenSchemas -update` and review the diff\ngot:\n%s", name, got.how, path, g)
			}
		}
	}
}

// goldenJSON is tool as a golden file holds it: indented, keys sorted.
func goldenJSON(t *testing.T, tool *mcp.Tool) []byte {
	t.Helper()
	raw, err := json.Marshal(tool)
	if err != nil {
		t.Fatal(err)
	}
	var generic any // keys sorted on re-encoding
	if err := json.Unmarshal(raw, &generic); err != nil {
		t.Fatal(err)
	}
	got, _ := json.MarshalIndent(generic, "", "  ")
	return append(got, '\n')
}

// TestToolSpecs checks every spec of the catalog (a malformed one fails
// here, not at start), that the list has each name once, and that the
// argument names and required ones argcheck uses are the schema's.
func TestToolSpecs(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, tl := range everyTool() {
		if err := checkSpec(tl); err != nil {
			t.Error(err)
		}
		name := tl.spec().name
		if seen[name] {
			t.Errorf("%s is listed twice in everyTool", name)
		}
		seen[name] = true
		if _, ok := tl.(*rawTool); ok {
			continue
		}
		in, _ := tl.schemas()
		raw, _ := json.Marshal(in)
		var schema struct {
			Properties map[string]any `json:"properties"`
			Required   []string       `json:"required"`
		}
		json.Unmarshal(raw, &schema)
		names := slices.Sorted(maps.Keys(schema.Properties))
		slices.Sort(schema.Required)
		l := tl.args()
		if !slices.Equal(l.Names, names) || !slices.Equal(l.Required, nonNil(schema.Required)) && len(l.Required)+len(schema.Required) > 0 {
			t.Errorf("%s: argcheck knows %v (required %v); the schema has %v (required %v)", name, l.Names, l.Required, names, schema.Required)
		}
		if _, _, ok := goldenSchemas(name); !ok {
			t.Errorf("%s: no embedded golden schema; run `go test ./mcpserver -run TestGoldenSchemas -update`", name)
		}
	}
}

// TestAnnotationsFollowEffects walks every tool and checks all four hints
// against its capability row: only observing is read-only (and
// idempotent), removing or reaching a process (typing, commands, scripts)
// is destructive, anything else is neither; tmux is a closed world.
func TestAnnotationsFollowEffects(t *testing.T) {
	t.Parallel()
	for _, tool := range allTools(t) {
		raw, _ := json.Marshal(tool.Annotations)
		var hints map[string]any
		json.Unmarshal(raw, &hints)
		for _, h := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
			if _, ok := hints[h]; !ok {
				t.Errorf("%s: annotation %s is not set", tool.Name, h)
			}
		}
		row := catalog[tool.Name].spec().capability
		observes := slices.Equal(row.Effects, []Effect{EffectObserve})
		destroys := slices.Contains(row.Effects, EffectDelete) ||
			row.ProcessReach == ReachPaneInput || row.ProcessReach == ReachPaneCommand || row.ProcessReach == ReachEnrolledShell
		want := map[string]any{"readOnlyHint": observes, "destructiveHint": !observes && destroys, "idempotentHint": observes, "openWorldHint": false}
		for h, v := range want {
			if hints[h] != v {
				t.Errorf("%s (effects %v, reach %s): %s = %v; want %v", tool.Name, row.Effects, row.ProcessReach, h, hints[h], v)
			}
		}
		out, _ := json.Marshal(tool.OutputSchema)
		var schema map[string]any
		json.Unmarshal(out, &schema)
		if schema["type"] != "object" {
			t.Errorf("%s: output schema type %v; clients need an object", tool.Name, schema["type"])
		}
		if _, ok := tool.Meta[CapabilityMetaKey]; !ok {
			t.Errorf("%s: no capability row in _meta", tool.Name)
		}
	}
	// The issue that asked for this: waits only observe, and
	// signal_channel changes state without destroying anything.
	for name, ro := range map[string]bool{"wait_for_text": true, "wait_for_channel": true, "capture_since": true, "signal_channel": false} {
		a := catalog[name].spec().mcpTool().Annotations
		if a.ReadOnlyHint != ro || *a.DestructiveHint {
			t.Errorf("%s: readOnlyHint %v, destructiveHint %v; want %v, false", name, a.ReadOnlyHint, *a.DestructiveHint, ro)
		}
	}
}
