package mcpserver

import (
	"strings"
	"testing"
)

// The name checks keep the bounds the {m,n} patterns had.
func TestNameShapes(t *testing.T) {
	t.Parallel()
	a := func(n int) string { return strings.Repeat("a", n) }
	for _, c := range []struct {
		check func(string) bool
		name  string
		want  bool
	}{
		{validEnvName, "PATH", true}, {validEnvName, "_" + a(255), true}, {validEnvName, "_" + a(256), false},
		{validEnvName, "9PATH", false}, {validEnvName, "", false}, {validEnvName, "A-B", false},
		{validOptionName, "status", true}, {validOptionName, "@my-opt", true}, {validOptionName, "status-format[12]", true},
		{validOptionName, a(128), true}, {validOptionName, "@" + a(128) + "[99999]", true}, {validOptionName, a(129), false},
		{validOptionName, "-x", false}, {validOptionName, "a[123456]", false}, {validOptionName, "a[]", false},
		{validChannel, "build.done:1", true}, {validChannel, a(128), true}, {validChannel, a(129), false}, {validChannel, "", false}, {validChannel, "a b", false},
	} {
		if got := c.check(c.name); got != c.want {
			t.Errorf("%q: %v; want %v", c.name, got, c.want)
		}
	}
}
