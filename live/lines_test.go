package live

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLines(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string
		marks    []Mark
		alt      bool
		rest     string // the unfinished line
	}{
		{name: "plain lines, CRLF as a pty writes them", in: "a\r\nbb\r\n", want: []string{"a", "bb"}},
		{name: "the unfinished line is not a line", in: "a\r\npartial", want: []string{"a"}, rest: "partial"},
		{name: "a progress bar keeps what it shows last", in: "10%\r20%\r100%\r\n", want: []string{"100%"}},
		{name: "a shorter overwrite keeps the old tail, as the screen does", in: "abcdef\rxy\n", want: []string{"xycdef"}},
		{name: "erase to the end after CR", in: "abcdef\r\x1b[Kxy\n", want: []string{"xy"}},
		{name: "colours are dropped", in: "\x1b[1;31mred\x1b[0m\n", want: []string{"red"}},
		{name: "an OSC title is dropped", in: "\x1b]0;title\x07a\n\x1b]2;t\x1b\\b\n", want: []string{"a", "b"}},
		{name: "charset designation", in: "\x1b(Ba\x1b)0b\n", want: []string{"ab"}},
		{name: "tabs expand to stops of 8", in: "a\tb\n", want: []string{"a       b"}},
		{name: "backspace overwrites", in: "ab\bc\n", want: []string{"ac"}},
		{name: "trailing spaces are trimmed", in: "a   \n", want: []string{"a"}},
		{name: "empty lines count", in: "\n\n", want: []string{"", ""}},
		{name: "utf-8", in: "héllo ✓\n", want: []string{"héllo ✓"}},
		{name: "clear", in: "a\n\x1b[H\x1b[2J\x1b[3Jb\n", want: []string{"a", "b"},
			marks: []Mark{{1, MarkClear}, {1, MarkClearHist}}},
		{name: "clear erases the unfinished line", in: "a\npart\x1b[H\x1b[2Jb\n", want: []string{"a", "b"},
			marks: []Mark{{1, MarkClear}}},
		{name: "home and erase below is a clear (clear where TERM has no E3)", in: "a\n\x1b[H\x1b[Jb\n\x1b[5;1H\x1b[Jc\n", want: []string{"a", "b", "c"},
			marks: []Mark{{1, MarkClear}}},
		{name: "reset", in: "a\nx\x1bcb\n", want: []string{"a", "b"}, marks: []Mark{{1, MarkReset}}},
		{name: "alternate screen output is not lines", in: "a\n\x1b[?1049h\x1b[Hdrawn\r\nmore\r\n\x1b[?1049lb\n",
			want: []string{"a", "b"}, marks: []Mark{{1, MarkAltOn}, {1, MarkAltOff}}},
		{name: "alternate screen 47 and 1047, among other modes", in: "\x1b[?1;47hx\n\x1b[?1047l\x1b[?1047hy\n",
			want: []string{}, alt: true, marks: []Mark{{0, MarkAltOn}, {0, MarkAltOff}, {0, MarkAltOn}}},
		{name: "reset leaves the alternate screen", in: "\x1b[?1049hx\n\x1bcb\n", want: []string{"b"},
			marks: []Mark{{0, MarkAltOn}, {0, MarkAltOff}, {0, MarkReset}}},
		{name: "a private mode that is not a screen", in: "\x1b[?25la\n\x1b[?25h", want: []string{"a"}},
		{name: "cursor forward pads", in: "a\x1b[3Cb\n", want: []string{"a   b"}},
		{name: "NEL finishes a line", in: "a\x1bEb\n", want: []string{"a", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Every cut of the stream into two blocks gives the same lines:
			// tmux's blocks may end inside an escape or a character.
			for cut := 0; cut <= len(tc.in); cut++ {
				l := NewLines(100, 1<<20)
				l.Feed([]byte(tc.in[:cut]))
				l.Feed([]byte(tc.in[cut:]))
				got := l.Get(1, l.Newest())
				if got == nil {
					got = []string{}
				}
				want := tc.want
				if want == nil {
					want = []string{}
				}
				if d := cmp.Diff(want, got); d != "" {
					t.Fatalf("cut at %d: lines (-want +got):\n%s", cut, d)
				}
				if d := cmp.Diff(tc.marks, l.Marks(0)); d != "" {
					t.Fatalf("cut at %d: marks (-want +got):\n%s", cut, d)
				}
				if l.Alternate() != tc.alt || l.Unfinished() != tc.rest {
					t.Fatalf("cut at %d: alternate %v, unfinished %q; want %v, %q", cut, l.Alternate(), l.Unfinished(), tc.alt, tc.rest)
				}
			}
		})
	}
}

