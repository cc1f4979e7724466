// Package frame checks one inbound JSON-RPC frame before go-sdk decodes
// it, the same way for every transport (stdio and Streamable HTTP), so a
// client gets the same answer whichever way it came.
//
// It refuses what go-sdk would misread or drop: a frame that is not JSON
// (-32700), a batch or a non-object (-32600), and an id no JSON-RPC peer
// could get back exactly (-32600): a fraction, an integer beyond ±2^53
// (go-sdk reads numeric ids as float64), a string that is not valid UTF-8
// or holds a lone surrogate (go-sdk would answer with U+FFFD in it). A
// refusal names the id whenever the frame had one a client can match, so
// a valid id in an otherwise invalid envelope is answered with that id.
//
// It also answers, before go-sdk decodes them, the calls the server refuses
// for their arguments (Screen, given the server's own check), gives memory
// back after large frames (Relief), and keeps error answers encodable
// (EncodableErrors). It knows no tool.
package frame

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"sync"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMax is the default bound of one inbound frame, in bytes, on every
// transport: checked before a frame is decoded.
const DefaultMax = 4 << 20

// Refusal is the JSON-RPC error answering a frame that never reaches go-sdk.
type Refusal struct {
	ID      json.RawMessage // the id to echo, exactly as sent; null when none can be
	Code    int64
	Message string
}

// Response encodes r as a JSON-RPC error response.
func (r *Refusal) Response() []byte {
	id := r.ID
	if id == nil {
		id = json.RawMessage("null")
	}
	data, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: r.Code, Message: r.Message}})
	return data
}

// TooLong is the refusal of a frame over max bytes, which is never read
// whole (so its id is unknown).
func TooLong(max int) *Refusal {
	return &Refusal{Code: jsonrpc.CodeInvalidRequest,
		Message: fmt.Sprintf("frame longer than %d bytes; send smaller messages (the limit is LIBTMUX_MCP_MAX_FRAME_BYTES)", max)}
}

// Decode checks frame (one JSON-RPC message, surrounding space allowed) and
// decodes it with go-sdk, or returns the refusal that answers it.
func Decode(frame []byte) (jsonrpc.Message, *Refusal) {
	frame = bytes.TrimSpace(frame)
	if !json.Valid(frame) {
		return nil, &Refusal{Code: jsonrpc.CodeParseError, Message: "parse error: the frame is not JSON; send one JSON-RPC message per frame"}
	}
	if frame[0] == '[' {
		return nil, &Refusal{Code: jsonrpc.CodeInvalidRequest, Message: "JSON-RPC batches are not supported; send one message per frame"}
	}
	var fields map[string]json.RawMessage
	if frame[0] != '{' || json.Unmarshal(frame, &fields) != nil {
		return nil, &Refusal{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: a JSON-RPC message is a JSON object"}
	}
	rawID, hasID := fields["id"]
	echo, idErr := checkID(rawID, hasID, fields["method"] != nil)
	refuse := func(msg string) (jsonrpc.Message, *Refusal) {
		return nil, &Refusal{ID: echo, Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: " + msg}
	}
	if idErr != "" {
		return refuse(idErr)
	}
	var version string
	if json.Unmarshal(fields["jsonrpc"], &version) != nil || version != "2.0" {
		return refuse(`"jsonrpc" must be "2.0"`)
	}
	if m, ok := fields["method"]; ok {
		var method string
		if json.Unmarshal(m, &method) != nil {
			return refuse(`"method" must be a string`)
		}
	}
	msg, err := jsonrpc.DecodeMessage(frame)
	if err != nil {
		return refuse(Quote(err.Error(), 200))
	}
	return msg, nil
}

// maxExactID is the largest integer a float64 holds exactly, 2^53.
const maxExactID = 1 << 53

// checkID accepts the ids go-sdk echoes exactly: a valid UTF-8 string
// without lone surrogates, or an integer within ±2^53. It returns the id
// to echo in a refusal (the raw token whenever it is a string or a number
// that is itself valid UTF-8, else null) and why the id is refused.
func checkID(raw json.RawMessage, present, isRequest bool) (echo json.RawMessage, problem string) {
	if !present {
		return nil, ""
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return nil, `"id" is not a JSON value`
	}
	switch v := v.(type) {
	case string:
		if !utf8.Valid(raw) {
			return nil, `"id" is a string that is not valid UTF-8; use a UTF-8 string or an integer`
		}
		if loneSurrogate(raw) {
			return raw, `"id" is a string with a lone UTF-16 surrogate, which cannot be echoed exactly; use a valid string or an integer`
		}
		return raw, ""
	case json.Number:
		// go-sdk reads numeric ids as float64: only integers it holds
		// exactly come back unchanged.
		if n, err := v.Int64(); err != nil || n > maxExactID || n < -maxExactID {
			return raw, fmt.Sprintf(`"id" %s is not an integer within ±2^53; use a string or a smaller integer`, Quote(v.String(), 40))
		}
		return raw, ""
	case nil:
		if isRequest {
			return nil, `"id" is null; omit "id" for a notification, or give a string or an integer`
		}
		return nil, ""
	default:
		return nil, `"id" must be a string or an integer`
	}
}

// loneSurrogate reports whether the JSON string token raw escapes a UTF-16
// surrogate that is not half of a pair.
func loneSurrogate(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		i++
		if i >= len(raw) || raw[i] != 'u' || i+4 >= len(raw) {
			continue
		}
		r1 := hex4(raw[i+1 : i+5])
		i += 4
		if !utf16.IsSurrogate(r1) {
			continue
		}
		// A high surrogate must be followed at once by an escaped low one.
		if r1 >= 0xdc00 || i+6 >= len(raw) || raw[i+1] != '\\' || raw[i+2] != 'u' {
			return true
		}
		r2 := hex4(raw[i+3 : i+7])
		if r2 < 0xdc00 || r2 > 0xdfff {
			return true
		}
		i += 6
	}
	return false
}

func hex4(b []byte) rune {
	n, err := strconv.ParseUint(string(b), 16, 32)
	if err != nil {
		return -1
	}
	return rune(n)
}

// Quote returns s for an error text: whole when it has at most max bytes,
// else its first max bytes (cut at a character boundary) and how long it
// was. Error texts never carry more of an argument than that.
func Quote(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:cut], len(s))
}

