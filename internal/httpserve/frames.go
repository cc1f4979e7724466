package httpserve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/frame"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// methods are the methods go-sdk's server receives, and whether each is a
// notification; params are required unless noParams says otherwise. It
// mirrors go-sdk's own table (unexported), so a refusal here is the answer
// the stdio transport gets from go-sdk for the same frame.
var methods = map[string]bool{
	"completion/complete": false, "server/discover": false, "initialize": false, "ping": false,
	"prompts/list": false, "prompts/get": false, "tools/list": false, "tools/call": false,
	"resources/list": false, "resources/templates/list": false, "resources/read": false,
	"logging/setLevel": false, "resources/subscribe": false, "subscriptions/listen": false,
	"resources/unsubscribe":   false,
	"notifications/cancelled": true, "notifications/initialized": true,
	"notifications/roots/list_changed": true, "notifications/progress": true,
}

var noParams = map[string]bool{
	"server/discover": true, "ping": true, "prompts/list": true, "tools/list": true,
	"resources/list": true, "resources/templates/list": true, "notifications/cancelled": true,
	"notifications/initialized": true, "notifications/roots/list_changed": true,
}

// frames checks every POST body as the stdio transport checks a line,
// before go-sdk reads it: at most max bytes, refused frames answered with
// the same JSON-RPC errors (ids echoed exactly or refused, -32601 for an
// unknown method, -32600 for a notification sent with an id), and a new
// session refused once maxSessions are live. It also counts the calls in
// flight, so a shutdown can wait for their answers.
type frames struct {
	next        http.Handler
	srv         *mcp.Server
	max         int
	maxSessions int
	idle        time.Duration
	readTimeout time.Duration
	log         *slog.Logger
	relief      frame.Relief
	screen      *frame.Screen

	initMu sync.Mutex // one initialize at a time, so the session cap holds

	mu      sync.Mutex
	posts   int           // POSTs handed to go-sdk, being served
	peak    int           // the most posts ever served at once
	calls   int           // POSTs with a call, being served
	changed chan struct{} // closed and replaced when calls drops
}

