package tmux

import (
	"fmt"
	"strconv"
	"strings"
)

// Field and record separators for -F output. tmux stores names and titles
// with control characters made visible (session and window names) or refuses
// them (pane titles), so these bytes cannot come from those values. The last
// field of a row may be free text (a path) and takes the rest of the record.
const (
	fieldSep  = "\x1f"
	recordSep = "\x1e"
)

// field reads one tmux format variable into a row of type T.
type field[T any] struct {
	name string
	set  func(row *T, value string) error
}

// format builds the -F argument for fields: every variable, separated, with
// a record terminator so a value that contains a newline cannot split a row.
func format[T any](fields []field[T]) string {
	var b strings.Builder
	for i, f := range fields {
		if i > 0 {
			b.WriteString(fieldSep)
		}
		b.WriteString("#{" + f.name + "}")
	}
	b.WriteString(recordSep)
	return b.String()
}

// parseRows parses output printed with format(fields).
func parseRows[T any](out string, fields []field[T]) ([]T, error) {
	var rows []T
	for _, rec := range strings.Split(out, recordSep) {
		rec = strings.TrimPrefix(rec, "\n")
		if rec == "" {
			continue
		}
		values := strings.SplitN(rec, fieldSep, len(fields))
		if len(values) != len(fields) {
			return nil, fmt.Errorf("tmux row %q has %d fields; want %d", rec, len(values), len(fields))
		}
		var row T
		for i, f := range fields {
			if err := f.set(&row, values[i]); err != nil {
				return nil, fmt.Errorf("tmux field %s=%q: %w", f.name, values[i], err)
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
