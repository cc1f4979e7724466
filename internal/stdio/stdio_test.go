package stdio

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/frame"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// deadline bounds every wait in these tests; nothing here should come near it.
const deadline = 30 * time.Second

// session is an mcp.Server served over a Transport whose stdin and stdout
// are pipes the test writes and reads.
type session struct {
	t       *testing.T
	in      *io.PipeWriter
	lines   chan string
	done    chan error    // Server.Run's result
	started chan struct{} // a blocking tool started
}

type noArgs struct{}

type echoArgs struct {
	Text string `json:"text"`
}

type echoOut struct {
	Text string `json:"text"`
}

func serve(t *testing.T, tr *Transport) *session {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "stdio-test", Version: "0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, echoOut, error) {
		return nil, echoOut{Text: in.Text}, nil
	})
	started := make(chan struct{}, 10)
	block := func(ctx context.Context, _ *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, echoOut, error) {
		started <- struct{}{}
		<-ctx.Done()
		return nil, echoOut{Text: "cancelled"}, nil
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "wait"}, block)
	mcp.AddTool(srv, &mcp.Tool{Name: "slow"}, block)

	if tr.Screen != nil {
		tr.Screen.Server = srv // made here
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	tr.In, tr.Out = inR, outW
	s := &session{t: t, in: inW, lines: make(chan string, 100), done: make(chan error, 1), started: started}
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
	}()
	go func() {
		err := srv.Run(context.Background(), tr)
		outW.Close()
		s.done <- err
	}()
	t.Cleanup(func() { inW.Close() })
	return s
}

// waitStarted waits until a blocking tool runs.
func (s *session) waitStarted() {
	s.t.Helper()
	select {
	case <-s.started:
	case <-time.After(deadline):
		s.t.Fatal("the blocking tool did not start")
	}
}

func (s *session) send(frames ...string) {
	s.t.Helper()
	for _, f := range frames {
		if _, err := io.WriteString(s.in, f+"\n"); err != nil {
			s.t.Fatalf("write %s: %v", f, err)
		}
	}
}

// next reads the next line from stdout, which must be a JSON-RPC message.
func (s *session) next() map[string]any {
	s.t.Helper()
	return s.parse(s.nextLine())
}

// nextLine reads the next line from stdout.
func (s *session) nextLine() string {
	s.t.Helper()
	select {
	case l, ok := <-s.lines:
		if !ok {
			s.t.Fatal("stdout closed; want another message")
		}
		return l
	case <-time.After(deadline):
		s.t.Fatal("no message on stdout before the deadline")
	}
	return ""
}

// parse decodes a line that must be a JSON-RPC message.
func (s *session) parse(l string) map[string]any {
	s.t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(l), &m); err != nil || m["jsonrpc"] != "2.0" {
		s.t.Fatalf("stdout line is not JSON-RPC: %q", l)
	}
	return m
}

// rawID is the id token of a JSON-RPC line, as written.
func rawID(line string) string {
	var m map[string]json.RawMessage
	json.Unmarshal([]byte(line), &m)
	return string(m["id"])
}

// end waits for stdout to close and the server to return.
func (s *session) end() {
	s.t.Helper()
	for {
		select {
		case l, ok := <-s.lines:
			if !ok {
				select {
				case <-s.done:
					return
				case <-time.After(deadline):
					s.t.Fatal("Server.Run did not return")
				}
			}
			s.t.Errorf("unexpected line after the last answer: %s", l)
		case <-time.After(deadline):
			s.t.Fatal("stdout did not close")
		}
	}
}

