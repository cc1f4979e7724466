package mcpserver

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connect serves cfg (pointed at ts) over in-memory transports and returns
// a connected client session, closed in t.Cleanup.
func connect(t *testing.T, ts *tmuxtest.Server, cfg Config) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cfg.Route = tmux.Route{SocketPath: ts.Socket}
	if cfg.Notice == nil {
		cfg.Notice = io.Discard
	}
	srv, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
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
