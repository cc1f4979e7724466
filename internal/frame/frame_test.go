package frame

import (
	"strings"
	"testing"
)

func TestLoneSurrogate(t *testing.T) {
	cases := []struct {
		raw  string
		want bool
		why  string
	}{
		{`"abc"`, false, "no escapes"},
		{`"\ud83d\ude00"`, false, "a pair (an emoji)"},
		{`"\ud800"`, true, "a high surrogate alone"},
		{`"\udc00"`, true, "a low surrogate alone"},
		{`"\ud800x"`, true, "a high surrogate followed by a letter"},
		{`"\ud800\u0041"`, true, "a high surrogate followed by an escape that is not low"},
		{`"\\ud800"`, false, "an escaped backslash, then letters"},
		{`"\u00e9"`, false, "a plain escape"},
	}
	for _, c := range cases {
		if got := loneSurrogate([]byte(c.raw)); got != c.want {
			t.Errorf("%s: loneSurrogate(%s) = %v; want %v", c.why, c.raw, got, c.want)
		}
	}
}

func TestQuote(t *testing.T) {
	if got := Quote("short", 200); got != "short" {
		t.Errorf("got %q; want it whole", got)
	}
	long := strings.Repeat("é", 1000) // 2 bytes each
	got := Quote(long, 201)
	if !strings.HasSuffix(got, "… (2000 bytes)") || len(got) > 220 || !strings.HasPrefix(got, strings.Repeat("é", 100)) {
		t.Errorf("got %q; want the first 100 characters (cut at a character boundary) and the length", got)
	}
}

func TestDecodeEchoesValidIDs(t *testing.T) {
	cases := []struct{ frame, id string }{
		{`{"id":7,"method":"ping"}`, `7`},
		{`{"jsonrpc":"1.0","id":"x","method":"ping"}`, `"x"`},
		{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, `1.5`},
		{`{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, `9007199254740993`},
		{`{"jsonrpc":"2.0","id":"\ud800","method":"ping"}`, `"\ud800"`},
	}
	for _, c := range cases {
		_, ref := Decode([]byte(c.frame))
		if ref == nil || string(ref.ID) != c.id {
			t.Errorf("Decode(%s) = %+v; want a refusal echoing %s", c.frame, ref, c.id)
		}
	}
	if msg, ref := Decode([]byte(`{"jsonrpc":"2.0","id":9007199254740992,"method":"ping"}`)); ref != nil || msg == nil {
		t.Errorf("2^53 refused: %+v", ref)
	}
}
