package tmux

import (
	"errors"
	"testing"
)

func TestParsePosition(t *testing.T) {
	seps := Separators{Field: "<F>", Record: "<R>"}
	positionMark := "POS<F>"
	for _, c := range []struct {
		why  string
		out  string
		want Position
		rest string
		err  bool
		gone bool
	}{
		{"position then rows", positionMark + "120<F>2000<F>5<F>30<F>0<F>0<F>$1<R>\nrow one\nrow two\n",
			Position{HistorySize: 120, HistoryLimit: 2000, CursorY: 5, Height: 30, SessionID: "$1"}, "row one\nrow two\n", false, false},
		{"alternate screen, dead pane", positionMark + "0<F>10<F>0<F>5<F>1<F>1<F>$2<R>\n",
			Position{HistoryLimit: 10, Height: 5, Alternate: true, Dead: true, SessionID: "$2"}, "", false, false},
		{"a missing pane expands to empty fields", positionMark + "<F><F><F><F><F><F><R>\n", Position{}, "", true, true},
		{"something else first", "hello\n", Position{}, "", true, false},
		{"too few fields", positionMark + "1<F>2<R>\n", Position{}, "", true, false},
		{"unterminated", positionMark + "1<F>2<F>3<F>4<F>0<F>0<F>$1", Position{}, "", true, false},
	} {
		got, rest, err := parsePosition(c.out, seps)
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
