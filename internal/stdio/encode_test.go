package stdio

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// compactJSON encodes v as go-sdk encodes results: compact, no HTML escaping.
func compactJSON(t testing.TB, v any) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// sameAsSDK fails unless encode writes exactly what jsonrpc.EncodeMessage
// writes for msg.
func sameAsSDK(t *testing.T, msg jsonrpc.Message) {
	t.Helper()
	want, wantErr := jsonrpc.EncodeMessage(msg)
	got, err := encode(msg)
	if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
		t.Fatalf("encode = %q, %v\nEncodeMessage = %q, %v", got, err, want, wantErr)
	}
}

func makeID(t testing.TB, v any) jsonrpc.ID {
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestEncodeMatchesSDK(t *testing.T) {
	id7, idS := makeID(t, float64(7)), makeID(t, "a\"<b>")
	for _, msg := range []jsonrpc.Message{
		&jsonrpc.Response{ID: id7, Result: compactJSON(t, map[string]any{"text": "<a> & \"b\"\n\u2028", "n": 1})},
		&jsonrpc.Response{ID: idS, Result: json.RawMessage(`{}`)},
		&jsonrpc.Response{ID: id7, Result: json.RawMessage("{\n \"spaced\": true\n}")}, // not compact: the general path
		&jsonrpc.Response{ID: id7, Error: &jsonrpc.Error{Code: -32602, Message: "bad"}},
		&jsonrpc.Request{ID: id7, Method: "ping"},
		&jsonrpc.Request{Method: "notifications/progress", Params: json.RawMessage(`{"progress":1}`)},
	} {
		sameAsSDK(t, msg)
	}
}

func FuzzEncode(f *testing.F) {
	f.Add("plain", int64(1), "")
	f.Add("<tag> & \"quote\"\n\t\x00\u2028\xff", int64(-3), "id \u00e9")
	f.Fuzz(func(t *testing.T, text string, n int64, sid string) {
		result := compactJSON(t, map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}, "n": n})
		sameAsSDK(t, &jsonrpc.Response{ID: makeID(t, float64(n%1000000)), Result: result})
		sameAsSDK(t, &jsonrpc.Response{ID: makeID(t, sid), Result: result})
	})
}
