package mcpserver

import (
	"fmt"
	"reflect"
	"sort"

	"github.com/google/jsonschema-go/jsonschema"
)

// inputSchemaFor is the published input schema of a typed tool and its
// argument names. It leaves out additionalProperties:false, at the top and
// in nested rows: checkArgs refuses unknown arguments and fields itself,
// with a message that lists the right names, and forty tools need not say
// it forty times. An array argument is an array: a null is taken as
// omitted, so the schema need not offer it.
func inputSchemaFor[In any]() (*jsonschema.Schema, []string) {
	s, err := jsonschema.For[In](&jsonschema.ForOptions{})
	if err != nil {
		panic(fmt.Sprintf("mcpserver: input schema: %v", err)) // a programming mistake, at start
	}
	s.AdditionalProperties = nil
	for _, p := range s.Properties {
		tighten(p)
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	return s, names
}

// outputSchemaFor is the published output schema of a typed tool: an
// object and the names of its fields, each field's schema the empty
// (true) one. tools/list is read at the start of every session, and a
// model reads descriptions and input schemas, not output schemas: what a
// field means and holds (a pane row, a match) is said once, by the tool's
// description and the README. The golden files still record every field
// name, and each field's type is its Go type's, the same in every answer.
func outputSchemaFor[Out any]() *jsonschema.Schema {
	s, err := jsonschema.For[Out](&jsonschema.ForOptions{})
	if err != nil {
		panic(fmt.Sprintf("mcpserver: output schema: %v", err)) // a programming mistake, at start
	}
	for name := range s.Properties {
		s.Properties[name] = &jsonschema.Schema{} // true: the name, nothing more
	}
	// note is on every answer that needs one; the server's instructions
	// say so once.
	delete(s.Properties, "note")
	// Which fields an answer always has, and that it has no others, are
	// the server's promise, checked by its own tests; repeating them in
	// every tool's schema costs the model more than it tells it.
	s.Required, s.AdditionalProperties = nil, nil
	return s
}

// tighten drops from an argument's schema what checkArgs enforces anyway:
// null as an array's alternative and additionalProperties:false in rows.
func tighten(p *jsonschema.Schema) {
	if len(p.Types) == 2 && p.Types[0] == "null" && p.Types[1] == "array" {
		p.Type, p.Types = "array", nil
	}
	if p.AdditionalProperties != nil && (p.AdditionalProperties.Not != nil || reflect.ValueOf(*p.AdditionalProperties).IsZero()) {
		p.AdditionalProperties = nil // false (checkArgs refuses) or true (the default)
	}
	for _, q := range p.Properties {
		tighten(q)
	}
	if p.Items != nil {
		tighten(p.Items)
	}
}
