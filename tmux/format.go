package tmux

import (
	"fmt"
	"strconv"
	"strings"
)

// Separators are the field and record separators of one tmux invocation's
// -F and display -p output. They are printable text holding a random nonce
// made for that invocation, for two reasons:
//
//   - tmux 3.4 and 3.5a print control characters in that output as octal
//     escapes (0x1f arrives as the four characters \037) while 3.2a, 3.3a,
//     3.6a and 3.7c pass the byte through, so a control-byte separator is
//     not one separator on every version;
//   - a value can hold any printable text (a pane title a program set, a
//     directory's name), so a fixed separator can be forged by a value. A
//     value cannot hold a nonce it has never seen.
//
// Values are returned as tmux printed them: where a version escapes control
// characters, the escape is what the value holds.
type Separators struct {
	Field  string
	Record string
}

// NewSeparators makes the separators of one invocation.
func NewSeparators() Separators {
	n := newNonce()[:16]
	return Separators{Field: "<f" + n + ">", Record: "<r" + n + ">"}
}

// Format joins format variables (plain names such as pane_id) into one -F
// argument: every #{name}, separated, ended by the record separator.
func (s Separators) Format(names ...string) string {
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteString(s.Field)
		}
		b.WriteString("#{" + n + "}")
	}
	b.WriteString(s.Record)
	return b.String()
}

// Records splits output printed with these separators into its records,
// each split into fields. Text outside records (a newline tmux adds after
// each) is dropped. A record with a number of fields other than n is an
// error; the last field takes the rest of its record.
func (s Separators) Records(out string, n int) ([][]string, error) {
	var recs [][]string
	parts := strings.Split(out, s.Record)
	// What follows the last separator is not a record (a newline, or
	// nothing); anything else there means tmux printed something
	// unexpected.
	if tail := strings.TrimSpace(parts[len(parts)-1]); tail != "" {
		return nil, fmt.Errorf("tmux printed %q after its last row", clip(tail))
	}
	for _, rec := range parts[:len(parts)-1] {
		rec = strings.TrimPrefix(rec, "\n")
		values := strings.SplitN(rec, s.Field, n)
		if len(values) != n {
			return nil, fmt.Errorf("tmux row %q has %d fields; want %d", clip(rec), len(values), n)
		}
		recs = append(recs, values)
	}
	return recs, nil
}

// Last is the one record a read-back format printed (Records with exactly
// one record).
func (s Separators) Last(out string, n int) ([]string, error) {
	recs, err := s.Records(out, n)
	if err != nil {
		return nil, err
	}
	if len(recs) != 1 {
		return nil, fmt.Errorf("tmux printed %d rows where one was expected", len(recs))
	}
	return recs[0], nil
}

// clip shortens text quoted in an error.
func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// field reads one tmux format variable into a row of type T.
type field[T any] struct {
	name string
	set  func(row *T, value string) error
}

func names[T any](fields []field[T]) []string {
	n := make([]string, len(fields))
	for i, f := range fields {
		n[i] = f.name
	}
	return n
}

// format builds the -F argument for fields with seps.
func format[T any](fields []field[T], seps Separators) string {
	return seps.Format(names(fields)...)
}

// parseRows parses output printed with format(fields, seps).
func parseRows[T any](out string, fields []field[T], seps Separators) ([]T, error) {
	recs, err := seps.Records(out, len(fields))
	if err != nil {
		return nil, err
	}
	rows := make([]T, 0, len(recs))
	for _, values := range recs {
		var row T
		for i, f := range fields {
			if err := f.set(&row, values[i]); err != nil {
				return nil, fmt.Errorf("tmux field %s=%q: %w", f.name, clip(values[i]), err)
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func str[T any](name string, dst func(*T) *string) field[T] {
	return field[T]{name, func(r *T, v string) error { *dst(r) = v; return nil }}
}

func num[T any](name string, dst func(*T) *int) field[T] {
	return field[T]{name, func(r *T, v string) error {
		if v == "" {
			*dst(r) = 0
			return nil
		}
		n, err := strconv.Atoi(v)
		*dst(r) = n
		return err
	}}
}

func flag[T any](name string, dst func(*T) *bool) field[T] {
	return field[T]{name, func(r *T, v string) error {
		switch v {
		case "1":
			*dst(r) = true
		case "0", "":
			*dst(r) = false
		default:
			return fmt.Errorf("not a flag")
		}
		return nil
	}}
}

// OnOff is a tmux flag option's value.
func OnOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// ParseOnOff reads a flag option's value as show-options -v prints it.
func ParseOnOff(v string) (bool, error) {
	switch strings.TrimSpace(v) {
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	return false, fmt.Errorf("tmux reports the option as %q, neither on nor off", v)
}
