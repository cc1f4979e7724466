package httpserve

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/frame"
	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const testToken = "frames-test-token"

// served is a server with a "hello" tool and a "wait" tool that blocks
// until its handler's context ends, and the handler context serve stops.
type served struct {
	url     string
	srv     *mcp.Server
	started chan struct{}
	stop    context.CancelFunc // ends Serve, as SIGTERM does
	done    chan error
}

func serveWith(t *testing.T, opt Options) *served {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "frames-test", Version: "0"}, nil)
	type out struct {
		Text string `json:"text"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "hello"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, out, error) {
		return nil, out{"hi"}, nil
	})
	life, stopHandlers := context.WithCancel(context.Background())
	t.Cleanup(stopHandlers)
	s := &served{srv: srv, started: make(chan struct{}, 10), done: make(chan error, 1)}
	mcp.AddTool(srv, &mcp.Tool{Name: "wait"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, out, error) {
		s.started <- struct{}{}
		select {
		case <-ctx.Done():
		case <-life.Done():
		}
		return nil, out{"cancelled"}, nil
	})
	// cmd/libtmux-mcp installs the same middleware.
	srv.AddReceivingMiddleware(frame.EncodableErrors(slog.New(slog.DiscardHandler)))
	ln, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	opt.StopHandlers = stopHandlers
	if opt.Screen != nil {
		opt.Screen.Server = srv // made here
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.stop = cancel
	go func() { s.done <- Serve(ctx, ln, testToken, srv, opt) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.done:
		case <-time.After(30 * time.Second):
			t.Error("Serve did not return after its context ended")
		}
	})
	s.url = "http://" + ln.Addr().String() + Path
	return s
}

// answer is one HTTP exchange: status, JSON-RPC answer (from a JSON body or
// the first SSE data line) and the session header.
type answer struct {
	status  int
	msg     map[string]any
	raw     string
	session string
}

func (s *served) post(t *testing.T, session, body string) answer {
	t.Helper()
	return s.postEdited(t, session, body, nil)
}

// postEdited is post with the request changed by edit (if not nil) before
// it is sent.
func (s *served) postEdited(t *testing.T, session, body string, edit func(*http.Request)) answer {
	t.Helper()
	a, err := s.send(session, body, edit)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// send is postEdited for any goroutine: it returns its error.
func (s *served) send(session, body string, edit func(*http.Request)) (answer, error) {
	req, err := http.NewRequest("POST", s.url, strings.NewReader(body))
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+testToken)
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	if edit != nil {
		edit(req)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	a := answer{status: resp.StatusCode, session: resp.Header.Get("Mcp-Session-Id")}
	data, _ := io.ReadAll(resp.Body)
	a.raw = string(data)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(strings.NewReader(a.raw))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				a.raw = d
				break
			}
		}
	}
	json.Unmarshal([]byte(a.raw), &a.msg)
	return a, nil
}

func (s *served) initialize(t *testing.T) string {
	t.Helper()
	a := s.post(t, "", initialize)
	if a.status != http.StatusOK || a.session == "" {
		t.Fatalf("initialize: %d %s", a.status, a.raw)
	}
	if b := s.post(t, a.session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); b.status != http.StatusAccepted {
		t.Fatalf("initialized: %d %s", b.status, b.raw)
	}
	return a.session
}

func code(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

// rawIDOf is the id token of a JSON-RPC answer, as written.
func rawIDOf(raw string) string {
	var m map[string]json.RawMessage
	json.Unmarshal([]byte(raw), &m)
	return string(m["id"])
}

// TestFramesAnswerAsStdio sends the frames stdio refuses over HTTP: each
// gets the same JSON-RPC error, with the id echoed exactly or refused, and
// the session keeps serving.
func TestFramesAnswerAsStdio(t *testing.T) {
	s := serveWith(t, Options{Limits: Limits{MaxFrame: 8192}})
	sess := s.initialize(t)
	for _, c := range []struct {
		why, frame string
		code       int64
		id         string // raw id in the answer
	}{
		{"a fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, jsonrpc.CodeInvalidRequest, `1.5`},
		{"an id over 2^53", `{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, jsonrpc.CodeInvalidRequest, `9007199254740993`},
		{"an id of 2^63", `{"jsonrpc":"2.0","id":9223372036854775808,"method":"ping"}`, jsonrpc.CodeInvalidRequest, `9223372036854775808`},
		{"a lone surrogate", `{"jsonrpc":"2.0","id":"\ud800","method":"ping"}`, jsonrpc.CodeInvalidRequest, `"\ud800"`},
		{"no version", `{"id":5,"method":"ping"}`, jsonrpc.CodeInvalidRequest, `5`},
		{"an unknown method", `{"jsonrpc":"2.0","id":6,"method":"tools/destroy","params":{}}`, jsonrpc.CodeMethodNotFound, `6`},
		{"a notification with an id", `{"jsonrpc":"2.0","id":7,"method":"notifications/initialized"}`, jsonrpc.CodeInvalidRequest, `7`},
		{"missing params", `{"jsonrpc":"2.0","id":8,"method":"tools/call"}`, jsonrpc.CodeInvalidRequest, `8`},
		{"not JSON", `{"jsonrpc":`, jsonrpc.CodeParseError, `null`},
		{"a batch", `[{"jsonrpc":"2.0","id":9,"method":"ping"}]`, jsonrpc.CodeInvalidRequest, `null`},
		{"over the frame limit", `{"jsonrpc":"2.0","id":10,"method":"ping","params":{"x":"` + strings.Repeat("x", 9000) + `"}}`, jsonrpc.CodeInvalidRequest, `10`},
		{"over the frame limit, the id last", `{"jsonrpc":"2.0","method":"ping","params":{"x":"` + strings.Repeat("x", 9000) + `"},"id":"last"}`, jsonrpc.CodeInvalidRequest, `"last"`},
		{"over the frame limit, no id", `{"jsonrpc":"2.0","method":"ping","params":{"x":"` + strings.Repeat("x", 9000) + `"}}`, jsonrpc.CodeInvalidRequest, `null`},
	} {
		a := s.post(t, sess, c.frame)
		if int64(code(a.msg)) != c.code || rawIDOf(a.raw) != c.id || a.status < 400 {
			t.Errorf("%s: HTTP %d %s; want a 4xx with code %d and id %s", c.why, a.status, a.raw, c.code, c.id)
		}
		if a := s.post(t, sess, `{"jsonrpc":"2.0","id":"p","method":"ping"}`); a.status != http.StatusOK || a.msg["id"] != "p" {
			t.Errorf("after %s: ping answered %d %s", c.why, a.status, a.raw)
		}
	}
}

