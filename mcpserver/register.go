package mcpserver

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"

	"github.com/libtmux/libtmux-mcp/internal/argcheck"
	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolSpec is what the model and the host read about a tool.
type toolSpec struct {
	name        string
	toolset     string // Inspect, Manage, Execute, Teardown or OptIn
	title       string
	description string
	capability  Capability
	// annotations replace the ones derived from the capability row
	// (tmux_run follows its contract; a test checks they agree).
	annotations *mcp.ToolAnnotations
	// inputSchema and outputSchema are given only by raw tools; typed
	// tools publish the schemas of their golden file (see goldenSchemas).
	inputSchema, outputSchema json.RawMessage
	// blocks marks a call that waits on the world (a wait or a run) and
	// could outlive its client: stdin EOF cancels it at once.
	blocks bool
}

// tool is one entry of the catalog: a spec and a way to serve it.
type tool interface {
	spec() *toolSpec
	serve(s *server, t *mcp.Tool)
	// callRaw checks args (argcheck.List.Decode) and runs the handler: a direct call
	// and a row of call_read_tools_batch both go through it (req is then
	// the batch's own request).
	callRaw(s *server, ctx context.Context, req *mcp.CallToolRequest, args json.RawMessage) (any, error)
	// schemas are the input and output schemas the tool's types give,
	// built by reflection: the golden test compares them with the
	// published ones and -update writes them. Never called while serving.
	schemas() (in, out any)
	// args are the argument names argcheck knows; nil for a raw tool.
	args() *argcheck.List
}

// checkSpec reports what is wrong with a tool's spec, or nil.
// TestToolSpecs runs it on every tool of the catalog.
func checkSpec(t tool) error {
	sp := t.spec()
	switch {
	case sp.name == "" || sp.title == "" || sp.description == "":
		return fmt.Errorf("tool %q lacks a name, title or description", sp.name)
	case sp.toolset != OptIn && !KnownToolset(sp.toolset):
		return fmt.Errorf("tool %q has unknown toolset %q", sp.name, sp.toolset)
	case sp.capability.ProcessReach == "" || sp.capability.InputLiteralization == nil:
		return fmt.Errorf("tool %q has no capability row", sp.name)
	}
	return nil
}

// typedTool is a tool with typed arguments and a typed answer. Its
// arguments are checked by argcheck, and its schemas come from its golden
// file: nothing is built by reflection while the server starts.
type typedTool[In, Out any] struct {
	toolSpec
	handle func(s *server, ctx context.Context, req *mcp.CallToolRequest, in In) (Out, error)
}

func (t *typedTool[In, Out]) spec() *toolSpec { return &t.toolSpec }

func (t *typedTool[In, Out]) serve(s *server, mt *mcp.Tool) {
	s.mcp.AddTool(mt, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ctx, cancel := s.handlerContext(ctx)
		defer cancel()
		out, err := t.callRaw(s, ctx, req, req.Params.Arguments)
		if err == nil {
			var text string
			if text, err = encodeJSON(out); err == nil {
				// One encoding for both copies (as go-sdk's typed tools do).
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: json.RawMessage(text)}, nil
			}
			err = fmt.Errorf("encode the %s answer: %w", t.name, err)
		}
		res := &mcp.CallToolResult{}
		res.SetError(err)
		return res, nil
	})
}

// callRaw checks args and runs the handler. req is the call's request (a
// batch's own, for a row): a handler takes its arguments from in, never
// from req.
func (t *typedTool[In, Out]) callRaw(s *server, ctx context.Context, req *mcp.CallToolRequest, args json.RawMessage) (out any, err error) {
	defer s.recoverTool(t.name, &err)
	var in In
	if err := argcheck.Of[In]().Decode(t.name, args, &in); err != nil {
		return nil, err
	}
	o, err := t.handle(s, ctx, req, in)
	if err = tmux.InWords(err); err != nil {
		return nil, err
	}
	return o, nil
}

func (t *typedTool[In, Out]) args() *argcheck.List { return argcheck.Of[In]() }

func (t *typedTool[In, Out]) schemas() (any, any) {
	in, _ := inputSchemaFor[In]()
	return in, outputSchemaFor[Out]()
}

// rawTool is a tool that publishes its schemas verbatim and validates its
// own arguments (tmux_run: its contract's pattern cannot be compiled by
// Go's regexp, so typed registration is impossible).
type rawTool struct {
	toolSpec
	handle func(s *server, ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error)
}

func (t *rawTool) spec() *toolSpec { return &t.toolSpec }

func (t *rawTool) serve(s *server, mt *mcp.Tool) {
	s.mcp.AddTool(mt, func(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
		ctx, cancel := s.handlerContext(ctx)
		defer cancel()
		defer s.recoverTool(t.name, &err)
		return t.handle(s, ctx, req)
	})
}

