package mcpserver

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var update = flag.Bool("update", false, "rewrite the golden tool schemas in testdata/tools")

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
// annotations, _meta and schemas with testdata/tools/NAME.json. Run
// `go test ./mcpserver -run TestGoldenSchemas -update` after a reviewed
// change; descriptions are what the model reads.
func TestGoldenSchemas(t *testing.T) {
	for _, tool := range allTools(t) {
		raw, err := json.Marshal(tool)
		if err != nil {
			t.Fatal(err)
		}
		var generic any // keys sorted on re-encoding
		if err := json.Unmarshal(raw, &generic); err != nil {
			t.Fatal(err)
		}
		got, _ := json.MarshalIndent(generic, "", "  ")
		got = append(got, '\n')
		path := filepath.Join("testdata", "tools", tool.Name+".json")
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: no golden file (%v); run with -update and review it", tool.Name, err)
			continue
		}
		if string(want) != string(got) {
			t.Errorf("%s: schema differs from %s; if the change is intended, run `go test ./mcpserver -run TestGoldenSchemas -update` and review the diff\ngot:\n%s", tool.Name, path, got)
		}
	}
}

// TestAnnotationsAreExplicit checks every tool sets all four hints, that
// the hints follow its toolset, and that every output schema is an object.
func TestAnnotationsAreExplicit(t *testing.T) {
	for _, tool := range allTools(t) {
		raw, _ := json.Marshal(tool.Annotations)
		var hints map[string]any
		json.Unmarshal(raw, &hints)
		for _, h := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
			if _, ok := hints[h]; !ok {
				t.Errorf("%s: annotation %s is not set", tool.Name, h)
			}
		}
		if hints["openWorldHint"] != false {
			t.Errorf("%s: openWorldHint = %v; tmux is a closed world", tool.Name, hints["openWorldHint"])
		}
		ts := catalog[tool.Name].spec().toolset
		ro := ts == Inspect
		if hints["readOnlyHint"] != ro || hints["destructiveHint"] == ro && ts != Manage {
			t.Errorf("%s (%s): hints %v do not match the toolset", tool.Name, ts, hints)
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
}
