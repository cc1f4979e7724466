package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/libtmux/libtmux-mcp/internal/argcheck"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxBlocking is how many blocking calls (waits and runs: a tool
// spec's blocks) may be in flight at once, over all sessions, unless
// Limits.MaxBlocking says otherwise. Each holds a tmux process or a
// control-mode connection, so the cap keeps the process under its
// open-file limit.
const DefaultMaxBlocking = 128

// MaxListItems bounds every array and every object in a call's arguments,
// at any depth, before they are decoded: a tool's own limits (16 batch
// operations, 64 keys) are checked later, on a value this bound keeps small.
const MaxListItems = 256

// Maximum lengths, in bytes, of string arguments, checked before the
// arguments are decoded and long before tmux sees them. A string argument
// not named here gets maxOtherString. The tools' own finer limits (send_keys
// 8 KiB of text, paste_text 64 KiB) still apply after these.
var maxString = map[string]int{
	// ids and the caller's pane id
	"paneId": 64, "targetPaneId": 64, "windowId": 64, "sessionId": 64, "force": 64,
	// names that tmux stores or matches
	"sessionName": 256, "name": 256, "names": 256, "title": 256, "channel": 256,
	"target": 256, "scope": 64, "direction": 64, "onError": 64, "tool": 64, "keys": 256,
	// paths, layouts, patterns, cursors
	"startDirectory": 4096, "layout": 4096, "pattern": 4096, "cursor": 1024,
	// payloads
	"text": 65536, "command": 65536,
}

// maxOtherString bounds a string argument not in maxString.
const maxOtherString = 1024

// argBounds are the bounds the call gate scans a call's arguments with.
var argBounds = argcheck.Bounds{MaxItems: MaxListItems, MaxString: maxString, MaxOtherString: maxOtherString}

// callGate is the server's receiving middleware for tools/call: it bounds the
// arguments before they are decoded, caps the blocking calls in flight,
// and keeps error texts from quoting more than argcheck.QuoteMax bytes of an
// argument. tmux_run is left to its own contract's checks (its refusals are
// structured, from a closed set of codes): its runs take a token of the
// cap when one is free and are never refused by it.
func (s *server) callGate(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		params, ok := req.GetParams().(*mcp.CallToolParamsRaw)
		if !ok || !s.sel.Has(params.Name) {
			return next(ctx, method, req)
		}
		t := catalog[params.Name]
		var long []string
		if t.spec().inputSchema == nil { // typed tools; raw ones check their own
			var err error
			if long, err = argBounds.Scan(params.Arguments); err != nil {
				return toolError(argumentRefusal(params.Name, err)), nil
			}
		}
		if t.spec().blocks {
			select {
			case s.blocking <- struct{}{}:
				defer func() { <-s.blocking }()
			default:
				if t.spec().inputSchema != nil {
					// tmux_run answers only its contract's codes; its runs
					// are bounded anyway (one per enrolled pane, at most 8),
					// so over the cap it runs without a token.
					break
				}
				return toolError(fmt.Sprintf("%s: %d blocking calls (waits and runs) are already in flight, the most this server allows (LIBTMUX_MCP_MAX_BLOCKING=%d); wait for one to answer or cancel one, then call again",
					params.Name, cap(s.blocking), cap(s.blocking))), nil
			}
		}
		res, err := next(ctx, method, req)
		if r, ok := res.(*mcp.CallToolResult); ok && r.IsError && len(long) > 0 {
			for _, c := range r.Content {
				if tc, ok := c.(*mcp.TextContent); ok {
					tc.Text = argcheck.ShortenQuotes(tc.Text, long)
				}
			}
		}
		return res, err
	}
}

// ArgumentRefusal is the call gate's check of a call's arguments, for a
// transport to make before go-sdk decodes the call (frame.Screen): the
// text of the tool error the call gate answers for a call of tool with args,
// or "" when the call gate lets the call through (a tool outside sel, a raw
// tool, arguments within their bounds).
func (sel Selection) ArgumentRefusal(tool string, args json.RawMessage) string {
	if !sel.Has(tool) || catalog[tool].spec().inputSchema != nil {
		return ""
	}
	if _, err := argBounds.Scan(args); err != nil {
		return argumentRefusal(tool, err)
	}
	return ""
}

// argumentRefusal is the tool error text for arguments argBounds.Scan
// refused.
func argumentRefusal(tool string, err error) string {
	return fmt.Sprintf("%s: %v", tool, err)
}

// toolError is a tool error answer.
func toolError(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}
