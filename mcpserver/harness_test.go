package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connect serves d (pointed at ts) over in-memory transports and returns
// a connected client session, closed in t.Cleanup.
func connect(t *testing.T, ts *tmuxtest.Server, d Deps) *mcp.ClientSession {
	cs, _ := serve(t, ts, d)
	return cs
}

// serve is connect that also returns the tmux client the server uses. It
// fills what d leaves out as cmd/libtmux-mcp would: a client on ts, the
// startup facts and the provenance's default selection.
func serve(t *testing.T, ts *tmuxtest.Server, d Deps) (*mcp.ClientSession, *tmux.Client) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if d.Tmux == nil {
		c, err := tmux.NewClient(tmux.Route{SocketPath: ts.Socket}, 0)
		if err != nil {
			t.Fatal(err)
		}
		d.Tmux = c
	}
	st, err := d.Tmux.Ensure(ctx, tmux.Want{})
	if err != nil {
		t.Fatal(err)
	}
	d.Startup = st
	if d.Selection.Tools == nil {
		if d.Selection, err = Select(st.Provenance, nil, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	return connectServer(t, ctx, New(ctx, d)), d.Tmux
}

// connectServer connects a client to srv over in-memory transports.
func connectServer(t *testing.T, ctx context.Context, srv *mcp.Server) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	go srv.Run(ctx, st)
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil)
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool and decodes its structured answer into out. It fails
// the test on a tool error unless wantErr, and returns the error text.
func call(t *testing.T, cs *mcp.ClientSession, name string, args any, out any) (errText string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	text := ""
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	if res.IsError {
		if res.StructuredContent != nil && name != "tmux_run" {
			t.Errorf("%s: tool error carries structuredContent", name)
		}
		return text
	}
	if out != nil {
		raw, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s: decode %s: %v", name, raw, err)
		}
		// The text copy is the same JSON, unescaped.
		if strings.TrimSpace(text) != string(raw) && !jsonEqual(text, string(raw)) {
			t.Errorf("%s: text copy %s differs from structuredContent %s", name, text, raw)
		}
	}
	return ""
}

func jsonEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return string(ja) == string(jb)
}
