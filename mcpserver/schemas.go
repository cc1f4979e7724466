package mcpserver

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// inputSchemaFor is the published input schema of a typed tool and its
// argument names. It leaves out additionalProperties:false, at the top and
// in nested rows: argcheck refuses unknown arguments and fields itself,
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
// object and the names of its fields, each field's schema the empty one.
// tools/list is read at the start of every session, and a model reads
// descriptions and input schemas, not output schemas: what a field means
// and holds (a pane row, a match) is said once, by the tool's description
// and the README. The golden files still record every field name, and
// each field's type is its Go type's, the same in every answer. note is
// on every answer that needs one (the server's instructions say so once),
// and which fields an answer always has, and that it has no others, are
// the server's promise, checked by its own tests.
//
// An outcome field lists the values it can hold (outcomeEnum). An empty
// schema is written {}, not true as jsonschema-go writes it: the
// MCP TypeScript SDK refuses a whole tools/list when an output schema's
// property is not an object.
func outputSchemaFor[Out any]() json.RawMessage {
	s, err := jsonschema.For[Out](&jsonschema.ForOptions{})
	if err != nil {
		panic(fmt.Sprintf("mcpserver: output schema: %v", err)) // a programming mistake, at start
	}
	names := make([]string, 0, len(s.Properties))
	for name := range s.Properties {
		if name != "note" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i, name := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		q, _ := json.Marshal(name)
		b.Write(q)
		if o, ok := any(*new(Out)).(outcomeEnum); ok && name == "outcome" {
			e, _ := json.Marshal(o.outcomes())
			b.WriteString(`:{"enum":` + string(e) + `}`)
			continue
		}
		b.WriteString(":{}")
	}
	b.WriteString("}}")
	return json.RawMessage(b.String())
}

// tighten drops from an argument's schema what argcheck enforces anyway:
// null as an array's alternative and additionalProperties:false in rows.
func tighten(p *jsonschema.Schema) {
	if len(p.Types) == 2 && p.Types[0] == "null" && p.Types[1] == "array" {
		p.Type, p.Types = "array", nil
	}
	if p.AdditionalProperties != nil && (p.AdditionalProperties.Not != nil || reflect.ValueOf(*p.AdditionalProperties).IsZero()) {
		p.AdditionalProperties = nil // false (argcheck refuses) or true (the default)
	}
	for _, q := range p.Properties {
		tighten(q)
	}
	if p.Items != nil {
		tighten(p.Items)
	}
}