// TestUnencodableErrorKeepsTheSession: resources/read of a URI with a
// control character answers an internal error for its id, and the session
// keeps serving (it used to answer an empty 200 from then on).
func TestUnencodableErrorKeepsTheSession(t *testing.T) {
	s := serveWith(t, Options{})
	sess := s.initialize(t)
	for i, uri := range []string{`\u0000`, `\u0001`, `\u007f`} {
		id := strconv.Itoa(i + 1)
		a := s.post(t, sess, `{"jsonrpc":"2.0","id":`+id+`,"method":"resources/read","params":{"uri":"`+uri+`"}}`)
		if rawIDOf(a.raw) != id || int64(code(a.msg)) != jsonrpc.CodeInternalError {
			t.Errorf("resources/read %s answered %d %q; want an internal error for id %s", uri, a.status, a.raw, id)
		}
		if a := s.post(t, sess, `{"jsonrpc":"2.0","id":"p","method":"ping"}`); a.status != http.StatusOK || a.msg["id"] != "p" {
			t.Errorf("after resources/read %s: ping answered %d %q", uri, a.status, a.raw)
		}
	}
}

// TestSessionCap: at most MaxSessions live; a DELETE makes room.
func TestSessionCap(t *testing.T) {
	s := serveWith(t, Options{Limits: Limits{MaxSessions: 2}})
	first := s.initialize(t)
	s.initialize(t)
	a := s.post(t, "", initialize)
	if a.status != http.StatusServiceUnavailable || !strings.Contains(a.raw, "LIBTMUX_MCP_HTTP_MAX_SESSIONS") || rawIDOf(a.raw) != "1" {
		t.Errorf("a third session: %d %s; want 503 naming the cap, id 1", a.status, a.raw)
	}
	req, _ := http.NewRequest("DELETE", s.url, nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Mcp-Session-Id", first)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %v %v", resp, err)
	}
	s.initialize(t)
}

// TestIdleSessionsReclaimed: a session without requests for SessionIdle is
// closed.
func TestIdleSessionsReclaimed(t *testing.T) {
	s := serveWith(t, Options{Limits: Limits{SessionIdle: 200 * time.Millisecond}})
	sess := s.initialize(t)
	n := 0
	tmuxtest.Eventually(t, 20*time.Second, "the idle session reclaimed after a 200 ms idle timeout", func() bool {
		n = 0
		for range s.srv.Sessions() {
			n++
		}
		return n == 0
	}, func() string { return fmt.Sprintf("%d sessions still live", n) })
	if a := s.post(t, sess, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); a.status != http.StatusNotFound {
		t.Errorf("a reclaimed session answered %d %s; want 404", a.status, a.raw)
	}
}