func (t *rawTool) callRaw(*server, context.Context, *mcp.CallToolRequest, json.RawMessage) (any, error) {
	return nil, fmt.Errorf("%s cannot run inside a batch", t.name)
}

func (t *rawTool) schemas() (any, any) { return t.inputSchema, t.outputSchema }

func (t *rawTool) args() *argcheck.List { return nil }

// goldenFiles are the reviewed tools/list entries of every tool
// (schemas/, kept by TestGoldenSchemas). The server publishes the
// schemas recorded there instead of building them by reflection at every
// start; the golden test fails when they stop matching the types.
//
//go:embed schemas/*.json
var goldenFiles embed.FS

// goldenSchemas returns the input and output schemas recorded for tool
// name, compacted, or ok false when it has no golden file yet (a new
// tool, before -update: the golden test fails until it has one).
func goldenSchemas(name string) (in, out json.RawMessage, ok bool) {
	raw, err := goldenFiles.ReadFile("schemas/" + name + ".json")
	if err != nil {
		return nil, nil, false
	}
	var g struct {
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
	}
	if json.Unmarshal(raw, &g) != nil || g.InputSchema == nil {
		return nil, nil, false
	}
	var bin, bout bytes.Buffer
	if json.Compact(&bin, g.InputSchema) != nil || g.OutputSchema != nil && json.Compact(&bout, g.OutputSchema) != nil {
		return nil, nil, false
	}
	if g.OutputSchema == nil {
		return bin.Bytes(), nil, true
	}
	return bin.Bytes(), bout.Bytes(), true
}

// mcpTool is the tool as tools/list shows it.
func (sp *toolSpec) mcpTool() *mcp.Tool {
	a := sp.annotations
	if a == nil {
		a = annotationsFor(sp.capability)
	}
	t := &mcp.Tool{
		Name:        sp.name,
		Title:       sp.title,
		Description: sp.description,
		Annotations: a,
		Meta:        mcp.Meta{CapabilityMetaKey: sp.capability},
	}
	if sp.inputSchema != nil {
		t.InputSchema = sp.inputSchema
		t.OutputSchema = sp.outputSchema
	}
	return t
}

// publishedTool is mcpTool with the schemas filled in: the raw tool's
// own, or the golden file's, or (for a tool without one yet) its types'.
func publishedTool(tl tool) *mcp.Tool {
	mt := tl.spec().mcpTool()
	if mt.InputSchema == nil {
		if in, out, ok := goldenSchemas(mt.Name); ok {
			mt.InputSchema = in
			if out != nil {
				mt.OutputSchema = out
			}
		} else {
			mt.InputSchema, mt.OutputSchema = tl.schemas()
		}
	}
	return mt
}

// annotationsFor sets all four hints from what a row says the tool does:
// a tool that only observes is read-only (and idempotent); a tool that
// removes something, or whose input reaches a process (typing, commands,
// scripts), may destroy; anything else changes tmux state without
// destroying it. tmux is a closed world.
func annotationsFor(c Capability) *mcp.ToolAnnotations {
	yes, no := true, false
	a := &mcp.ToolAnnotations{OpenWorldHint: &no} // the title is the tool's own
	switch {
	case c.only(EffectObserve):
		a.ReadOnlyHint, a.DestructiveHint, a.IdempotentHint = true, &no, true
	case slices.Contains(c.Effects, EffectDelete), c.ProcessReach != ReachNone && c.ProcessReach != ReachConfiguredProcess:
		a.DestructiveHint = &yes
	default:
		a.DestructiveHint = &no
	}
	return a
}

// addTools serves every tool of the selection and no other: a tool left
// out is neither listed nor callable (refuseHidden answers a call to it).
func (s *server) addTools() {
	for _, name := range ToolNames() {
		if s.sel.Has(name) {
			t := catalog[name]
			t.serve(s, publishedTool(t))
		}
	}
	s.mcp.AddReceivingMiddleware(s.refuseHidden)
}

// recoverTool turns a panic in a handler into an error answer: a bug must
// not end every session of the process.
func (s *server) recoverTool(name string, err *error) {
	if r := recover(); r != nil {
		s.log.Error("tool panicked", slog.String("tool", name), slog.Any("panic", r), slog.String("stack", string(debug.Stack())))
		*err = fmt.Errorf("internal error in %s: %v; this is a bug in libtmux-mcp, please report it with the call that caused it", name, r)
	}
}

// handlerContext ends when the request is cancelled or the server shuts
// down; go-sdk cancels the former but not the latter.
func (s *server) handlerContext(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.life, cancel)
	return ctx, func() { stop(); cancel() }
}
