package tmux

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// EventKind names a control-mode notification: the word after the % with
// which tmux starts the line ("output" for %output).
type EventKind string

// The notifications the control client parses into fields. Any other
// %word arrives as an Event whose Kind is that word and whose Value is the
// rest of the line.
const (
	EventOutput              EventKind = "output"                // Pane, Data
	EventExtendedOutput      EventKind = "extended-output"       // Pane, Data, Value (the age in ms)
	EventExit                EventKind = "exit"                  // Reason (often empty)
	EventWindowClose         EventKind = "window-close"          // Window
	EventUnlinkedWindowClose EventKind = "unlinked-window-close" // Window
	EventWindowAdd           EventKind = "window-add"            // Window
	EventLayoutChange        EventKind = "layout-change"         // Window, Value (layout and the rest)
	EventPaneModeChanged     EventKind = "pane-mode-changed"     // Pane
	EventSessionChanged      EventKind = "session-changed"       // Session, Name
	EventSessionsChanged     EventKind = "sessions-changed"      // nothing
	EventSubscriptionChanged EventKind = "subscription-changed"  // Name, Session, Window, Pane, Value
	// EventLost is made by this package, not by tmux: the subscriber's
	// buffer was full and Lost events were dropped before this one. Whatever
	// the consumer derives from events must be re-read from tmux.
	EventLost EventKind = "lost"
)

// Event is one notification from a control connection. Only the fields its
// Kind documents are set. Data is shared between subscribers: read it, do
// not change it.
type Event struct {
	Kind    EventKind
	Pane    string // %N
	Window  string // @N
	Session string // $N
	Name    string // subscription name; session name for session-changed
	Value   string // subscription value; other kinds: see their constants
	Reason  string // %exit reason
	Data    []byte // %output bytes, unescaped
	Lost    int    // EventLost: how many events were dropped
}

// lineKind says what a protocol line outside a command block is.
type lineKind int

const (
	lineOther  lineKind = iota // not a % line: ignored outside a block
	lineBegin                  // %begin TIME NUM FLAGS
	lineEnd                    // %end TIME NUM FLAGS
	lineError                  // %error TIME NUM FLAGS
	lineNotify                 // any other %word
)

// controlLine is one parsed protocol line.
type controlLine struct {
	kind  lineKind
	guard string // "TIME NUM FLAGS" of a %begin/%end/%error line
	mine  bool   // guard flags are 1: the block answers this client's command
	event Event  // lineNotify
}

var errGuard = errors.New("malformed %begin/%end/%error line")

// parseControlLine parses one line of tmux control-mode output (without the
// newline). It never fails on an unknown notification: those come back as
// generic events. A guard line that does not have three numbers is an error,
// since the block it opens or closes could not be matched.
func parseControlLine(line []byte) (controlLine, error) {
	if len(line) < 2 || line[0] != '%' {
		return controlLine{kind: lineOther}, nil
	}
	word, rest, _ := bytes.Cut(line[1:], []byte{' '})
	switch string(word) {
	case "begin", "end", "error":
		guard, mine, ok := parseGuard(rest)
		if !ok {
			return controlLine{kind: lineOther}, fmt.Errorf("%w: %q", errGuard, line)
		}
		k := map[string]lineKind{"begin": lineBegin, "end": lineEnd, "error": lineError}[string(word)]
		return controlLine{kind: k, guard: guard, mine: mine}, nil
	}
	return controlLine{kind: lineNotify, event: parseNotification(EventKind(word), rest)}, nil
}

// parseGuard checks "TIME NUM FLAGS" and reports whether FLAGS is 1 (the
// command came from this client). The text itself is the block's key.
func parseGuard(rest []byte) (guard string, mine, ok bool) {
	f := strings.Fields(string(rest))
	if len(f) != 3 || strings.Join(f, " ") != string(rest) {
		return "", false, false
	}
	for _, s := range f {
		if !allDigits(s) {
			return "", false, false
		}
	}
	return string(rest), f[2] == "1", true
}

// isBlockEnd reports whether line closes the block whose %begin carried
// guard, and whether it is an %error. Inside a block any other line,
// including one that looks like %end with other numbers, is output.
func isBlockEnd(line []byte, guard string) (end, failed bool) {
	if rest, ok := bytes.CutPrefix(line, []byte("%end ")); ok {
		return string(rest) == guard, false
	}
	if rest, ok := bytes.CutPrefix(line, []byte("%error ")); ok {
		return string(rest) == guard, true
	}
	return false, false
}

