package argcheck

import (
	"slices"
	"testing"
)

type inner struct {
	Session string `json:"sessionId,omitempty"`
}

type params struct {
	inner
	PaneID  string   `json:"paneId"`
	Lines   int      `json:"lines,omitempty"`
	Keys    []string `json:"keys,omitzero"`
	Skipped string   `json:"-"`
	hidden  string
}

func TestOf(t *testing.T) {
	t.Parallel()
	l := Of[params]()
	if got, want := l.Names, []string{"keys", "lines", "paneId", "sessionId"}; !slices.Equal(got, want) {
		t.Errorf("Names = %v; want %v (embedded structs flattened, - and unexported left out)", got, want)
	}
	if got, want := l.Required, []string{"paneId"}; !slices.Equal(got, want) {
		t.Errorf("Required = %v; want %v (omitempty and omitzero are optional)", got, want)
	}
	if Of[params]() != l {
		t.Error("Of read the type twice; want it cached")
	}
	_ = params{}.hidden
}

func TestDecode(t *testing.T) {
	t.Parallel()
	const tail = "; its arguments are keys, lines, paneId, sessionId (required: paneId)"
	for _, tc := range []struct {
		raw, want string
	}{
		{`{"paneId":"%1","lines":3}`, ""},
		{`{"paneID":"%1"}`, `tool has no argument "paneID"` + tail},
		{`{}`, "tool needs paneId" + tail},
		{`null`, "tool needs paneId" + tail},
		{`{"paneId":null}`, "tool needs paneId" + tail},
		{`[1]`, "tool takes its arguments as a JSON object" + tail},
		{`{"paneId":"%1","lines":"3"}`, "tool: lines must be an integer, not string" + tail},
		{`{"paneId":"%1","keys":"Enter"}`, "tool: keys must be an array, not string" + tail},
	} {
		var p params
		err := Of[params]().Decode("tool", []byte(tc.raw), &p)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("Decode(%s) = %v; want no error", tc.raw, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want):
			t.Errorf("Decode(%s) = %v; want %q", tc.raw, err, tc.want)
		}
	}
	var none struct{}
	if err := Of[struct{}]().Decode("tool", []byte(`{"a":1}`), &none); err == nil || err.Error() != `tool takes no arguments; remove "a"` {
		t.Errorf("Decode of an argument to a struct without any = %v; want the refusal naming it", err)
	}
}

func TestJoinAnd(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{[]string{"a"}, "a"},
		{[]string{"a", "b"}, "a and b"},
		{[]string{"a", "b", "c"}, "a, b and c"},
	} {
		if got := joinAnd(tc.in); got != tc.want {
			t.Errorf("joinAnd(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
}