const (
	initialize  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
	initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

func (s *session) handshake() {
	s.t.Helper()
	s.send(initialize)
	if m := s.next(); m["result"] == nil {
		s.t.Fatalf("initialize answered %v", m)
	}
	s.send(initialized)
}

func call(id any, tool string, args string) string {
	raw, _ := json.Marshal(id)
	return `{"jsonrpc":"2.0","id":` + string(raw) + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
}

func errorCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

// TestRefusedFrames sends frames that are not valid JSON-RPC requests: each
// gets the JSON-RPC error for it, and the session keeps serving.
func TestRefusedFrames(t *testing.T) {
	s := serve(t, &Transport{})
	s.handshake()
	cases := []struct {
		why, frame string
		code       float64
		id         any // the id the answer echoes
	}{
		{"not JSON", `{"jsonrpc":"2.0","id":7,"method":`, jsonrpc.CodeParseError, nil},
		{"not JSON at all", `hello`, jsonrpc.CodeParseError, nil},
		{"a batch", `[` + call(8, "echo", `{"text":"x"}`) + `]`, jsonrpc.CodeInvalidRequest, nil},
		{"an empty batch", `[]`, jsonrpc.CodeInvalidRequest, nil},
		{"not an object", `42`, jsonrpc.CodeInvalidRequest, nil},
		{"an object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, jsonrpc.CodeInvalidRequest, nil},
		{"a boolean id", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, jsonrpc.CodeInvalidRequest, nil},
		{"a null id on a request", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, jsonrpc.CodeInvalidRequest, nil},
		{"an id over int64, echoed exactly", `{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}`, jsonrpc.CodeInvalidRequest, 1.2345678901234568e+29},
		{"an id over 2^53, which go-sdk would round", `{"jsonrpc":"2.0","id":9223372036854775807,"method":"ping"}`, jsonrpc.CodeInvalidRequest, 9.223372036854776e+18},
		{"a fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, jsonrpc.CodeInvalidRequest, 1.5},
		{"no version: the valid id is echoed", `{"id":9,"method":"ping"}`, jsonrpc.CodeInvalidRequest, float64(9)},
		{"version 1.0: the valid id is echoed", `{"jsonrpc":"1.0","id":"v1","method":"ping"}`, jsonrpc.CodeInvalidRequest, "v1"},
		{"a numeric method: the valid id is echoed", `{"jsonrpc":"2.0","id":10,"method":5}`, jsonrpc.CodeInvalidRequest, float64(10)},
		{"a lone surrogate in a string id, echoed exactly", `{"jsonrpc":"2.0","id":"a\ud800b","method":"ping"}`, jsonrpc.CodeInvalidRequest, "a\ufffdb"},
		{"a lone low surrogate", `{"jsonrpc":"2.0","id":"\udc00","method":"ping"}`, jsonrpc.CodeInvalidRequest, "\ufffd"},
		{"a string id that is not UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":\"a\xffb\",\"method\":\"ping\"}", jsonrpc.CodeInvalidRequest, nil},
	}
	for i, c := range cases {
		s.send(c.frame)
		line := s.nextLine()
		m := s.parse(line)
		if raw := rawID(line); c.id != nil && !strings.Contains(c.frame, `"id":`+raw+`,`) {
			t.Errorf("%s: id echoed as %s; want it exactly as sent in %s", c.why, raw, c.frame)
		}
		if got := errorCode(m); got != c.code {
			t.Errorf("%s: %s answered %v; want error code %v", c.why, c.frame, m, c.code)
		}
		if m["id"] != c.id {
			t.Errorf("%s: answer id %v; want %v", c.why, m["id"], c.id)
		}
		// The next well-formed request is served.
		id := 100 + i
		s.send(call(id, "echo", `{"text":"<&>"}`))
		m = s.next()
		if m["id"] != float64(id) || !strings.Contains(mustJSON(m["result"]), "<&>") {
			t.Errorf("after %s: echo answered %v", c.why, m)
		}
	}
	s.in.Close()
	s.end()
}

// TestLongFrame answers a frame over MaxFrame with its own id, found
// without reading the frame whole, and serves the next.
func TestLongFrame(t *testing.T) {
	s := serve(t, &Transport{MaxFrame: 1024})
	s.handshake()
	long := `{"text":"` + strings.Repeat("x", 5000) + `"}`
	cases := []struct {
		why, frame string
		id         any
	}{
		{"the id first", call(2, "echo", long), float64(2)},
		// The TypeScript SDK writes the id last, after the params.
		{"the id after the params", `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","arguments":` + long + `},"id":"late"}`, "late"},
		{"no id at all", `{"jsonrpc":"2.0","method":"notifications/x","params":` + long + `}`, nil},
	}
	for i, c := range cases {
		s.send(c.frame)
		m := s.next()
		if errorCode(m) != jsonrpc.CodeInvalidRequest || !strings.Contains(mustJSON(m), "1024 bytes") {
			t.Errorf("%s: a long frame answered %v; want -32600 naming the limit", c.why, m)
		}
		if m["id"] != c.id {
			t.Errorf("%s: the refusal's id is %v; want %v", c.why, m["id"], c.id)
		}
		id := 10 + i
		s.send(call(id, "echo", `{"text":"short"}`))
		if m := s.next(); m["id"] != float64(id) || m["error"] != nil {
			t.Errorf("after a long frame (%s): %v", c.why, m)
		}
	}
	s.in.Close()
	s.end()
}

// TestEOFAnswersWhatWasRead writes a whole session and closes stdin at
// once: every request read before EOF is answered, then the session ends.
func TestEOFAnswersWhatWasRead(t *testing.T) {
	s := serve(t, &Transport{})
	s.send(initialize, initialized, call(2, "echo", `{"text":"one"}`), call(3, "echo", `{"text":"two"}`))
	s.in.Close()
	got := map[float64]bool{}
	for range 3 {
		m := s.next()
		if m["error"] != nil {
			t.Errorf("answer with an error: %v", m)
		}
		got[m["id"].(float64)] = true
	}
	for _, id := range []float64{1, 2, 3} {
		if !got[id] {
			t.Errorf("no answer to request %v", id)
		}
	}
	s.end()
}

// TestEOFCancelsWaits closes stdin while two calls block: the one marked
// urgent is cancelled at once, the other once the grace ends; both answers
// are written before the session ends.
func TestEOFCancelsWaits(t *testing.T) {
	s := serve(t, &Transport{
		CancelAtEOF: CancelTools("wait"),
		Grace:       time.Hour, // only CancelAtEOF can end the wait in time
		Drain:       time.Hour,
	})
	s.handshake()
	s.send(call("w", "wait", `{}`))
	s.waitStarted()
	s.in.Close()
	m := s.next()
	if m["id"] != "w" || !strings.Contains(mustJSON(m["result"]), "cancelled") {
		t.Errorf("the wait answered %v; want its cancelled answer", m)
	}
	s.end()

	s = serve(t, &Transport{Grace: time.Millisecond, Drain: time.Hour})
	s.handshake()
	s.send(call("s", "slow", `{}`))
	s.waitStarted()
	s.in.Close()
	if m := s.next(); m["id"] != "s" || !strings.Contains(mustJSON(m["result"]), "cancelled") {
		t.Errorf("the slow call answered %v; want its cancelled answer after the grace", m)
	}
	s.end()
}

// TestEOFDrainBound ends the session after Drain even when a call never
// answers.
func TestEOFDrainBound(t *testing.T) {
	s := serve(t, &Transport{Grace: time.Hour, Drain: time.Millisecond})
	s.handshake()
	s.send(call("s", "slow", `{}`))
	// The call is read (it is in flight) once a ping after it is answered.
	s.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	if m := s.next(); m["id"] != "p" {
		t.Fatalf("ping answered %v", m)
	}
	s.in.Close()
	s.end()
}

// mustJSON encodes v without HTML escaping, for substring checks.
func mustJSON(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return b.String()
}

// TestClientCancelNeedsNoAnswer: a call the client cancels is owed no
// answer. None is written (the ping after it is the next line), stdin EOF
// does not wait for it (Grace and Drain are an hour), and AwaitAnswers
// returns at once.
func TestClientCancelNeedsNoAnswer(t *testing.T) {
	tr := &Transport{Grace: time.Hour, Drain: time.Hour}
	s := serve(t, tr)
	s.handshake()
	s.send(call("w", "wait", `{}`))
	s.waitStarted()
	s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"w","reason":"test"}}`)
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	if err := tr.AwaitAnswers(ctx); err != nil {
		t.Errorf("AwaitAnswers after the client cancelled its only call: %v", err)
	}
	s.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	if m := s.next(); m["id"] != "p" {
		t.Errorf("after the cancellation, the next line is %v; want the ping's answer (a cancelled call gets none)", m)
	}
	s.in.Close()
	s.end()
}

// TestAwaitAnswers returns once the call in flight is answered, and not
// before.
func TestAwaitAnswers(t *testing.T) {
	tr := &Transport{}
	s := serve(t, tr)
	s.handshake()
	s.send(call("w", "wait", `{}`))
	s.waitStarted()
	short, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := tr.AwaitAnswers(short); err == nil {
		t.Error("AwaitAnswers returned nil with a call in flight")
	}
	// The server cancels it itself (as serve does at shutdown, through its handlers' context).
	s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"other"}}`)
	s.in.Close() // EOF cancels nothing urgent; the grace (2 s) then cancels the wait
	ctx, cancel2 := context.WithTimeout(context.Background(), deadline)
	defer cancel2()
	done := make(chan error, 1)
	go func() { done <- tr.AwaitAnswers(ctx) }()
	if m := s.next(); m["id"] != "w" {
		t.Errorf("the wait answered %v", m)
	}
	if err := <-done; err != nil {
		t.Errorf("AwaitAnswers after the answer: %v", err)
	}
	s.end()
}

