package stdio

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// FuzzDecode feeds decode any frame: it never panics, and either hands on
// a message or writes exactly one JSON-RPC error line, never both.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"x","result":{}}`,
		`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":[1],"method":"ping"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":1,"method":`,
		`42`, `null`, `"x"`, `{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		if len(bytes.TrimSpace(frame)) == 0 {
			return // skipped before decode
		}
		var out bytes.Buffer
		c := &conn{out: &out, closed: make(chan struct{}), log: slog.New(slog.DiscardHandler), in: io.NopCloser(nil)}
		msg := c.decode(frame)
		lines := bytes.Count(out.Bytes(), []byte("\n"))
		switch {
		case msg != nil && lines != 0:
			t.Fatalf("decode(%q) handed on %v and wrote %q", frame, msg, out.String())
		case msg == nil && lines != 1:
			t.Fatalf("decode(%q) refused with %d lines: %q", frame, lines, out.String())
		case msg == nil:
			var resp struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   *jsonrpc.Error  `json:"error"`
			}
			if err := json.Unmarshal(out.Bytes(), &resp); err != nil || resp.JSONRPC != "2.0" || resp.Error == nil || resp.ID == nil {
				t.Fatalf("decode(%q) wrote %q; want a JSON-RPC error response (%v)", frame, out.String(), err)
			}
		}
	})
}
