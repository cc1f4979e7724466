package integration

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCapabilitiesOverStdio starts the binary with a narrowed surface and
// reads tmux://capabilities: it reports what tools/list offers, the socket
// as selected, its provenance and the boundary; an excluded tool is not
// callable.
func TestCapabilitiesOverStdio(t *testing.T) {
	t.Parallel()
	ts := tmuxServer(t)
	f := ampSession(t, ts)
	env := append(cleanEnv(t, ts.Dir), "LIBTMUX_TOOLSETS=manage") // the flag wins
	p := start(t, env, "--socket", ts.Socket, "--toolsets", "inspect", "--enable-tool", "send_keys", "--exclude-tool", "capture_pane")
	ctx := context.Background()

	res, err := p.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "tmux://capabilities"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Contents) != 1 || res.Contents[0].MIMEType != "application/json" {
		t.Fatalf("tmux://capabilities contents: %+v", res.Contents)
	}
	var doc struct {
		SchemaVersion int      `json:"schemaVersion"`
		Frozen        bool     `json:"frozen"`
		Toolsets      []string `json:"toolsets"`
		Tools         []string `json:"tools"`
		Socket        struct {
			Selector, Value, Path string
			Provenance            tmux.Provenance
		} `json:"socket"`
		Boundary struct {
			HostCommandExecution string `json:"hostCommandExecution"`
		} `json:"boundary"`
	}
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &doc); err != nil {
		t.Fatal(err)
	}
	listed := p.listTools()
	slices.Sort(listed)
	if !slices.Equal(doc.Tools, listed) || slices.Contains(listed, "capture_pane") || !slices.Contains(listed, "send_keys") {
		t.Errorf("capabilities tools %v; tools/list %v; want the same, with send_keys and without capture_pane", doc.Tools, listed)
	}
	if doc.SchemaVersion != 1 || !doc.Frozen || !slices.Equal(doc.Toolsets, []string{"inspect"}) {
		t.Errorf("schemaVersion %d, frozen %v, toolsets %v", doc.SchemaVersion, doc.Frozen, doc.Toolsets)
	}
	if doc.Socket.Selector != "path" || doc.Socket.Value != ts.Socket || !tmux.SamePath(doc.Socket.Path, ts.Socket) ||
		doc.Socket.Provenance != (tmux.Provenance{State: tmux.StateExisting, Config: tmux.ConfigOther}) {
		t.Errorf("socket record %+v; want path %s, existing/other", doc.Socket, ts.Socket)
	}
	if doc.Boundary.HostCommandExecution != "absent" {
		t.Errorf("boundary %+v; want host-command execution absent", doc.Boundary)
	}
	if r, err := p.cs.CallTool(ctx, &mcp.CallToolParams{Name: "capture_pane", Arguments: map[string]any{"paneId": f.paneID}}); err != nil || !r.IsError {
		t.Errorf("an excluded tool answered: %v %v", r, err)
	} else if !strings.Contains(resultText(r), "excluded with --exclude-tool") {
		t.Errorf("an excluded tool's refusal %q does not say what turns it on", resultText(r))
	}
}
