package tmux

import (
	"errors"
	"testing"
)

func TestParsePosition(t *testing.T) {
	for _, c := range []struct {
		why  string
		out  string
		want Position
		rest string
		err  bool
		gone bool
	}{
		{"position then rows", positionMark + "120\x1f2000\x1f5\x1f30\x1f0\x1f0\x1f$1\x1e\nrow one\nrow two\n",
			Position{HistorySize: 120, HistoryLimit: 2000, CursorY: 5, Height: 30, SessionID: "$1"}, "row one\nrow two\n", false, false},
		{"alternate screen, dead pane", positionMark + "0\x1f10\x1f0\x1f5\x1f1\x1f1\x1f$2\x1e\n",
			Position{HistoryLimit: 10, Height: 5, Alternate: true, Dead: true, SessionID: "$2"}, "", false, false},
		{"a missing pane expands to empty fields", positionMark + "\x1f\x1f\x1f\x1f\x1f\x1f\x1e\n", Position{}, "", true, true},
		{"something else first", "hello\n", Position{}, "", true, false},
		{"too few fields", positionMark + "1\x1f2\x1e\n", Position{}, "", true, false},
		{"unterminated", positionMark + "1\x1f2\x1f3\x1f4\x1f0\x1f0\x1f$1", Position{}, "", true, false},
	} {
		got, rest, err := parsePosition(c.out)
		if (err != nil) != c.err || got != c.want || rest != c.rest {
			t.Errorf("%s: got %+v %q %v; want %+v %q error:%v", c.why, got, rest, err, c.want, c.rest, c.err)
		}
		if c.gone && !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: %v does not match ErrNotFound", c.why, err)
		}
	}
	p := Position{HistorySize: 100, CursorY: 7, HistoryLimit: 5}
	if p.CursorRow() != 107 || p.Trim() != 1 {
		t.Errorf("CursorRow %d Trim %d; want 107 and 1 (a tenth, at least 1)", p.CursorRow(), p.Trim())
	}
}