// TestUnencodableAnswer: resources/read of a URI with a control character
// makes go-sdk build error data with Go's %q, which is not JSON. The call
// gets an internal error with its id, logged once, and the session goes on.
func TestUnencodableAnswer(t *testing.T) {
	var log strings.Builder
	s := serve(t, &Transport{Logger: slog.New(slog.NewTextHandler(&lockedWriter{w: &log}, nil))})
	s.handshake()
	for i, uri := range []string{`\u0000`, `\u0001`, `\u0007`, `\u001f`, `\u007f`} {
		id := 50 + i
		s.send(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"resources/read","params":{"uri":"` + uri + `"}}`)
		if m := s.next(); m["id"] != float64(id) || errorCode(m) != jsonrpc.CodeInternalError {
			t.Errorf("resources/read %s answered %v; want an internal error for id %d", uri, m, id)
		}
	}
	s.send(call(60, "echo", `{"text":"still here"}`))
	if m := s.next(); m["id"] != float64(60) || m["error"] != nil {
		t.Errorf("after the unencodable answers: %v", m)
	}
	s.in.Close()
	s.end()
	if n := strings.Count(log.String(), "could not be encoded"); n != 5 {
		t.Errorf("logged %d times for 5 unencodable answers; want once each:\n%s", n, log.String())
	}
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestScreenedCalls: a call the screen refuses is answered with its tool
// error without reaching go-sdk (the echo tool would have answered); a
// call whose id is still in flight is left to go-sdk.
func TestScreenedCalls(t *testing.T) {
	s := serve(t, &Transport{Screen: &frame.Screen{Refuse: func(tool string, args json.RawMessage) string {
		if strings.Contains(string(args), "big") {
			return tool + ": too big"
		}
		return ""
	}}})
	s.handshake()
	s.send(call(2, "wait", `{}`))
	s.waitStarted()
	s.send(call(3, "echo", `{"text":"big"}`))
	want := `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"echo: too big"}],"isError":true}}`
	if got := s.nextLine(); got != want {
		t.Errorf("a refused call answered\n%s\nwant\n%s", got, want)
	}
	// A call whose id is in flight is refused with id null (see
	// TestDuplicateIDInFlight), never screened: id 2 must not be answered
	// twice.
	s.send(call(2, "echo", `{"text":"big"}`), `{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	if got := s.nextLine(); rawID(got) != "null" || !strings.Contains(got, "already in use") {
		t.Errorf("a call reusing the id in flight answered %s; want the null-id refusal", got)
	}
	if got := s.nextLine(); rawID(got) != `"p"` {
		t.Errorf("after the refusal, got %s; want the ping's answer", got)
	}
}

// TestDuplicateIDInFlight: a call reusing the id of a call still in flight
// is refused at once with id null (go-sdk would drop it unanswered, and an
// answer carrying the id would be taken for the first call's); the first
// call still answers, and stdin EOF waits for nothing else.
func TestDuplicateIDInFlight(t *testing.T) {
	tr := &Transport{CancelAtEOF: CancelTools("wait"), Grace: time.Hour, Drain: time.Hour}
	s := serve(t, tr)
	s.handshake()
	s.send(call("w", "wait", `{}`))
	s.waitStarted()
	s.send(call("w", "echo", `{"text":"again"}`))
	m := s.next()
	if m["id"] != nil || errorCode(m) != float64(jsonrpc.CodeInvalidRequest) || !strings.Contains(mustJSON(m), `already in use`) {
		t.Fatalf("the duplicate answered %v; want -32600 with id null naming the id in use", m)
	}
	s.in.Close() // cancels the wait, the one call owed an answer
	if m := s.next(); m["id"] != "w" || !strings.Contains(mustJSON(m["result"]), "cancelled") {
		t.Errorf("the first call answered %v; want its cancelled answer", m)
	}
	s.end()
}
