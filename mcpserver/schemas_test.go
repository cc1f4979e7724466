package mcpserver

import (
	"context"
	"encoding/json"
	"testing"
)

// TestUnknownArgumentsRefused: the published input schemas leave out
// additionalProperties:false, so the handler must refuse unknown names
// itself, before anything reaches tmux (this server has no tmux at all).
func TestUnknownArgumentsRefused(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cs := connectServer(t, ctx, New(ctx, Deps{Selection: Selection{Toolsets: Toolsets, Tools: ToolNames()}}))
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"list_panes", map[string]any{"windowID": "@1"}, `list_panes has no argument "windowID"; its arguments are sessionId, windowId`},
		{"list_sessions", map[string]any{"all": true}, `list_sessions takes no arguments; remove "all"`},
		{"capture_pane", map[string]any{"paneId": "%1", "lines": 5}, `no argument "lines"`},
	} {
		callErr(t, cs, tc.tool, tc.args, tc.want)
	}
}

// TestSchemaPropertiesAreObjects: the MCP TypeScript SDK refuses a whole
// tools/list when a schema's property is not a JSON object (true, the
// empty schema as jsonschema-go writes it, included), so no client built
// on it could list the tools.
func TestSchemaPropertiesAreObjects(t *testing.T) {
	t.Parallel()
	for _, tool := range allTools(t) {
		for which, schema := range map[string]any{"input": tool.InputSchema, "output": tool.OutputSchema} {
			if schema == nil {
				continue
			}
			raw, err := json.Marshal(schema)
			if err != nil {
				t.Fatal(err)
			}
			var s struct {
				Properties map[string]json.RawMessage `json:"properties"`
			}
			if err := json.Unmarshal(raw, &s); err != nil {
				t.Fatalf("%s %s schema: %v", tool.Name, which, err)
			}
			for name, p := range s.Properties {
				if len(p) == 0 || p[0] != '{' {
					t.Errorf("%s %s schema: property %s is %s, not an object", tool.Name, which, name, p)
				}
			}
		}
	}
}
