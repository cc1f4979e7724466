// Package argcheck checks a call's JSON arguments against the Go structs
// that take them: a scan of the raw text that bounds every array, object
// and string before anything is decoded (Bounds), and a decode that names
// the unknown or missing members and lists what the struct expects (List).
// Its messages name arguments and the struct's json names, never a
// protocol: the caller says which tool or request they belong to, and
// decides what the bounds are.
package argcheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// QuoteMax is how much of an argument an error text quotes.
const QuoteMax = 200

// Bounds are the limits Scan applies to raw arguments.
type Bounds struct {
	// MaxItems bounds every array and every object, at any depth.
	MaxItems int
	// MaxString is the maximum length, in bytes, of a string argument by
	// its name (an array's items by the array's name).
	MaxString map[string]int
	// MaxOtherString bounds a string not named in MaxString, and every
	// member name.
	MaxOtherString int
}

// container is an array or object being scanned by Scan.
type container struct {
	array     bool
	key       string // the argument name its values are checked under
	n         int
	expectKey bool
}

// Scan checks raw arguments without decoding them into values: every
// array and object holds at most MaxItems entries, and every string is
// within its argument's maximum (MaxString, by the nearest member name;
// an array's items by the array's). It returns the strings longer than
// QuoteMax (to shorten in error texts with ShortenQuotes). Invalid JSON is
// left for the decoder to report.
func (b Bounds) Scan(raw json.RawMessage) (long []string, err error) {
	if len(raw) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var stack []*container
	top := func() *container {
		if len(stack) == 0 {
			return nil
		}
		return stack[len(stack)-1]
	}
	valueDone := func() {
		if p := top(); p != nil && !p.array {
			p.expectKey = true
		}
	}
	for {
		tok, terr := dec.Token()
		if errors.Is(terr, io.EOF) {
			return long, nil
		}
		if terr != nil {
			return long, nil // the decoder's own message is better
		}
		p := top()
		if p != nil && !p.array && p.expectKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				valueDone()
				continue
			}
			key, _ := tok.(string)
			if p.n++; p.n > b.MaxItems {
				return long, fmt.Errorf("an object under %q has more than %d members; send at most %d", p.key, b.MaxItems, b.MaxItems)
			}
			if len(key) > b.MaxOtherString {
				return long, fmt.Errorf("an argument name %q is longer than %d bytes", ShortQuote(key), b.MaxOtherString)
			}
			p.key = key // the member's value is checked under its name
			p.expectKey = false
			continue
		}
		name := "arguments"
		if p != nil {
			name = p.key
			if p.array {
				if d, ok := tok.(json.Delim); !ok || d != ']' {
					if p.n++; p.n > b.MaxItems {
						return long, fmt.Errorf("%q has more than %d items; send at most %d", name, b.MaxItems, b.MaxItems)
					}
				}
			}
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				stack = append(stack, &container{key: name, expectKey: true})
			case '[':
				stack = append(stack, &container{array: true, key: name})
			case ']', '}':
				stack = stack[:len(stack)-1]
				valueDone()
			}
		case string:
			max, ok := b.MaxString[name]
			if !ok {
				max = b.MaxOtherString
			}
			if len(v) > max {
				return long, fmt.Errorf("%s is %d bytes long, over its limit: the most it takes is %d bytes (it starts %q); send a shorter one", name, len(v), max, v[:cutAt(v, 40)])
			}
			if len(v) > QuoteMax {
				long = append(long, v)
			}
			valueDone()
		default:
			valueDone()
		}
	}
}

// ShortenQuotes replaces, in an error text, every copy of a long argument
// (as given, or as Go's %q writes it) with its first QuoteMax bytes.
func ShortenQuotes(text string, long []string) string {
	for _, v := range long {
		short := ShortQuote(v)
		text = strings.ReplaceAll(text, v, short)
		if q := strconv.Quote(v); len(q) > 2 {
			text = strings.ReplaceAll(text, q[1:len(q)-1], strings.Trim(strconv.Quote(short), `"`))
		}
	}
	return text
}

// ShortQuote is v cut to QuoteMax bytes at a character boundary, with its
// length.
func ShortQuote(v string) string {
	if len(v) <= QuoteMax {
		return v
	}
	return fmt.Sprintf("%s… (%d bytes)", v[:cutAt(v, QuoteMax)], len(v))
}

// cutAt is the largest character boundary of v at or before n.
func cutAt(v string, n int) int {
	if len(v) <= n {
		return len(v)
	}
	for n > 0 && v[n]&0xc0 == 0x80 {
		n--
	}
	return n
}