func (f *frames) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		clearReadDeadline(w)
		f.next.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, int64(f.max)+1))
	f.relief.Saw(len(body))
	if err != nil {
		f.refuse(w, http.StatusBadRequest, &frame.Refusal{Code: jsonrpc.CodeParseError,
			Message: fmt.Sprintf("parse error: the request body could not be read (%v); send it whole within %s", err, ReadTimeout)}, nil)
		return
	}
	if len(body) > f.max {
		f.refuse(w, http.StatusRequestEntityTooLarge, tooLong(f.max, body, r.Body), nil)
		return
	}
	// The body is in: a call may now take as long as its wait allows.
	clearReadDeadline(w)
	msg, ref := frame.Decode(body)
	if ref != nil {
		f.refuse(w, http.StatusBadRequest, ref, body)
		return
	}
	req, isReq := msg.(*jsonrpc.Request)
	if isReq {
		if ref := checkMethod(req); ref != nil {
			f.refuse(w, http.StatusBadRequest, ref, body)
			return
		}
		if _, known := methods[req.Method]; !known || (!req.IsCall() && !methods[req.Method]) {
			// A notification nobody handles gets no answer, as on stdio.
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if answer := f.screen.Answer(r.Header.Get("Mcp-Session-Id"), req); answer != nil {
			f.answerScreened(w, r, req, answer)
			return
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	if isReq && req.Method == "initialize" && r.Header.Get("Mcp-Session-Id") == "" {
		f.initMu.Lock()
		defer f.initMu.Unlock()
		if n := f.sessions(); n >= f.maxSessions {
			f.refuse(w, http.StatusServiceUnavailable, &frame.Refusal{ID: rawID(req), Code: -32000,
				Message: fmt.Sprintf("%d HTTP sessions are live, the most this server allows (LIBTMUX_MCP_HTTP_MAX_SESSIONS); end one (DELETE %s with its Mcp-Session-Id) or wait: a session idle for %s is closed", n, Path, f.idle)}, body)
			return
		}
	}
	if isReq && req.IsCall() {
		f.track(1)
		defer f.track(-1)
	}
	f.enter()
	f.next.ServeHTTP(w, r)
	peak := f.leave()
	if len(body) >= frame.LargeFrame {
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush() // the client has its answer before the pings
		}
		f.flush(r, peak)
	}
}

// answerScreened answers a call the screen refused for its arguments
// without go-sdk reading them, after go-sdk has checked the request as it
// checks every POST: a ping with the call's id, headers, Host and context
// goes through go-sdk's handler in the call's place. So the call meets
// go-sdk's checks of the Host, the Mcp-Protocol-Version header,
// Content-Type, Accept, the session, Last-Event-ID and the ids in flight,
// and resets its session's idle timer as a call does. If go-sdk refuses the
// ping, its refusal (status, headers, body) answers the call, as it would
// have; otherwise the screen's answer does, in JSON.
func (f *frames) answerScreened(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request, answer []byte) {
	body := `{"jsonrpc":"2.0","id":` + string(rawID(req)) + `,"method":"ping"}`
	ping := r.Clone(r.Context())
	ping.Body = io.NopCloser(strings.NewReader(body))
	ping.ContentLength = int64(len(body))
	var got recorder
	f.track(1)
	defer f.track(-1)
	f.enter()
	f.next.ServeHTTP(&got, ping)
	f.leave()
	if got.status >= 300 {
		maps.Copy(w.Header(), got.header)
		w.WriteHeader(got.status)
		w.Write(got.body.Bytes())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(answer)
}

// checkMethod answers what go-sdk answers on stdio for a call it cannot
// take: an unknown method, a notification's method with an id, missing
// params.
func checkMethod(req *jsonrpc.Request) *frame.Refusal {
	if !req.IsCall() {
		return nil
	}
	notification, known := methods[req.Method]
	switch {
	case !known:
		return &frame.Refusal{ID: rawID(req), Code: jsonrpc.CodeMethodNotFound,
			Message: fmt.Sprintf("method not found: %q", frame.Quote(req.Method, 200))}
	case notification:
		return &frame.Refusal{ID: rawID(req), Code: jsonrpc.CodeInvalidRequest,
			Message: fmt.Sprintf("invalid request: unexpected id for %q; send notifications without an id", req.Method)}
	case len(req.Params) == 0 && !noParams[req.Method]:
		return &frame.Refusal{ID: rawID(req), Code: jsonrpc.CodeInvalidRequest,
			Message: `invalid request: missing required "params"`}
	}
	return nil
}

// rawID is req's id as JSON.
func rawID(req *jsonrpc.Request) json.RawMessage {
	b, _ := json.Marshal(req.ID.Raw())
	return b
}

func (f *frames) refuse(w http.ResponseWriter, status int, ref *frame.Refusal, body []byte) {
	f.log.Warn("refused a JSON-RPC request over HTTP", slog.Int64("code", ref.Code), slog.String("reason", ref.Message),
		slog.String("frame", frame.Quote(string(body), 200)))
	w.Header().Set("Content-Type", "application/json")
	if status == http.StatusRequestEntityTooLarge {
		w.Header().Set("Connection", "close") // the rest of the body is not read
	}
	w.WriteHeader(status)
	w.Write(ref.Response())
}

// sessions counts the live sessions.
func (f *frames) sessions() int {
	n := 0
	for range f.srv.Sessions() {
		n++
	}
	return n
}

func (f *frames) track(d int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls += d
	if d < 0 {
		close(f.changed)
		f.changed = make(chan struct{})
	}
}

// awaitCalls returns once no call is being served, or at stop.
func (f *frames) awaitCalls(stop <-chan struct{}) {
	for {
		f.mu.Lock()
		n, changed := f.calls, f.changed
		f.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-changed:
		case <-stop:
			return
		}
	}
}

// clearReadDeadline lifts the connection's read timeout once a request is
// read: ReadTimeout bounds a request's arrival, not how long its answer
// (a wait, a stream) may take.
func clearReadDeadline(w http.ResponseWriter) {
	// ErrNotSupported only for writers that are not a connection's (tests).
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
}

// maxScanned bounds how much of a body over the frame limit is read to
// find its id: beyond it the refusal carries id null.
const maxScanned = 64 << 20

// tooLong refuses a body over max bytes with the id found in it (head, the
// bytes already read, then the rest of the body up to maxScanned), keeping
// none of it.
func tooLong(max int, head []byte, rest io.Reader) *frame.Refusal {
	var scan frame.IDScanner
	scan.Write(head)
	_, _ = io.Copy(&scan, io.LimitReader(rest, maxScanned)) // a read error leaves the id found so far
	ref := frame.TooLong(max)
	ref.ID = scan.ID()
	return ref
}