// TestPartialBodyTimesOut: a connection that sends part of a body and
// stalls is answered and closed after the read timeout.
func TestPartialBodyTimesOut(t *testing.T) {
	s := serveWith(t, Options{ReadTimeout: 300 * time.Millisecond})
	conn, err := net.Dial("tcp", strings.TrimSuffix(strings.TrimPrefix(s.url, "http://"), Path))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "POST "+Path+" HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "+testToken+
		"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\"")
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, err = io.ReadAll(conn) // the server answers, then closes
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("the connection with a stalled body was still open after 20 s")
	}
}

// TestShutdownAnswersInFlight: ending Serve (SIGTERM) while a call waits
// stops the handler, and the call's answer arrives before the connection
// closes (it used to be an empty 200).
func TestShutdownAnswersInFlight(t *testing.T) {
	s := serveWith(t, Options{})
	sess := s.initialize(t)
	got := make(chan answer, 1)
	go func() {
		got <- s.post(t, sess, `{"jsonrpc":"2.0","id":"w","method":"tools/call","params":{"name":"wait","arguments":{}}}`)
	}()
	select {
	case <-s.started:
	case <-time.After(20 * time.Second):
		t.Fatal("the wait did not start")
	}
	s.stop()
	a := <-got
	if a.msg["id"] != "w" || !strings.Contains(a.raw, "cancelled") {
		t.Errorf("the call in flight at shutdown answered %d %q; want its cancelled answer", a.status, a.raw)
	}
}

// screenBig is the screen of these tests: it refuses any arguments holding
// "big".
func screenBig() *frame.Screen {
	return &frame.Screen{Refuse: func(tool string, args json.RawMessage) string {
		if strings.Contains(string(args), "big") {
			return tool + ": too big"
		}
		return ""
	}}
}

// screenedCall and ordinaryCall are a call the screen refuses and one it
// lets through, both with the id id and params members more (each followed
// by a comma).
func screenedCall(id string, more ...string) string {
	return `{"jsonrpc":"2.0","id":"` + id + `","method":"tools/call","params":{` + strings.Join(more, "") + `"name":"hello","arguments":{"x":"big"}}}`
}

func ordinaryCall(id string, more ...string) string {
	return `{"jsonrpc":"2.0","id":"` + id + `","method":"tools/call","params":{` + strings.Join(more, "") + `"name":"hello","arguments":{}}}`
}

// TestScreenedCalls: a call the screen refuses is answered with its tool
// error in JSON, and go-sdk never runs the tool; a call it lets through,
// and any call without a live session, are go-sdk's.
func TestScreenedCalls(t *testing.T) {
	s := serveWith(t, Options{Screen: screenBig()})
	sess := s.initialize(t)
	a := s.post(t, sess, screenedCall("r"))
	want := `{"jsonrpc":"2.0","id":"r","result":{"content":[{"type":"text","text":"hello: too big"}],"isError":true}}`
	if a.status != http.StatusOK || a.raw != want {
		t.Errorf("a refused call answered %d %s; want 200 %s", a.status, a.raw, want)
	}
	if a := s.post(t, sess, ordinaryCall("ok")); a.msg["id"] != "ok" || !strings.Contains(a.raw, `"hi"`) {
		t.Errorf("a call the screen lets through answered %d %s; want the tool's answer", a.status, a.raw)
	}
	if a := s.post(t, "", screenedCall("r")); a.msg["error"] == nil || strings.Contains(a.raw, "too big") {
		t.Errorf("a call without a session answered %d %s; want go-sdk's error", a.status, a.raw)
	}
}

