package live

import (
	"strings"
	"unicode/utf8"

	"github.com/libtmux/libtmux-mcp/tmux"
)

// Lines turns a pane's output stream (the bytes of its %output
// notifications, in order, cut anywhere) into finished lines: a line is
// finished when the pane prints a line feed for it, and it is kept as the
// text it shows then (carriage returns overwrite from the left, as progress
// bars do; escape sequences are read and dropped; tabs expand to stops of
// 8). Lines are numbered from 1 in the order they finish, so the number of
// the newest is the count of lines the pane finished since the stream was
// first fed; the newest of them are kept in a ring bounded by lines and
// bytes. What a full-screen program draws on the alternate screen is not
// lines and is neither counted nor kept. Clears and switches of screen are
// recorded as marks between lines.
//
// Lines is not safe for concurrent use; View guards one.
type Lines struct {
	maxLines, maxBytes int

	// parser state; it survives between Feed calls, so a block boundary
	// may fall inside an escape sequence or a character.
	state  parseState
	params []byte // CSI parameter and intermediate bytes, bounded
	oscEsc bool   // an ESC inside a string sequence (ST is ESC \)
	utf    []byte // the start of a multi-byte character
	cur    []rune // the unfinished line
	ascii  []byte // scratch for text
	col    int    // where the next character goes in cur
	alt    bool   // the alternate screen is on
	home   bool   // the cursor was sent home and nothing written since
	newest uint64 // number of the newest finished line (0: none yet)
	ring   []string
	head   int // index in ring of the oldest kept line
	kept   int // lines in ring
	bytes  int // bytes in ring
	marks  []Mark
	onLine []*lineHook
	// beyond counts the characters written past MaxLineRunes since the
	// cursor was last inside the line; widest is the most of them in the
	// unfinished line, the characters its finished text will lack.
	beyond, widest int
	cuts           []lineCut // kept lines that lost characters, oldest first
}

// lineCut records a finished line that lost characters to MaxLineRunes.
type lineCut struct {
	n     uint64 // the line's number
	runes int    // characters written past the limit
}

type lineHook struct{ fn func(n uint64, line string) }

// Mark is something that happened to the pane between two lines: after
// line After (its number) and before the next.
type Mark struct {
	After uint64
	Kind  MarkKind
}

// MarkKind names what a Mark records.
type MarkKind string

// The marks Lines records.
const (
	MarkClear     MarkKind = "clear"      // the screen was erased (ESC[2J)
	MarkClearHist MarkKind = "clear-hist" // the history was erased (ESC[3J)
	MarkReset     MarkKind = "reset"      // the terminal was reset (ESC c)
	MarkAltOn     MarkKind = "alt-on"     // a full-screen program took the alternate screen
	MarkAltOff    MarkKind = "alt-off"    // and gave it back
)

// MaxLineRunes bounds the unfinished line: characters written past it are
// dropped (a line with no line feed cannot grow without limit) and counted
// (see Cut).
const MaxLineRunes = 1 << 16

// maxMarks bounds the marks kept.
const maxMarks = 64

type parseState uint8

const (
	stGround   parseState = iota
	stEsc                 // after ESC
	stEscInter            // ESC and intermediates (charset designations): until a final byte
	stCSI                 // ESC [
	stString              // OSC, DCS, SOS, PM, APC: until BEL or ESC \
)

// NewLines returns a ring that keeps at most maxLines lines and about
// maxBytes bytes of them (at least the newest line).
func NewLines(maxLines, maxBytes int) *Lines {
	return &Lines{maxLines: max(maxLines, 1), maxBytes: max(maxBytes, 1)}
}

// Newest is the number of the newest finished line: how many lines the
// pane finished since the stream was first fed.
func (l *Lines) Newest() uint64 { return l.newest }

// Oldest is the number of the oldest line still kept (Newest()+1 when none
// is).
func (l *Lines) Oldest() uint64 { return l.newest - uint64(l.kept) + 1 }

// Alternate reports whether the alternate screen is on.
func (l *Lines) Alternate() bool { return l.alt }

// Unfinished is the text of the line being written (trailing spaces
// trimmed).
func (l *Lines) Unfinished() string { return strings.TrimRight(cellsText(l.cur), " ") }

