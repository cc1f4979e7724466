package shellrun

import "testing"

func TestPrograms(t *testing.T) {
	for _, c := range []struct {
		names      []string
		who, holds string
	}{
		{nil, "a program", "holds"},
		{[]string{"cat"}, `"cat"`, "holds"},
		{[]string{"bash", "cat"}, `"cat"`, "holds"}, // a subshell leads the group
		{[]string{"bash", "make", "cc"}, `"make", "cc"`, "hold"},
		{[]string{"-zsh"}, `"-zsh"`, "holds"}, // only shells: named anyway
	} {
		who, holds := programs(c.names)
		if who != c.who || holds != c.holds {
			t.Errorf("programs(%q) = %q, %q; want %q, %q", c.names, who, holds, c.who, c.holds)
		}
	}
}
