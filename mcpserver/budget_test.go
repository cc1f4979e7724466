package mcpserver

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestKeepNewest(t *testing.T) {
	for _, tc := range []struct {
		why  string
		b    budget
		in   []string
		want trimmed
	}{
		{"everything fits", budget{5, 100}, []string{"a", "b"}, trimmed{Lines: []string{"a", "b"}}},
		{"line budget keeps the newest", budget{2, 100}, []string{"a", "b", "c"}, trimmed{Lines: []string{"b", "c"}, DroppedLines: 1, DroppedChars: 1}},
		{"a lone long line keeps its tail", budget{5, 3}, []string{"abcdef"}, trimmed{Lines: []string{"def"}, DroppedChars: 3}},
		{"characters are code points", budget{5, 2}, []string{"ünï"}, trimmed{Lines: []string{"nï"}, DroppedChars: 1}},
		{"leftover characters go to the older line's tail", budget{5, 4}, []string{"xxabc", "de"}, trimmed{Lines: []string{"bc", "de"}, DroppedChars: 3}},
		{"no characters left: the older line is dropped whole", budget{5, 2}, []string{"abc", "de"}, trimmed{Lines: []string{"de"}, DroppedLines: 1, DroppedChars: 3}},
		{"empty input", budget{5, 5}, nil, trimmed{Lines: []string{}}},
	} {
		got := tc.b.keepNewest(tc.in)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: (-want +got)\n%s", tc.why, diff)
		}
	}
}

func TestSplitCaptureDropsBlankBottomRows(t *testing.T) {
	got := splitCapture("a\n\nb\n   \n\n")
	if strings.Join(got, "|") != "a||b" {
		t.Errorf("splitCapture = %q", got)
	}
}
