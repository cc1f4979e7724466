package frame

import (
	"strings"
	"testing"
)

func scanID(frame string, piece int) string {
	var s IDScanner
	for len(frame) > 0 {
		n := min(piece, len(frame))
		s.Write([]byte(frame[:n]))
		frame = frame[n:]
	}
	return string(s.ID())
}

func TestIDScanner(t *testing.T) {
	big := strings.Repeat("x", 100000)
	cases := []struct {
		name, frame, want string
	}{
		{"id first", `{"id":7,"method":"tools/call","params":{"a":"` + big + `"}}`, `7`},
		{"id after the params, as the TypeScript SDK writes it", `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x","arguments":{"text":"` + big + `"}},"id":42}`, `42`},
		{"string id", `{"params":{"t":"` + big + `"}, "id" : "call-9" }`, `"call-9"`},
		{"string id with escapes", `{"id":"a\"b\\","params":[1,2,{"x":"]}"}]}`, `"a\"b\\"`},
		{"key spelled with escapes", `{"params":{},"\u0069\u0064":3}`, `3`},
		{"an id inside params does not count", `{"params":{"id":5,"x":["id",{"id":6}]},"method":"m"}`, ``},
		{"nested strings with brackets and quotes", `{"params":{"s":"}\"]{","t":[["}"]]},"id":"z"}`, `"z"`},
		{"the last id counts", `{"id":1,"params":{},"id":2}`, `2`},
		{"an object id is no id", `{"id":{"a":1},"params":{}}`, ``},
		{"a null id", `{"id":null,"params":{}}`, ``},
		{"a number too large is still echoed", `{"id":12345678901234567890,"params":{}}`, `12345678901234567890`},
		{"a batch has no id", `[{"id":1}]`, ``},
		{"not JSON", `hello {"id":1}`, ``},
		{"cut in the middle of the params", `{"id":"early","params":{"text":"` + big, `"early"`},
		{"a number ending the input", `{"id":77`, `77`},
		{"a string id too long to keep", `{"id":"` + strings.Repeat("i", MaxScannedID+1) + `"}`, ``},
	}
	for _, c := range cases {
		for _, piece := range []int{1, 7, 4096, len(c.frame)} {
			if got := scanID(c.frame, piece); got != c.want {
				t.Errorf("%s (pieces of %d bytes): got %q; want %q", c.name, piece, got, c.want)
			}
		}
	}
}

// Where Decode refuses a frame for its id's value, the scanner finds the
// id Decode's refusal echoes.
func TestIDScannerAgreesWithDecode(t *testing.T) {
	for _, f := range []string{
		`{"jsonrpc":"2.0","method":"ping","id":"\ud800"}`,
		`{"jsonrpc":"2.0","method":"ping","id":1.5}`,
		`{"jsonrpc":"2.0","method":"ping","id":true}`,
		`{"jsonrpc":"2.0","method":"ping","id":null}`,
		`{"jsonrpc":"1.0","method":"ping","id":"v"}`,
	} {
		_, ref := Decode([]byte(f))
		if ref == nil {
			t.Fatalf("%s: Decode accepted it", f)
		}
		if got := scanID(f, 3); got != string(ref.ID) {
			t.Errorf("%s: scanner %q; Decode's refusal %q", f, got, ref.ID)
		}
	}
}
