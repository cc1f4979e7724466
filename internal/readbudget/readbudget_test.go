package readbudget

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestKeepNewest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		why  string
		b    Budget
		in   []string
		want Trimmed
	}{
		{"everything fits", Budget{5, 100}, []string{"a", "b"}, Trimmed{Lines: []string{"a", "b"}}},
		{"line budget keeps the newest", Budget{2, 100}, []string{"a", "b", "c"}, Trimmed{Lines: []string{"b", "c"}, DroppedLines: 1, DroppedChars: 1}},
		{"a lone long line keeps its tail", Budget{5, 3}, []string{"abcdef"}, Trimmed{Lines: []string{"def"}, DroppedChars: 3}},
		{"characters are code points", Budget{5, 2}, []string{"ünï"}, Trimmed{Lines: []string{"nï"}, DroppedChars: 1}},
		{"leftover characters go to the older line's tail", Budget{5, 4}, []string{"xxabc", "de"}, Trimmed{Lines: []string{"bc", "de"}, DroppedChars: 3}},
		{"no characters left: the older line is dropped whole", Budget{5, 2}, []string{"abc", "de"}, Trimmed{Lines: []string{"de"}, DroppedLines: 1, DroppedChars: 3}},
		{"empty input", Budget{5, 5}, nil, Trimmed{Lines: []string{}}},
	} {
		got := tc.b.KeepNewest(tc.in)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: (-want +got)\n%s", tc.why, diff)
		}
	}
}

// FuzzKeepNewest checks the budget's promises on any input: never more
// lines or characters than allowed, the kept text is the input's tail, and
// the counts of what was dropped add up.
func FuzzKeepNewest(f *testing.F) {
	f.Add("a\nbb\nccc", 2, 4)
	f.Add("ünï\ncödé", 1, 3)
	f.Fuzz(func(t *testing.T, text string, lines, chars int) {
		if lines < 1 || lines > 50 || chars < 0 || chars > 500 || !utf8.ValidString(text) {
			return
		}
		in := strings.Split(text, "\n")
		got := Budget{lines, chars}.KeepNewest(in)
		total := 0
		for _, l := range got.Lines {
			total += utf8.RuneCountInString(l)
		}
		if len(got.Lines) > lines || total > chars {
			t.Fatalf("kept %d lines, %d chars; budget %d/%d", len(got.Lines), total, lines, chars)
		}
		if got.DroppedLines+len(got.Lines) != len(in) {
			t.Fatalf("dropped %d + kept %d != %d lines", got.DroppedLines, len(got.Lines), len(in))
		}
		if all := utf8.RuneCountInString(strings.Join(in, "")); total+got.DroppedChars != all {
			t.Fatalf("kept %d + dropped %d != %d chars", total, got.DroppedChars, all)
		}
		if !strings.HasSuffix(strings.Join(in, "\n"), strings.Join(got.Lines, "\n")) {
			t.Fatalf("kept %q is not the tail of %q", got.Lines, in)
		}
	})
}
