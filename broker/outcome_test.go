package broker

import (
	"strings"
	"testing"
)

// TestRequestCheck: the limits of a request are this package's, checked before anything else,
// each refusal invalid_script, not sent, naming the fault.
func TestRequestCheck(t *testing.T) {
	ok := Request{Pane: "%1", Generation: "g", Script: []byte("true"), StdoutLimit: DefaultOutputLimit, StderrLimit: DefaultOutputLimit}
	for _, tc := range []struct {
		name string
		edit func(*Request)
		want string // "" when the request passes
	}{
		{"defaults", func(*Request) {}, ""},
		{"zero limits are limits, not defaults", func(r *Request) { r.StdoutLimit, r.StderrLimit = 0, 0 }, ""},
		{"largest limits", func(r *Request) { r.StdoutLimit, r.StderrLimit = MaxOutputLimit, MaxOutputLimit }, ""},
		{"largest script", func(r *Request) { r.Script = []byte(strings.Repeat("x", MaxScript)) }, ""},
		{"script one byte over", func(r *Request) { r.Script = []byte(strings.Repeat("x", MaxScript+1)) }, "the script is 65537 bytes; at most 65536 are allowed"},
		{"NUL", func(r *Request) { r.Script = []byte("echo a\x00b") }, "the script contains a NUL character"},
		{"stdout over", func(r *Request) { r.StdoutLimit = MaxOutputLimit + 1 }, "stdout_limit must be 0..262144"},
		{"stdout negative", func(r *Request) { r.StdoutLimit = -1 }, "stdout_limit must be 0..262144"},
		{"stderr over", func(r *Request) { r.StderrLimit = MaxOutputLimit + 1 }, "stderr_limit must be 0..262144"},
		{"first fault named", func(r *Request) { r.StdoutLimit, r.StderrLimit = -1, -1 }, "stdout_limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := ok
			tc.edit(&req)
			out, pass := req.Check()
			if tc.want == "" {
				if !pass || out.Code != "" {
					t.Fatalf("Check() = %+v, %v; want it to pass", out, pass)
				}
				return
			}
			if pass || out.Code != CodeInvalidScript || out.Delivery != NotSent || !strings.Contains(out.Message, tc.want) {
				t.Fatalf("Check() = %+v, %v; want invalid_script, not_sent, message with %q", out, pass, tc.want)
			}
		})
	}
}