// TestScreenedCallsMeetGoSDKChecks: a request go-sdk refuses for its
// headers or its session (before it reads the params) gets go-sdk's
// refusal, status and body, whether the screen would refuse its arguments
// or not.
func TestScreenedCallsMeetGoSDKChecks(t *testing.T) {
	s := serveWith(t, Options{Screen: screenBig()})
	sess := s.initialize(t)
	u, err := url.Parse(s.url)
	if err != nil {
		t.Fatal(err)
	}
	// A call in flight with the id "busy", for go-sdk's check of ids in
	// flight on the session.
	inFlight := make(chan error, 1)
	go func() {
		_, err := s.send(sess, `{"jsonrpc":"2.0","id":"busy","method":"tools/call","params":{"name":"wait","arguments":{}}}`, nil)
		inFlight <- err
	}()
	select {
	case <-s.started:
	case err := <-inFlight:
		t.Fatalf("the wait answered before it started: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("the wait did not start")
	}
	for _, c := range []struct {
		why  string
		id   string
		edit func(*http.Request)
		want int    // go-sdk's status
		meta string // a _meta member of the params
	}{
		{"Accept without text/event-stream", "accept", func(r *http.Request) { r.Header.Set("Accept", "application/json") }, http.StatusBadRequest, ""},
		{"no Accept", "no-accept", func(r *http.Request) { r.Header.Del("Accept") }, http.StatusBadRequest, ""},
		{"Content-Type text/plain", "type", func(r *http.Request) { r.Header.Set("Content-Type", "text/plain") }, http.StatusUnsupportedMediaType, ""},
		{"an Mcp-Protocol-Version go-sdk does not know", "old", func(r *http.Request) { r.Header.Set("Mcp-Protocol-Version", "2024-01-01") }, http.StatusBadRequest, ""},
		{"Mcp-Protocol-Version 2026-07-28, which a stateful server refuses for calls", "new", func(r *http.Request) { r.Header.Set("Mcp-Protocol-Version", "2026-07-28") }, http.StatusBadRequest, ""},
		// go-sdk checks Mcp-Method and Mcp-Name only from 2026-07-28 on,
		// where a stateful server has already refused every call.
		{"Mcp-Method and Mcp-Name that do not match the body", "names", func(r *http.Request) {
			r.Header.Set("Mcp-Protocol-Version", "2026-07-28")
			r.Header.Set("Mcp-Method", "ping")
			r.Header.Set("Mcp-Name", "other")
		}, http.StatusBadRequest, ""},
		{"a Host our guard takes for loopback and go-sdk does not", "host", func(r *http.Request) { r.Host = "LOCALHOST:" + u.Port() }, http.StatusForbidden, ""},
		{"a Last-Event-ID", "last", func(r *http.Request) { r.Header.Set("Last-Event-ID", "x_1") }, http.StatusBadRequest, ""},
		{"an unknown session", "unknown", func(r *http.Request) { r.Header.Set("Mcp-Session-Id", "no-such-session") }, http.StatusNotFound, ""},
		{"no session", "none", func(r *http.Request) {
			r.Header.Del("Mcp-Session-Id")
			r.Header.Del("Mcp-Protocol-Version")
		}, http.StatusOK, ""}, // a JSON-RPC error: not initialized
		{"the id of a call in flight", "busy", nil, http.StatusBadRequest, ""},
		// The per-request protocol (SEP-2575), which a stateful server
		// refuses; the screen leaves such calls to go-sdk.
		{"a _meta naming a protocol version", "meta", nil, http.StatusBadRequest, `"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"},`},
	} {
		screened := s.postEdited(t, sess, screenedCall(c.id, c.meta), c.edit)
		ordinary := s.postEdited(t, sess, ordinaryCall(c.id, c.meta), c.edit)
		if ordinary.status != c.want {
			t.Errorf("%s: go-sdk answered %d %s; want %d (the test is out of date)", c.why, ordinary.status, ordinary.raw, c.want)
		}
		if screened.status != ordinary.status || screened.raw != ordinary.raw {
			t.Errorf("%s: a screened call answered\n%d %s\nwhere go-sdk answers\n%d %s", c.why, screened.status, screened.raw, ordinary.status, ordinary.raw)
		}
	}
	// The checks held nothing: the session still serves screened calls.
	if a := s.post(t, sess, screenedCall("after")); a.status != http.StatusOK || !strings.Contains(a.raw, "too big") {
		t.Errorf("after the refusals a screened call answered %d %s; want its tool error", a.status, a.raw)
	}
}

// TestScreenedCallsKeepTheSessionAlive: go-sdk restarts a session's idle
// timer as each POST on it ends, so a session whose only calls are screened
// stays alive as long as one whose calls reach go-sdk.
func TestScreenedCallsKeepTheSessionAlive(t *testing.T) {
	const idle = 300 * time.Millisecond
	s := serveWith(t, Options{Limits: Limits{SessionIdle: idle}, Screen: screenBig()})
	// A machine that stalls for longer than idle closes both sessions: a
	// round with nothing to compare is tried again, three times at most.
	for round := 1; round <= 3; round++ {
		screenedSess, ordinarySess := s.initialize(t), s.initialize(t)
		start := time.Now()
		compared := true
		for n := 1; compared && time.Since(start) < 5*idle; n++ {
			screened := s.post(t, screenedSess, screenedCall("s"))
			ordinary := s.post(t, ordinarySess, ordinaryCall("o"))
			if ordinary.status != http.StatusOK {
				t.Logf("round %d: after %v (%d calls each), the session with ordinary calls was closed too (%d %s): the machine paused for over %v",
					round, time.Since(start), n, ordinary.status, ordinary.raw, idle)
				compared = false
				continue
			}
			if screened.status != http.StatusOK || !strings.Contains(screened.raw, "too big") {
				t.Fatalf("after %v (%d calls each), the session with screened calls answered %d %s, while the one with ordinary calls lives; want its tool error (the idle timeout is %v)",
					time.Since(start), n, screened.status, screened.raw, idle)
			}
		}
		if compared {
			return
		}
	}
	t.Fatalf("in three rounds, the session with ordinary calls was closed as idle while in use: nothing could be compared")
}
