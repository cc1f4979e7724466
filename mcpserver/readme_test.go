package mcpserver

import (
	"os"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestREADMEToolTable keeps the README's tool table in step with the
// catalog: every tool once, with its toolset ("opt-in" for none).
func TestREADMEToolTable(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| (inspect|manage|execute|teardown|opt-in) \\|")
	got := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(string(readme), -1) {
		if _, dup := got[m[1]]; dup {
			t.Errorf("README lists %s twice", m[1])
		}
		got[m[1]] = m[2]
	}
	want := map[string]string{}
	for name, tl := range catalog {
		ts := tl.spec().toolset
		if ts == OptIn {
			ts = "opt-in"
		}
		want[name] = ts
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("README tool table differs from the catalog (-catalog +README); edit the table under ## Tools:\n%s", diff)
	}
}
