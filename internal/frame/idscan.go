package frame

import (
	"bytes"
	"encoding/json"
)

// MaxScannedID bounds the id an IDScanner keeps, in bytes of its JSON
// token. A longer id is not echoed (a refusal then carries id null); no
// client sends one.
const MaxScannedID = 64 << 10

// IDScanner finds the top-level "id" member of a JSON object fed to it in
// pieces, keeping nothing else: it is how a frame too long to be read
// whole is still answered with its own id. It checks no more of the
// frame's syntax than it needs to find members; when the top-level value
// is not an object, or a member's shape is broken, it stops looking. When
// "id" appears more than once the last one counts, as encoding/json does.
type IDScanner struct {
	state   scanState
	depth   int  // nesting inside a member value being skipped
	inStr   bool // inside a string of a skipped nested value
	esc     bool // the previous byte was a backslash inside a string
	key     []byte
	keyOver bool
	isID    bool // the member whose value is being read is "id"
	val     []byte
	valOver bool
	id      json.RawMessage // the last complete id token
}

type scanState uint8

const (
	scanStart    scanState = iota // before the top-level value
	scanKeyOrEnd                  // inside the object, before a member's key
	scanKey                       // inside a key string
	scanColon                     // after a key, before ':'
	scanValue                     // after ':', before the value
	scanString                    // inside a string value
	scanScalar                    // inside a number or literal value
	scanNested                    // inside an object or array value
	scanAfter                     // after a value, before ',' or '}'
	scanDone                      // nothing more to find
)

// maxKey bounds a key kept for comparison: longer keys are not "id" even
// with every character escaped ("\u0069\u0064" is 12 bytes).
const maxKey = 16

// Write feeds the next bytes of the frame. It never fails.
func (s *IDScanner) Write(p []byte) (int, error) {
	for i := 0; i < len(p) && s.state != scanDone; i++ {
		s.step(p[i])
	}
	return len(p), nil
}

// ID returns the id to echo: the last "id" member's token when it is one
// go-sdk echoes exactly or one a refusal may quote (as Decode would), else
// nil.
func (s *IDScanner) ID() json.RawMessage {
	if s.state == scanScalar { // a number ending the input
		s.endValue()
	}
	if s.id == nil {
		return nil
	}
	echo, _ := checkID(s.id, true, true)
	return echo
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (s *IDScanner) step(c byte) {
	switch s.state {
	case scanStart:
		switch {
		case isSpace(c):
		case c == '{':
			s.state = scanKeyOrEnd
		default:
			s.state = scanDone
		}
	case scanKeyOrEnd:
		switch {
		case isSpace(c):
		case c == '"':
			s.key, s.keyOver, s.esc = s.key[:0], false, false
			s.state = scanKey
		default: // '}' ends the object; anything else is not a member
			s.state = scanDone
		}
	case scanKey:
		if !s.esc && c == '"' {
			s.isID = s.keyIsID()
			s.state = scanColon
			return
		}
		s.esc = !s.esc && c == '\\'
		if len(s.key) < maxKey {
			s.key = append(s.key, c)
		} else {
			s.keyOver = true
		}
	case scanColon:
		switch {
		case isSpace(c):
		case c == ':':
			s.state = scanValue
		default:
			s.state = scanDone
		}
	case scanValue:
		if isSpace(c) {
			return
		}
		s.val, s.valOver, s.esc = s.val[:0], false, false
		switch c {
		case '"':
			s.keep(c)
			s.state = scanString
		case '{', '[':
			s.depth, s.inStr = 1, false
			s.state = scanNested
		default:
			s.keep(c)
			s.state = scanScalar
		}
	case scanString:
		s.keep(c)
		if !s.esc && c == '"' {
			s.endValue()
			s.state = scanAfter
			return
		}
		s.esc = !s.esc && c == '\\'
	case scanScalar:
		if isSpace(c) || c == ',' || c == '}' {
			s.endValue()
			s.state = scanAfter
			s.step(c)
			return
		}
		s.keep(c)
	case scanNested:
		s.skipNested(c)
	case scanAfter:
		switch {
		case isSpace(c):
		case c == ',':
			s.state = scanKeyOrEnd
		default:
			s.state = scanDone
		}
	}
}

// skipNested passes over an object or array value, strings included.
func (s *IDScanner) skipNested(c byte) {
	if s.inStr {
		switch {
		case s.esc:
			s.esc = false
		case c == '\\':
			s.esc = true
		case c == '"':
			s.inStr = false
		}
		return
	}
	switch c {
	case '"':
		s.inStr = true
	case '{', '[':
		s.depth++
	case '}', ']':
		if s.depth--; s.depth == 0 {
			if s.isID {
				s.id = nil // an object or array is no id
			}
			s.state = scanAfter
		}
	}
}

func (s *IDScanner) keep(c byte) {
	if !s.isID {
		return
	}
	if len(s.val) < MaxScannedID {
		s.val = append(s.val, c)
	} else {
		s.valOver = true
	}
}

func (s *IDScanner) endValue() {
	if !s.isID {
		return
	}
	s.id = nil
	if !s.valOver {
		s.id = bytes.Clone(s.val)
	}
}

// keyIsID reports whether the key just read is exactly "id", escapes
// decoded.
func (s *IDScanner) keyIsID() bool {
	if s.keyOver {
		return false
	}
	if bytes.IndexByte(s.key, '\\') < 0 {
		return string(s.key) == "id"
	}
	var k string
	quoted := append(append([]byte{'"'}, s.key...), '"')
	return json.Unmarshal(quoted, &k) == nil && k == "id"
}
