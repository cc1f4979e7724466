package argcheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// List is what Decode knows of a struct's arguments: their json names, and
// which of them are required. Read it; do not change it (Of shares it).
type List struct {
	Names    []string // sorted
	Required []string // sorted
}

// lists caches each argument type's List.
var lists sync.Map // reflect.Type -> *List

// Of reads In's argument names from its json tags, once: a field without
// omitempty or omitzero is required.
func Of[In any]() *List {
	rt := reflect.TypeFor[In]()
	if l, ok := lists.Load(rt); ok {
		return l.(*List)
	}
	l := &List{Names: []string{}}
	l.add(rt)
	slices.Sort(l.Names)
	slices.Sort(l.Required)
	got, _ := lists.LoadOrStore(rt, l)
	return got.(*List)
}

// add adds the arguments of struct type rt, those of its embedded structs
// included, as encoding/json flattens them.
func (l *List) add(rt reflect.Type) {
	for f := range rt.Fields() {
		tag, hasTag := f.Tag.Lookup("json")
		name, opts, _ := strings.Cut(tag, ",")
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case name == "-":
			continue
		case f.Anonymous && ft.Kind() == reflect.Struct && name == "":
			l.add(ft)
			continue
		case !f.IsExported():
			continue
		case !hasTag || name == "":
			name = f.Name
		}
		l.Names = append(l.Names, name)
		o := strings.Split(opts, ",")
		if !slices.Contains(o, "omitempty") && !slices.Contains(o, "omitzero") {
			l.Required = append(l.Required, name)
		}
	}
}

// Decode checks raw against l and decodes it into in (a pointer to the
// struct l was read from). Every mistake gets one message style, beginning
// with who (the name of what takes the arguments): what is wrong, then the
// arguments it takes. Empty or null raw is an empty object.
func (l *List) Decode(who string, raw json.RawMessage, in any) error {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		raw = []byte("{}")
	}
	var args map[string]json.RawMessage
	if err := json.Unmarshal(raw, &args); err != nil {
		return fmt.Errorf("%s takes its arguments as a JSON object%s", who, l.describe())
	}
	for _, name := range slices.Sorted(maps.Keys(args)) {
		if !slices.Contains(l.Names, name) {
			if len(l.Names) == 0 {
				return fmt.Errorf("%s takes no arguments; remove %q", who, name)
			}
			return fmt.Errorf("%s has no argument %q%s", who, name, l.describe())
		}
	}
	var missing []string
	for _, name := range l.Required {
		if v, ok := args[name]; !ok || bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s needs %s%s", who, joinAnd(missing), l.describe())
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(in); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te) && te.Field != "":
			return fmt.Errorf("%s: %s must be %s, not %s%s", who, te.Field, jsonKind(te.Type), te.Value, l.describe())
		case errors.As(err, &te):
			return fmt.Errorf("%s: a value is %s where %s is expected%s", who, te.Value, jsonKind(te.Type), l.describe())
		}
		// Never the decoder's own words (they name Go types).
		return fmt.Errorf("%s: the arguments do not fit its parameters%s", who, l.describe())
	}
	return nil
}

// describe is the tail of an argument error: the arguments l takes.
func (l *List) describe() string {
	switch {
	case len(l.Names) == 0:
		return "; it takes no arguments"
	case len(l.Required) == 0:
		return "; its arguments are " + strings.Join(l.Names, ", ")
	}
	return "; its arguments are " + strings.Join(l.Names, ", ") + " (required: " + strings.Join(l.Required, ", ") + ")"
}

// jsonKind names a Go type as JSON does.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "an object"
}

// joinAnd joins names as "a", "a and b", "a, b and c".
func joinAnd(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
