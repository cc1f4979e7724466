package tmux

import "testing"

func TestExpandTabs(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"no tab", "no tab"},
		{"a\tb", "a       b"},
		{"\tx", "        x"},
		{"1234567\tx", "1234567 x"},
		{"12345678\tx", "12345678        x"},
		{"a\tb\nc\td", "a       b\nc       d"},
		// A wide character takes two columns, so the tab is shorter.
		{"漢\tb", "漢      b"},
		{"é\tb", "é       b"},
		// The spaces a tab ends a line with are trimmed, as a capture's.
		{"trail\t\nnext\t", "trail\nnext"},
		{"keep  \nx", "keep  \nx"},
	} {
		if got := ExpandTabs(c.in); got != c.want {
			t.Errorf("ExpandTabs(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}

func TestCellWidth(t *testing.T) {
	for r, want := range map[rune]int{'a': 1, 'é': 1, '漢': 2, 'ア': 2, '한': 2, '😀': 2, 'Ａ': 2, '─': 1} {
		if got := CellWidth(r); got != want {
			t.Errorf("CellWidth(%q) = %d; want %d", r, got, want)
		}
	}
}

func TestWideRangesInOrder(t *testing.T) {
	for i, w := range wideRanges {
		if w.lo > w.hi || (i > 0 && w.lo <= wideRanges[i-1].hi) {
			t.Errorf("range %d (%#x-%#x) is empty or not after the one before", i, w.lo, w.hi)
		}
	}
}
