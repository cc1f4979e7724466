package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

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

// call calls a tool that must succeed and decodes its structured answer
// into out (when not nil). A tool error fails the test here, naming the
// tool, its arguments and the error text: a test built on call cannot pass
// over a refusal it did not expect.
func call(t testing.TB, cs *mcp.ClientSession, name string, args any, out any) {
	t.Helper()
	toolErr, err := callTool(cs, name, args, out)
	if err != nil {
		t.Fatal(err)
	}
	if toolErr != "" {
		t.Fatalf("%s %s: unexpected tool error: %s", name, argsText(args), toolErr)
	}
}

// callErr calls a tool that must answer a tool error whose text contains
// want (a code or a part of the message), and returns that text. Success,
// or an error saying something else, fails the test here.
func callErr(t testing.TB, cs *mcp.ClientSession, name string, args any, want string) string {
	t.Helper()
	toolErr, err := callTool(cs, name, args, nil)
	switch {
	case err != nil:
		t.Fatal(err)
	case toolErr == "":
		t.Fatalf("%s %s succeeded; want a tool error containing %q", name, argsText(args), want)
	case !strings.Contains(toolErr, want):
		t.Fatalf("%s %s: tool error %q; want it to contain %q", name, argsText(args), toolErr, want)
	}
	return toolErr
}

// reply is the outcome of a call made on a goroutine of its own (a wait
// or a run the test interrupts), for the test goroutine to check: t.Fatal
// belongs to the test goroutine.
type reply[T any] struct {
	name, args string
	out        T
	toolErr    string
	err        error
}

// callAsync starts a call that must succeed on a goroutine of its own and
// delivers its reply once, on the returned channel; receive checks it.
func callAsync[T any](cs *mcp.ClientSession, name string, args any) <-chan reply[T] {
	done := make(chan reply[T], 1)
	go func() {
		r := reply[T]{name: name, args: argsText(args)}
		r.toolErr, r.err = callTool(cs, name, args, &r.out)
		done <- r
	}()
	return done
}

// receive is call's check for callAsync, on the test goroutine: the
// decoded answer, or the test fails on a protocol or tool error, or when
// no reply arrives within timeout.
func receive[T any](t testing.TB, ch <-chan reply[T], timeout time.Duration) T {
	t.Helper()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatal(r.err)
		}
		if r.toolErr != "" {
			t.Fatalf("%s %s: unexpected tool error: %s", r.name, r.args, r.toolErr)
		}
		return r.out
	case <-time.After(timeout):
		t.Fatalf("no reply within %s", timeout)
		var zero T
		return zero
	}
}

// callTool calls a tool and decodes its structured answer into out. It
// returns a tool error's text, and an error for what no tool should do: a
// protocol error, a tool error carrying structuredContent (tmux_run's
// contract excepted), an answer out cannot hold, or a text copy that
// differs from structuredContent. It never touches a testing.T, so a
// goroutine may use it (callAsync).
func callTool(cs *mcp.ClientSession, name string, args any, out any) (toolErr string, err error) {
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", fmt.Errorf("%s %s: protocol error: %v", name, argsText(args), err)
	}
	text := ""
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	if res.IsError {
		if res.StructuredContent != nil && name != "tmux_run" {
			return text, fmt.Errorf("%s %s: tool error carries structuredContent: %s", name, argsText(args), text)
		}
		if text == "" {
			text = "(a tool error without text)"
		}
		return text, nil
	}
	if out != nil {
		raw, _ := json.Marshal(res.StructuredContent)
		// Decode into a zero value: a field this answer leaves out must not
		// keep what an earlier call into the same variable put there.
		if v := reflect.ValueOf(out); v.Kind() == reflect.Pointer && !v.IsNil() {
			v.Elem().SetZero()
		}
		if err := json.Unmarshal(raw, out); err != nil {
			return "", fmt.Errorf("%s %s: decode %s: %v", name, argsText(args), raw, err)
		}
		// The text copy is the same JSON, unescaped.
		if strings.TrimSpace(text) != string(raw) && !jsonEqual(text, string(raw)) {
			return "", fmt.Errorf("%s %s: text copy %s differs from structuredContent %s", name, argsText(args), text, raw)
		}
	}
	return "", nil
}

// argsText renders a call's arguments for a failure message.
func argsText(args any) string {
	b, err := json.Marshal(args)
	if err != nil {
		return fmt.Sprint(args)
	}
	return string(b)
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

// connectWithProgress is connect for a client that hands every progress notification to
// onProgress; the session and its server end with the test.
func connectWithProgress(t *testing.T, ts *tmuxtest.Server, onProgress func(*mcp.ProgressNotificationParams)) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	client := mcp.NewClient(&mcp.Implementation{Name: "progress", Version: "0"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) { onProgress(req.Params) },
	})
	st, ct := mcp.NewInMemoryTransports()
	go New(ctx, withServer(t, ts, Deps{})).Run(ctx, st)
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}