// wideTail fills the second column of a wide character in the unfinished
// line, so that columns stay the terminal's (tmux.CellWidth); it is never
// part of a line's text.
const wideTail rune = 0

// cellsText is the text of cells, without wideTail.
func cellsText(cells []rune) string {
	var b strings.Builder
	b.Grow(len(cells))
	for _, r := range cells {
		if r != wideTail {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Seed sets the unfinished line to text with the cursor at col, and the
// screen in use, as the pane shows them: for a stream fed from the middle,
// the start of the line it joined. Only a stream that finished no line yet
// takes it.
func (l *Lines) Seed(text string, col int, alt bool) {
	if l.newest != 0 {
		return
	}
	l.alt = alt
	if alt {
		return
	}
	l.cur = l.cur[:0]
	for _, r := range tmux.ExpandTabs(text) {
		l.cur = append(l.cur, r)
		if tmux.CellWidth(r) == 2 {
			l.cur = append(l.cur, wideTail)
		}
	}
	l.col = min(col, MaxLineRunes)
}

// Get returns the kept lines numbered from..to (inclusive), clamped to
// those kept.
func (l *Lines) Get(from, to uint64) []string {
	from = max(from, l.Oldest())
	to = min(to, l.newest)
	if from > to {
		return nil
	}
	out := make([]string, 0, to-from+1)
	for n := from; n <= to; n++ {
		out = append(out, l.ring[(l.head+int(n-l.Oldest()))%len(l.ring)])
	}
	return out
}

// RuneCount is the number of characters in the kept lines numbered
// from..to (inclusive), clamped to those kept: what Get would return,
// counted without a copy.
func (l *Lines) RuneCount(from, to uint64) int {
	from = max(from, l.Oldest())
	to = min(to, l.newest)
	n := 0
	for i := from; i <= to && from <= to; i++ {
		n += utf8.RuneCountInString(l.ring[(l.head+int(i-l.Oldest()))%len(l.ring)])
	}
	return n
}

// Cut is the number of characters the kept lines numbered from..to
// (inclusive) lost to the bound of one line (MaxLineRunes): written to the
// pane, and not in what Get returns.
func (l *Lines) Cut(from, to uint64) int {
	n := 0
	for _, c := range l.cuts {
		if c.n >= from && c.n <= to && c.n >= l.Oldest() {
			n += c.runes
		}
	}
	return n
}

// Marks returns the recorded marks at or after line after (After >=
// after), oldest first; only the newest maxMarks are remembered.
func (l *Lines) Marks(after uint64) []Mark {
	var out []Mark
	for _, m := range l.marks {
		if m.After >= after {
			out = append(out, m)
		}
	}
	return out
}

// OnLine calls fn with each line as it finishes (not for alternate-screen
// output), until fn is removed by the returned function. fn runs inside
// Feed: it must be quick and must not call back into l.
func (l *Lines) OnLine(fn func(n uint64, line string)) (remove func()) {
	h := &lineHook{fn: fn}
	l.onLine = append(l.onLine, h)
	return func() {
		for i, o := range l.onLine {
			if o == h {
				l.onLine = append(l.onLine[:i:i], l.onLine[i+1:]...)
				return
			}
		}
	}
}

// Feed reads the next bytes of the stream.
func (l *Lines) Feed(data []byte) {
	for _, c := range data {
		switch l.state {
		case stGround:
			l.ground(c)
		case stEsc:
			l.esc(c)
		case stEscInter:
			if c >= 0x30 && c <= 0x7e {
				l.state = stGround
			} else if c < 0x20 || c > 0x7e {
				l.state = stGround
			}
		case stCSI:
			switch {
			case c >= 0x40 && c <= 0x7e:
				l.csi(c)
				l.state = stGround
			case c >= 0x20 && c <= 0x3f:
				if len(l.params) < 64 {
					l.params = append(l.params, c)
				}
			case c == 0x1b:
				l.state = stEsc
			case c == 0x18 || c == 0x1a: // CAN, SUB abort the sequence
				l.state = stGround
			default:
				// A control byte inside a sequence acts at once (terminals
				// do so) and the sequence goes on.
				l.control(c)
			}
		case stString:
			switch {
			case c == 0x07:
				l.state = stGround
			case l.oscEsc && c == '\\':
				l.state = stGround
			case c == 0x18 || c == 0x1a:
				l.state = stGround
			}
			l.oscEsc = c == 0x1b
		}
	}
}

func (l *Lines) ground(c byte) {
	if c < 0x20 || c == 0x7f {
		l.control(c)
		return
	}
	if c < 0x80 {
		l.utf = l.utf[:0]
		l.put(rune(c))
		return
	}
	// UTF-8: gather the bytes of one character.
	if utf8.RuneStart(c) {
		l.utf = append(l.utf[:0], c)
	} else if len(l.utf) > 0 && len(l.utf) < utf8.UTFMax {
		l.utf = append(l.utf, c)
	} else {
		l.utf = l.utf[:0]
		l.put(utf8.RuneError)
		return
	}
	if utf8.FullRune(l.utf) {
		r, _ := utf8.DecodeRune(l.utf)
		l.utf = l.utf[:0]
		l.put(r)
	}
}

// control acts on a C0 control byte.
func (l *Lines) control(c byte) {
	switch c {
	case '\n', 0x0b, 0x0c: // LF, VT, FF all move down a line
		l.home = false
		l.finish()
	case '\r':
		l.col = 0
	case '\b':
		if l.col > 0 {
			l.col--
		}
	case '\t':
		l.col = (l.col/8 + 1) * 8
	case 0x1b:
		l.state = stEsc
		l.params = l.params[:0]
	}
}

// put writes r at the column, overwriting what is there.
func (l *Lines) put(r rune) {
	l.home = false
	if l.alt {
		return
	}
	if l.col >= MaxLineRunes {
		l.beyond++
		l.widest = max(l.widest, l.beyond)
		return
	}
	l.beyond = 0
	for len(l.cur) < l.col {
		l.cur = append(l.cur, ' ')
	}
	w := 1
	if r >= 0x1100 {
		w = tmux.CellWidth(r)
	}
	l.set(l.col, r)
	if w == 2 {
		l.set(l.col+1, wideTail)
	}
	l.col += w
}

// set writes cell i of the unfinished line (at most one past its end); a
// wide character it cuts in half leaves a space.
func (l *Lines) set(i int, r rune) {
	if i == len(l.cur) {
		l.cur = append(l.cur, r)
		return
	}
	if old := l.cur[i]; old == wideTail && r != wideTail && i > 0 {
		l.cur[i-1] = ' ' // the second half of a wide character
	} else if old != wideTail && i+1 < len(l.cur) && l.cur[i+1] == wideTail {
		l.cur[i+1] = ' ' // the first half of one
	}
	l.cur[i] = r
}

func (l *Lines) esc(c byte) {
	l.state = stGround
	switch c {
	case '[':
		l.state = stCSI
		l.params = l.params[:0]
	case ']', 'P', 'X', '^', '_':
		l.state = stString
		l.oscEsc = false
	case 'c': // RIS: full reset
		l.discard()
		if l.alt {
			l.alt = false
			l.mark(MarkAltOff)
		}
		l.mark(MarkReset)
	case 'E': // NEL
		l.finish()
	case 'D': // IND: down a line, same column
		col := l.col
		l.finish()
		l.col = col
	default:
		if c >= 0x20 && c <= 0x2f {
			l.state = stEscInter
		}
	}
}

// csi acts on a control sequence whose final byte is f.
func (l *Lines) csi(f byte) {
	p := string(l.params)
	wasHome := l.home
	l.home = false
	private := strings.HasPrefix(p, "?")
	switch f {
	case 'J':
		switch {
		case p == "2", (p == "" || p == "0") && wasHome:
			// The whole screen, or all of it below home.
			l.discard()
			l.mark(MarkClear)
		case p == "3":
			l.mark(MarkClearHist)
		}
	case 'H', 'f': // cursor position: a new place on the screen
		l.discard()
		row, colp, _ := strings.Cut(p, ";")
		l.col = max(atoi(colp, 1)-1, 0)
		l.home = atoi(row, 1) == 1 && l.col == 0
	case 'G', '`':
		l.col = max(atoi(p, 1)-1, 0)
	case 'C', 'a':
		l.col += max(atoi(p, 1), 1)
	case 'D':
		l.col = max(l.col-max(atoi(p, 1), 1), 0)
	case 'K':
		switch p {
		case "", "0":
			if l.col < len(l.cur) {
				l.cur = l.cur[:l.col]
				l.beyond, l.widest = 0, 0 // what was past the limit is erased too
			}
		case "1":
			for i := 0; i <= l.col && i < len(l.cur); i++ {
				l.cur[i] = ' '
			}
		case "2":
			l.cur = l.cur[:0]
			l.beyond, l.widest = 0, 0
		}
	case 'X': // erase characters
		for i := l.col; i < l.col+max(atoi(p, 1), 1) && i < len(l.cur); i++ {
			l.cur[i] = ' '
		}
	case 'h', 'l':
		if !private {
			return
		}
		for _, m := range strings.Split(p[1:], ";") {
			switch m {
			case "1049", "1047", "47":
				on := f == 'h'
				if on != l.alt {
					if on {
						l.mark(MarkAltOn)
					} else {
						l.mark(MarkAltOff)
					}
					l.alt = on
				}
			}
		}
	}
}

// discard forgets the unfinished line: the screen it was on was erased or
// left.
func (l *Lines) discard() {
	if l.alt {
		return
	}
	l.cur, l.col = l.cur[:0], 0
	l.beyond, l.widest = 0, 0
}

func (l *Lines) mark(k MarkKind) {
	m := Mark{After: l.newest, Kind: k}
	if len(l.marks) == maxMarks {
		copy(l.marks, l.marks[1:])
		l.marks = l.marks[:maxMarks-1]
	}
	l.marks = append(l.marks, m)
}

// finish ends the unfinished line (on the alternate screen, a line feed
// only moves the cursor).
func (l *Lines) finish() {
	if l.alt {
		l.col = 0
		return
	}
	line := l.text()
	l.cur, l.col = l.cur[:0], 0
	l.newest++
	if l.widest > 0 {
		l.cuts = append(l.cuts, lineCut{n: l.newest, runes: l.widest})
		l.beyond, l.widest = 0, 0
	}
	if l.ring == nil {
		l.ring = make([]string, min(l.maxLines, 1024))
	}
	if l.kept == len(l.ring) && len(l.ring) < l.maxLines {
		// Grow the ring, keeping order.
		bigger := make([]string, min(len(l.ring)*2, l.maxLines))
		for i := 0; i < l.kept; i++ {
			bigger[i] = l.ring[(l.head+i)%len(l.ring)]
		}
		l.ring, l.head = bigger, 0
	}
	if l.kept == len(l.ring) {
		l.drop()
	}
	l.ring[(l.head+l.kept)%len(l.ring)] = line
	l.kept++
	l.bytes += len(line) + 16
	for l.bytes > l.maxBytes && l.kept > 1 {
		l.drop()
	}
	for _, h := range l.onLine {
		h.fn(l.newest, line)
	}
}

// text is the unfinished line with its trailing spaces trimmed. A line of
// ASCII, the common case, is converted a byte a rune.
func (l *Lines) text() string {
	n := len(l.cur)
	for n > 0 && l.cur[n-1] == ' ' {
		n--
	}
	b := l.ascii[:0]
	for _, r := range l.cur[:n] {
		if r >= utf8.RuneSelf || r == wideTail {
			return cellsText(l.cur[:n])
		}
		b = append(b, byte(r))
	}
	l.ascii = b
	return string(b)
}

// drop forgets the oldest kept line.
func (l *Lines) drop() {
	l.bytes -= len(l.ring[l.head]) + 16
	l.ring[l.head] = ""
	l.head = (l.head + 1) % len(l.ring)
	l.kept--
	for len(l.cuts) > 0 && l.cuts[0].n < l.Oldest() {
		l.cuts = l.cuts[1:]
	}
}

// atoi reads a decimal parameter; def when empty or not a number.
func atoi(s string, def int) int {
	if s == "" {
		return def
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' || n > 1<<20 {
			return def
		}
		n = n*10 + int(s[i]-'0')
	}
	return n
}
