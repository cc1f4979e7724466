package frame

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Screen answers, before go-sdk decodes it, a tools/call the server would
// refuse for its arguments anyway (Refuse), with the same tool error. A
// large refused frame (a batch of 180,000 operations, a 3 MB name) then
// never reaches go-sdk, which keeps the last requests of each session
// referenced, params and all, until that session's next requests (its
// handler queue pops from the front of a slice). Over Streamable HTTP
// nothing of ours can drop them after the answer: eight such 4 MB frames
// at once, on five sessions, kept 17 to 21 MiB after the load.
//
// A call is screened only on a session go-sdk would hand it to a tool: one
// that exists and has been initialized; any other is go-sdk's to answer.
// Params are read as go-sdk reads them, members matched by exact name, and
// a call whose _meta is not an object or names a protocol version (the
// per-request protocol, SEP-2575) is go-sdk's too: it answers those without
// asking the tool. Over HTTP the transport still owes the request go-sdk's
// own checks of a POST (headers, session, id in flight). A nil *Screen
// screens nothing.
type Screen struct {
	Server *mcp.Server
	// Refuse returns the text of the tool error that answers a call of
	// tool with args, or "" to let the call through. It must be the
	// server's own check, so the answer is the same on every path.
	Refuse func(tool string, args json.RawMessage) string
}

// Answer returns the answer to req, read on the session with id sessionID
// ("" on stdio), encoded as one JSON-RPC response; nil when go-sdk is to
// handle req.
func (s *Screen) Answer(sessionID string, req *jsonrpc.Request) []byte {
	if s == nil || !req.IsCall() || req.Method != "tools/call" || !s.ready(sessionID) {
		return nil
	}
	// A map, not a struct: encoding/json would take "Name" or "NAME" for
	// "name", and go-sdk does not.
	var p map[string]json.RawMessage
	if json.Unmarshal(req.Params, &p) != nil || p == nil {
		return nil // go-sdk's message about the params is better
	}
	var name string
	if raw, ok := p["name"]; ok && json.Unmarshal(raw, &name) != nil {
		return nil
	}
	if raw, ok := p["_meta"]; ok {
		var meta map[string]json.RawMessage
		if json.Unmarshal(raw, &meta) != nil {
			return nil
		}
		if _, ok := meta[mcp.MetaKeyProtocolVersion]; ok {
			return nil
		}
	}
	msg := s.Refuse(name, p["arguments"])
	if msg == "" {
		return nil
	}
	res, err := json.Marshal(&mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}})
	if err != nil {
		return nil // let go-sdk answer (and fail) the same way
	}
	data, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: req.ID, Result: res})
	if err != nil {
		return nil
	}
	return data
}

// ready reports whether the session with id sessionID is live and
// initialized.
func (s *Screen) ready(sessionID string) bool {
	for ss := range s.Server.Sessions() {
		if ss.ID() == sessionID {
			return ss.InitializeParams() != nil
		}
	}
	return false
}