// Repeating lines of any period are counted one by one: the count does
// not depend on what the lines say.
func TestLinesRepeatingPeriods(t *testing.T) {
	for _, period := range []int{1, 2, 3, 7} {
		l := NewLines(50, 1<<20)
		var b strings.Builder
		const n = 10000
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "row %d\r\n", i%period)
		}
		s := b.String()
		for len(s) > 0 { // blocks of 8192 bytes, as tmux writes them
			k := min(len(s), 8192)
			l.Feed([]byte(s[:k]))
			s = s[k:]
		}
		if l.Newest() != n || l.Oldest() != n-49 {
			t.Errorf("period %d: newest %d, oldest %d; want %d, %d", period, l.Newest(), l.Oldest(), n, n-49)
		}
		if got := l.Get(n, n); len(got) != 1 || got[0] != fmt.Sprintf("row %d", (n-1)%period) {
			t.Errorf("period %d: last line %q", period, got)
		}
	}
}

func TestLinesRingBounds(t *testing.T) {
	l := NewLines(3000, 1<<30)
	for i := 1; i <= 5000; i++ {
		l.Feed([]byte(fmt.Sprintf("%d\n", i)))
	}
	if l.Newest() != 5000 || l.Oldest() != 2001 {
		t.Fatalf("newest %d oldest %d; want 5000 2001", l.Newest(), l.Oldest())
	}
	got := l.Get(1, 2002)
	if d := cmp.Diff([]string{"2001", "2002"}, got); d != "" {
		t.Errorf("Get clamps to the kept lines (-want +got):\n%s", d)
	}
	// RuneCount counts what Get returns.
	for _, r := range [][2]uint64{{1, 2002}, {4990, 6000}, {3000, 2999}, {1, 1}} {
		want := 0
		for _, line := range l.Get(r[0], r[1]) {
			want += len(line)
		}
		if got := l.RuneCount(r[0], r[1]); got != want {
			t.Errorf("RuneCount(%d, %d) = %d; want %d", r[0], r[1], got, want)
		}
	}
	l.Feed([]byte("é—x\n"))
	if got := l.RuneCount(5001, 5001); got != 3 {
		t.Errorf("RuneCount of %q = %d; want 3 characters", l.Get(5001, 5001), got)
	}
	// The byte bound drops old lines too, but keeps the newest.
	l = NewLines(1000, 100)
	l.Feed([]byte(strings.Repeat("x", 500) + "\nab\ncd\n"))
	if l.Newest() != 3 || l.Oldest() < 2 {
		t.Errorf("byte bound: newest %d oldest %d; want 3 and at least 2", l.Newest(), l.Oldest())
	}
}