// LargeFrame is the size from which a frame's memory is handed back to the
// operating system once it is garbage (Relief).
const LargeFrame = 1 << 20

// Relief returns the memory a large frame made the process take: decoding
// a 4 MiB frame can take ten times that, and Go's scavenger gives it back
// only slowly. Once a large frame has been seen, it frees memory to the
// operating system after the traffic goes quiet: 1 s, 3 s and 8 s after
// the last frame (when the calls have likely been answered, and again for
// slow ones). The zero value is ready.
type Relief struct {
	mu     sync.Mutex
	owed   bool // a large frame was seen since the last relief
	timers []*time.Timer
}

// reliefAfter are the delays after the last frame.
var reliefAfter = []time.Duration{time.Second, 3 * time.Second, 8 * time.Second}

// Saw notes a frame of n bytes.
func (r *Relief) Saw(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n >= LargeFrame {
		r.owed = true
	}
	if !r.owed {
		return
	}
	if r.timers == nil {
		for i, d := range reliefAfter {
			last := i == len(reliefAfter)-1
			r.timers = append(r.timers, time.AfterFunc(d, func() {
				debug.FreeOSMemory()
				if last {
					r.mu.Lock()
					r.owed = false
					r.mu.Unlock()
				}
			}))
		}
		return
	}
	for i, t := range r.timers {
		t.Reset(reliefAfter[i])
	}
}

// EncodableErrors is server middleware that keeps every error answer
// encodable: go-sdk builds some error data with Go's %q (a resources/read
// of a URI with a control character), which is not JSON, and an answer
// that cannot be encoded breaks the whole session over Streamable HTTP.
// Such an error becomes a JSON-RPC internal error, logged once.
func EncodableErrors(log *slog.Logger) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			var jerr *jsonrpc.Error
			if errors.As(err, &jerr) && len(jerr.Data) > 0 && !json.Valid(jerr.Data) {
				log.Error("an error answer could not be encoded; answered an internal error instead",
					slog.String("method", method), slog.String("data", Quote(string(jerr.Data), 200)))
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
					Message: "internal error: the answer could not be encoded as JSON (" + Quote(jerr.Message, 200) + "); this is a bug in libtmux-mcp or go-sdk, please report the request"}
			}
			return res, err
		}
	}
}
