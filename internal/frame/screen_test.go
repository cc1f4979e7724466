package frame

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// screenRefusing is a Screen whose check refuses any arguments holding
// "big".
func screenRefusing(srv *mcp.Server) *Screen {
	return &Screen{Server: srv, Refuse: func(tool string, args json.RawMessage) string {
		if strings.Contains(string(args), "big") {
			return tool + `: "items" is too "big"`
		}
		return ""
	}}
}

func call(t *testing.T, frame string) *jsonrpc.Request {
	t.Helper()
	msg, ref := Decode([]byte(frame))
	if ref != nil {
		t.Fatalf("Decode(%s): %s", frame, ref.Message)
	}
	return msg.(*jsonrpc.Request)
}

// TestScreen: a tools/call the check refuses is answered with the tool
// error, once its session is initialized; everything else is go-sdk's.
func TestScreen(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "screen-test", Version: "0"}, nil)
	s := screenRefusing(srv)
	refused := call(t, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"hello","arguments":{"items":"big"}}}`)

	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Answer(ss.ID(), refused); got != nil {
		t.Errorf("before initialize: %s; want it left to go-sdk (which refuses calls before initialization)", got)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	want := `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hello: \"items\" is too \"big\""}],"isError":true}}`
	for _, c := range []struct{ why, frame string }{
		{"a refused call", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"hello","arguments":{"items":"big"}}}`},
		{"a refused call with a progress token", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"_meta":{"progressToken":1},"name":"hello","arguments":{"items":"big"}}}`},
		// go-sdk matches the members of params by exact name: "Name" is not
		// the tool's name, whatever encoding/json would take it for.
		{"a refused call with a member Name", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"hello","arguments":{"items":"big"},"Name":"ghost"}}`},
	} {
		if got := string(s.Answer(ss.ID(), call(t, c.frame))); got != want {
			t.Errorf("%s answered\n%s\nwant\n%s", c.why, got, want)
		}
	}
	if got := s.Answer("no-such-session", refused); got != nil {
		t.Errorf("a call on no live session: %s; want it left to go-sdk", got)
	}
	for _, c := range []struct{ why, frame string }{
		{"arguments the check lets through", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"hello","arguments":{"items":"small"}}}`},
		{"another method", `{"jsonrpc":"2.0","id":9,"method":"prompts/get","params":{"name":"big"}}`},
		{"a notification", `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"hello","arguments":{"items":"big"}}}`},
		{"params that are not an object", `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":["big"]}`},
		{"arguments the check lets through, and a member ARGUMENTS it would refuse", `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"hello","arguments":{"items":"small"},"ARGUMENTS":{"items":"big"}}}`},
		// go-sdk answers these by the per-request protocol (SEP-2575) or
		// refuses their params, without asking the tool.
		{"a _meta naming a protocol version", `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"},"name":"hello","arguments":{"items":"big"}}}`},
		{"a _meta that is not an object", `{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"_meta":5,"name":"hello","arguments":{"items":"big"}}}`},
	} {
		if got := s.Answer(ss.ID(), call(t, c.frame)); got != nil {
			t.Errorf("%s: answered %s; want it left to go-sdk", c.why, got)
		}
	}
	var none *Screen
	if got := none.Answer(ss.ID(), refused); got != nil {
		t.Errorf("a nil Screen answered %s", got)
	}
}