func TestLinesOnLine(t *testing.T) {
	l := NewLines(10, 1<<20)
	var got []string
	remove := l.OnLine(func(n uint64, line string) { got = append(got, fmt.Sprintf("%d:%s", n, line)) })
	l.Feed([]byte("a\n\x1b[?1049hz\n\x1b[?1049lb\n"))
	remove()
	l.Feed([]byte("c\n"))
	if d := cmp.Diff([]string{"1:a", "2:b"}, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestLinesLongLineIsBounded(t *testing.T) {
	l := NewLines(10, 1<<30)
	chunk := []byte(strings.Repeat("x", 8192))
	for range 100 {
		l.Feed(chunk)
	}
	l.Feed([]byte("\x1b[200Cy\n"))
	if got := l.Get(1, 1); len(got) != 1 || len(got[0]) != MaxLineRunes {
		t.Errorf("a line of 819,200 characters kept %d; want %d", len(got[0]), MaxLineRunes)
	}
	// Every character past the bound is counted: the x's and the y.
	if got, want := l.Cut(1, 1), 819200+1-MaxLineRunes; got != want {
		t.Errorf("Cut of the long line = %d; want %d", got, want)
	}
}

func TestLinesCut(t *testing.T) {
	long := strings.Repeat("x", MaxLineRunes+100)
	cases := []struct {
		name, feed string
		cut        []int // per finished line
	}{
		{"short lines lose nothing", "a\nb\n", []int{0, 0}},
		{"one long line, then a summary", long + "\nSUMMARY\n", []int{100, 0}},
		{"a progress bar redrawn past the bound counts its widest pass", long + "\r" + strings.Repeat("y", MaxLineRunes+40) + "\n", []int{100}},
		{"erasing the line forgets what was past the bound", long + "\r\x1b[Kdone\n", []int{0}},
		{"a clear forgets the unfinished line", long + "\x1b[H\x1b[2Jafter\n", []int{0}},
		{"the alternate screen is not lines", "\x1b[?1049h" + long + "\n\x1b[?1049lz\n", []int{0}},
	}
	for _, c := range cases {
		l := NewLines(10, 1<<30)
		l.Feed([]byte(c.feed))
		if l.Newest() != uint64(len(c.cut)) {
			t.Errorf("%s: %d lines; want %d", c.name, l.Newest(), len(c.cut))
			continue
		}
		for i, want := range c.cut {
			if got := l.Cut(uint64(i+1), uint64(i+1)); got != want {
				t.Errorf("%s: line %d lost %d characters; want %d", c.name, i+1, got, want)
			}
		}
	}
	// Cuts go with the lines the ring drops.
	l := NewLines(2, 1<<30)
	l.Feed([]byte(long + "\na\nb\n"))
	if got := l.Cut(1, 3); got != 0 || len(l.cuts) != 0 {
		t.Errorf("after line 1 left the ring: Cut %d, %d cuts kept; want none", got, len(l.cuts))
	}
}

func TestLinesSeed(t *testing.T) {
	l := NewLines(10, 1<<20)
	l.Seed("$", 2, false)
	l.Feed([]byte("echo hi\r\nhi\r\n"))
	if got := l.Get(1, 2); fmt.Sprint(got) != "[$ echo hi hi]" {
		t.Errorf("after a seed: %q; want the prompt kept", got)
	}
	l.Seed("x", 0, false) // too late: a line finished
	if l.Unfinished() != "" {
		t.Errorf("a late seed took: %q", l.Unfinished())
	}
	a := NewLines(10, 1<<20)
	a.Seed("", 0, true)
	a.Feed([]byte("drawn\r\n\x1b[?1049lok\n"))
	if got := a.Get(1, 1); fmt.Sprint(got) != "[ok]" || len(a.Marks(0)) != 1 {
		t.Errorf("seeded on the alternate screen: %q %v; want [ok] and one mark", got, a.Marks(0))
	}
}

// Wide characters take two columns, as in the terminal, so tabs and
// overwrites land where tmux puts them.
func TestLinesWideCharacters(t *testing.T) {
	for _, c := range []struct{ feed, want string }{
		{"漢\tb\n", "漢      b"},
		{"a\tb\n", "a       b"},
		{"ab\r漢\n", "漢"},
		{"漢x\rz\n", "z x"},
		{"x漢\r\x1b[2Cy\n", "x y"},
		{"漢字\r\x1b[1Cq\n", " q字"},
	} {
		l := NewLines(10, 1<<20)
		l.Feed([]byte(c.feed))
		if got := l.Get(1, 1); len(got) != 1 || got[0] != c.want {
			t.Errorf("%q: got %q; want %q", c.feed, got, c.want)
		}
	}
	l := NewLines(10, 1<<20)
	l.Seed("漢\tb", 9, false)
	l.Feed([]byte("!\n"))
	if got := l.Get(1, 1); len(got) != 1 || got[0] != "漢      b!" {
		t.Errorf("seeded with a tab and a wide character: got %q", got)
	}
}
