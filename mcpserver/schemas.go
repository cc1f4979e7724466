package mcpserver

import (
	"fmt"
	"sort"

	"github.com/google/jsonschema-go/jsonschema"
)

// inputSchemaFor is the published input schema of a typed tool and its
// argument names. It leaves out additionalProperties:false at the top: the
// handler refuses unknown arguments itself (checkArgs), with a message
// that lists the right names, and forty tools need not say it forty times.
func inputSchemaFor[In any]() (*jsonschema.Schema, []string) {
	s, err := jsonschema.For[In](&jsonschema.ForOptions{})
	if err != nil {
		panic(fmt.Sprintf("mcpserver: input schema: %v", err)) // a programming mistake, at start
	}
	s.AdditionalProperties = nil
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	return s, names
}

// outputSchemaFor is the published output schema of a typed tool: the
// answer's own fields with their types and descriptions, and, for a field
// that holds objects or arrays of objects, only that shape. The rows inside
// (a pane row, a match) are described once, by the tool's description and
// the README, instead of again in every tool that returns them: with about
// forty tools, repeating every nested row would make tools/list several
// times larger for a model that reads it on every session. Clients still
// validate each answer against this schema, so it stays exact about the
// types of the fields it names.
func outputSchemaFor[Out any]() *jsonschema.Schema {
	s, err := jsonschema.For[Out](&jsonschema.ForOptions{})
	if err != nil {
		panic(fmt.Sprintf("mcpserver: output schema: %v", err)) // a programming mistake, at start
	}
	for _, p := range s.Properties {
		shallow(p)
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

// shallow keeps a property's type and description and drops what it says
// about the objects nested inside it.
func shallow(p *jsonschema.Schema) {
	p.Properties, p.Required, p.AdditionalProperties = nil, nil, nil
	if p.Items != nil {
		item := p.Items
		if item.Type == "object" || len(item.Properties) > 0 {
			p.Items = &jsonschema.Schema{Type: "object"}
		}
	}
}