func parseNotification(kind EventKind, rest []byte) Event {
	ev := Event{Kind: kind}
	switch kind {
	case EventOutput:
		pane, data, ok := bytes.Cut(rest, []byte{' '})
		if !ok && len(pane) > 0 {
			ok = true // "%output %3" with no data at all
		}
		if ok && isID(string(pane), '%') {
			ev.Pane, ev.Data = string(pane), unescapeOutput(data)
			return ev
		}
	case EventExtendedOutput:
		// %extended-output %P AGE ... : DATA
		head, data, ok := bytes.Cut(rest, []byte(" : "))
		f := strings.Fields(string(head))
		if ok && len(f) >= 2 && isID(f[0], '%') && allDigits(f[1]) {
			ev.Pane, ev.Value, ev.Data = f[0], f[1], unescapeOutput(data)
			return ev
		}
	case EventExit:
		ev.Reason = string(rest)
		return ev
	case EventWindowClose, EventUnlinkedWindowClose, EventWindowAdd:
		if w := string(rest); isID(w, '@') {
			ev.Window = w
			return ev
		}
	case EventLayoutChange:
		w, layout, _ := strings.Cut(string(rest), " ")
		if isID(w, '@') {
			ev.Window, ev.Value = w, layout
			return ev
		}
	case EventPaneModeChanged:
		if p := string(rest); isID(p, '%') {
			ev.Pane = p
			return ev
		}
	case EventSessionChanged:
		s, name, _ := strings.Cut(string(rest), " ")
		if isID(s, '$') {
			ev.Session, ev.Name = s, name
			return ev
		}
	case EventSessionsChanged:
		if len(rest) == 0 {
			return ev
		}
	case EventSubscriptionChanged:
		if parseSubscription(string(rest), &ev) {
			return ev
		}
	}
	// Unknown, or known but not in the shape expected: pass it through.
	return Event{Kind: kind, Value: string(rest)}
}

// parseSubscription reads "NAME $S @W IDX %P : VALUE", where tmux writes
// "-" for the window, index and pane fields that do not apply.
func parseSubscription(rest string, ev *Event) bool {
	f := strings.SplitN(rest, " ", 7)
	if len(f) < 6 || f[5] != ":" || f[0] == "" || !isID(f[1], '$') {
		return false
	}
	if (f[2] != "-" && !isID(f[2], '@')) || (f[3] != "-" && !allDigits(f[3])) || (f[4] != "-" && !isID(f[4], '%')) {
		return false
	}
	ev.Name, ev.Session = f[0], f[1]
	if f[2] != "-" {
		ev.Window = f[2]
	}
	if f[4] != "-" {
		ev.Pane = f[4]
	}
	if len(f) == 7 {
		ev.Value = f[6]
	}
	return true
}

// unescapeOutput undoes tmux's escaping of %output data: a byte below 0x20
// and the backslash are written as a backslash and three octal digits.
// "\\\\" is also read as one backslash. Anything else after a backslash (a
// truncated escape, a value over 0377, a trailing backslash) is kept as it
// is, since it cannot have come from tmux's escaper.
func unescapeOutput(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		if i+1 < len(b) && b[i+1] == '\\' {
			out = append(out, '\\')
			i++
			continue
		}
		if i+3 < len(b) && isOctal(b[i+1]) && isOctal(b[i+2]) && isOctal(b[i+3]) && b[i+1] <= '3' {
			out = append(out, (b[i+1]-'0')<<6|(b[i+2]-'0')<<3|(b[i+3]-'0'))
			i += 3
			continue
		}
		out = append(out, c)
	}
	return out
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isID reports whether s is sigil followed by digits (%3, @2, $1).
func isID(s string, sigil byte) bool { return len(s) > 1 && s[0] == sigil && allDigits(s[1:]) }

// quoteArg quotes one argument for tmux's command parser so that it arrives
// as exactly s: safe words stay bare; everything else goes in single quotes,
// where tmux expands nothing (no $VAR, ~, #comment, ; or {}); a single quote
// and control characters are written outside the quotes as \' and \ooo.
// NUL cannot be carried (tmux's strings end there) and is refused.
func quoteArg(s string) (string, error) {
	if s == "" {
		return "''", nil
	}
	if isBareWord(s) {
		return s, nil
	}
	var b strings.Builder
	open := false
	setQuote := func(want bool) {
		if open != want {
			b.WriteByte('\'')
			open = want
		}
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == 0:
			return "", fmt.Errorf("argument %q contains a NUL byte at %d, which tmux cannot take", s, i)
		case c == '\'':
			setQuote(false)
			b.WriteString(`\'`)
		case c < 0x20 || c == 0x7f:
			setQuote(false)
			fmt.Fprintf(&b, `\%03o`, c)
		default:
			setQuote(true)
			b.WriteByte(c)
		}
	}
	setQuote(false)
	return b.String(), nil
}

// isBareWord reports whether s needs no quoting: letters, digits and a few
// punctuation marks that mean nothing to tmux's parser at any position.
func isBareWord(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("-_./:@,+=", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// commandLine quotes args into one tmux command line (without the newline).
func commandLine(args []string) (string, error) {
	if len(args) == 0 {
		return "", errors.New("no tmux command given")
	}
	q := make([]string, len(args))
	for i, a := range args {
		var err error
		if q[i], err = quoteArg(a); err != nil {
			return "", err
		}
	}
	return strings.Join(q, " "), nil
}

// CommandListText quotes cmds into the text of one tmux command list, as a
// command that runs a list (if-shell's branches) takes it: each argument
// arrives as it is, and the commands are separated by " ; ".
func CommandListText(cmds ...[]string) (string, error) {
	parts := make([]string, 0, len(cmds))
	for _, c := range cmds {
		line, err := commandLine(c)
		if err != nil {
			return "", err
		}
		parts = append(parts, line)
	}
	return strings.Join(parts, " ; "), nil
}
