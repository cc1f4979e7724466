package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCapabilityRowValues checks every registered tool's capability row,
// as tools/list shows it, against the documented values (the constants of
// capabilities.go, each named in the README), and that its input
// literalization names only arguments its input schema has.
func TestCapabilityRowValues(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for _, v := range reaches {
		documented = append(documented, string(v))
	}
	for _, v := range effects {
		documented = append(documented, string(v))
	}
	for _, v := range outputs {
		documented = append(documented, string(v))
	}
	for _, v := range literalizations {
		documented = append(documented, string(v))
	}
	for _, v := range documented {
		if !strings.Contains(string(readme), "`"+v+"`") {
			t.Errorf("README does not document the capability value `%s`", v)
		}
	}
	for _, tool := range allTools(t) {
		raw, _ := json.Marshal(tool.Meta[CapabilityMetaKey])
		var row Capability
		if err := json.Unmarshal(raw, &row); err != nil {
			t.Errorf("%s: capability row %s: %v", tool.Name, raw, err)
			continue
		}
		if !slices.Contains(reaches, row.ProcessReach) {
			t.Errorf("%s: processReach %q; want one of %q", tool.Name, row.ProcessReach, reaches)
		}
		if len(row.Effects) == 0 || len(row.Outputs) == 0 {
			t.Errorf("%s: effects %q, outputs %q: neither may be empty", tool.Name, row.Effects, row.Outputs)
		}
		for _, v := range row.Effects {
			if !slices.Contains(effects, v) {
				t.Errorf("%s: effects has %q; want values from %q", tool.Name, v, effects)
			}
		}
		for _, v := range row.Outputs {
			if !slices.Contains(outputs, v) {
				t.Errorf("%s: outputs has %q; want values from %q", tool.Name, v, outputs)
			}
		}
		args := schemaProperties(t, tool.InputSchema)
		for arg, how := range row.InputLiteralization {
			if !args[arg] {
				t.Errorf("%s: inputLiteralization names %q, which is not an argument (%v)", tool.Name, arg, args)
			}
			if !slices.Contains(literalizations, how) {
				t.Errorf("%s: inputLiteralization[%q] = %q; want one of %q", tool.Name, arg, how, literalizations)
			}
		}
	}
}

// schemaProperties collects every property name of a JSON schema, nested
// objects and array items included.
func schemaProperties(t *testing.T, schema any) map[string]bool {
	t.Helper()
	raw, _ := json.Marshal(schema)
	var s any
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if props, ok := v["properties"].(map[string]any); ok {
				for name, sub := range props {
					names[name] = true
					walk(sub)
				}
			}
			for _, k := range []string{"items", "oneOf", "anyOf", "allOf"} {
				walk(v[k])
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(s)
	return names
}

// TestInputCapabilityRows pins the rows of the input tools.
func TestInputCapabilityRows(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"send_keys", "send_keys_batch", "paste_text"} {
		row := catalog[name].spec().capability
		if row.ProcessReach != ReachPaneInput || !slices.Equal(row.Effects, []Effect{EffectChange}) ||
			!slices.Equal(row.Outputs, []Output{OutputTmuxMetadata}) || row.InputLiteralization["text"] == "" {
			t.Errorf("%s: row %+v", name, row)
		}
	}
}

// readCapabilities reads tmux://capabilities through a client, checking
// that it is the one listed resource.
func readCapabilities(t *testing.T, cs *mcp.ClientSession) (capabilitiesDoc, map[string]any) {
	t.Helper()
	ctx := context.Background()
	list, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Resources) != 1 || list.Resources[0].URI != CapabilitiesURI || list.Resources[0].MIMEType != "application/json" {
		raw, _ := json.Marshal(list.Resources)
		t.Fatalf("resources/list = %s; want tmux://capabilities alone, application/json", raw)
	}
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: CapabilitiesURI})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Contents) != 1 || res.Contents[0].MIMEType != "application/json" {
		t.Fatalf("resources/read gave %d contents", len(res.Contents))
	}
	var doc capabilitiesDoc
	var generic map[string]any
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &doc); err != nil {
		t.Fatal(err)
	}
	json.Unmarshal([]byte(res.Contents[0].Text), &generic)
	return doc, generic
}

func listedNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	sort.Strings(names)
	return names
}

func TestCapabilitiesResource(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	ts.NewSession("a", "sh")
	sel, err := Select(tmux.Provenance{State: tmux.StateExisting, Config: tmux.ConfigOther},
		[]string{Inspect, Execute}, nil, []string{"capture_pane"})
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, ts, Deps{Selection: sel})
	doc, generic := readCapabilities(t, cs)
	for _, field := range []string{"schemaVersion", "frozen", "toolsets", "tools", "socket", "boundary"} {
		if _, ok := generic[field]; !ok {
			t.Errorf("tmux://capabilities has no %q", field)
		}
	}
	if doc.SchemaVersion != capabilitiesSchemaVersion || !doc.Frozen {
		t.Errorf("schemaVersion %d, frozen %v", doc.SchemaVersion, doc.Frozen)
	}
	if diff := cmp.Diff(listedNames(t, cs), doc.Tools); diff != "" {
		t.Errorf("tools differ from tools/list (-listed +resource):\n%s", diff)
	}
	if !slices.Equal(doc.Toolsets, []string{Execute, Inspect}) || !slices.Equal(doc.Excluded, []string{"capture_pane"}) || slices.Contains(doc.Tools, "capture_pane") {
		t.Errorf("toolsets %v, excluded %v, tools %v", doc.Toolsets, doc.Excluded, doc.Tools)
	}
	for _, name := range doc.Tools {
		if got := doc.Capabilities[name]; got.ProcessReach != catalog[name].spec().capability.ProcessReach {
			t.Errorf("capabilities[%s] = %+v", name, got)
		}
	}
	want := socketRecord{Selector: "path", Value: ts.Socket, Path: ts.Socket, Provenance: tmux.Provenance{State: tmux.StateExisting, Config: tmux.ConfigOther}}
	if !tmux.SamePath(doc.Socket.Path, ts.Socket) {
		t.Errorf("socket path %q; want %q", doc.Socket.Path, ts.Socket)
	}
	doc.Socket.Path = ts.Socket
	if diff := cmp.Diff(want, doc.Socket); diff != "" {
		t.Errorf("socket record (-want +got):\n%s", diff)
	}
	if doc.Boundary.HostCommandExecution != "absent" || doc.Boundary.Resources != "static" || doc.Boundary.SocketSelection != "process-wide" ||
		doc.Boundary.Posture != PostureTmuxRunOff {
		t.Errorf("boundary %+v; want host-command execution absent", doc.Boundary)
	}

	// With tmux_run, the boundary says enrolled panes run authored scripts. The tools that
	// follow tmux_run_start's handles come with it; cancel_run then reaches only the enrolled
	// shells' scripts (it has no run_shell_command run to send C-c for).
	sel, err = Select(tmux.Provenance{}, []string{}, []string{"tmux_run"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	doc, _ = readCapabilities(t, connect(t, ts, Deps{Selection: sel}))
	if doc.Boundary.HostCommandExecution != "enrolled-panes" || !strings.Contains(doc.Boundary.Note, "enrolled") ||
		!slices.Equal(doc.Tools, []string{"cancel_run", "list_runs", "tmux_run", "tmux_run_start", "wait_for_run"}) ||
		doc.Capabilities["tmux_run"].ProcessReach != "enrolled-shell" ||
		doc.Capabilities["tmux_run_start"].ProcessReach != "enrolled-shell" ||
		doc.Capabilities["cancel_run"].ProcessReach != "enrolled-shell" ||
		doc.Boundary.Posture != PostureNoInputTools {
		t.Errorf("with tmux_run: tools %v, cancel_run %+v, boundary %+v", doc.Tools, doc.Capabilities["cancel_run"], doc.Boundary)
	}
	// With run_shell_command too, cancel_run's row is its own: C-c into a pane.
	sel, err = Select(tmux.Provenance{}, []string{Execute}, []string{"tmux_run"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := sel.capability("cancel_run").ProcessReach; got != ReachPaneInput {
		t.Errorf("cancel_run beside run_shell_command reaches %q; want %q", got, ReachPaneInput)
	}
	// The posture says which side of the boundary the process is on (issue 17): inspect only
	// with tmux_run is no-input-tools; any tool that types or runs commands makes it
	// same-user-commands, and the note names the strong posture.
	for _, c := range []struct {
		toolsets []string
		want     string
	}{
		{[]string{Inspect}, PostureNoInputTools},
		{[]string{Inspect, Manage}, PostureNoInputTools},
		{[]string{Inspect, Execute}, PostureSameUserCommands},
	} {
		sel, err := Select(tmux.Provenance{}, c.toolsets, []string{"tmux_run"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := sel.Posture(); got != c.want {
			t.Errorf("toolsets %v with tmux_run: posture %q; want %q", c.toolsets, got, c.want)
		}
	}
	sel, err = Select(tmux.Provenance{}, []string{Inspect, Execute}, []string{"tmux_run"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	doc, _ = readCapabilities(t, connect(t, ts, Deps{Selection: sel}))
	if doc.Boundary.Posture != PostureSameUserCommands || !strings.Contains(doc.Boundary.Note, "--toolsets inspect --enable-tool tmux_run") {
		t.Errorf("with execute and tmux_run: boundary %+v", doc.Boundary)
	}
}

func TestSocketSelectorByName(t *testing.T) {
	t.Parallel()
	srv := &server{tmux: mustClient(t, tmux.Route{SocketName: "agent"})}
	if got := srv.capabilities().Socket; got.Selector != "name" || got.Value != "agent" {
		t.Errorf("socket record for --socket-name agent: %+v", got)
	}
	srv = &server{tmux: mustClient(t, tmux.Route{})}
	if got := srv.capabilities().Socket; got.Selector != "default" || got.Value != tmux.DefaultSocketName {
		t.Errorf("socket record with no selector: %+v", got)
	}
}

func mustClient(t *testing.T, r tmux.Route) *tmux.Client {
	t.Helper()
	c, err := tmux.NewClient(r, 0)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
