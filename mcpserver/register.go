package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CapabilityMetaKey is the _meta key of every tool's capability row; the
// key is shared with the libtmux-mcp family.
const CapabilityMetaKey = "com.git-pull.libtmux-mcp/capability"

// Capability describes what a tool can reach and change, for hosts that
// route or approve tool calls by what they do.
type Capability struct {
	// ProcessReach: none, configured-process, pane-input, pane-command or
	// enrolled-shell.
	ProcessReach string `json:"processReach"`
	// Effects on tmux: observe, change, delete.
	Effects []string `json:"effects"`
	// Outputs: tmux-metadata, terminal-content, process-environment,
	// configured-command, process-output.
	Outputs []string `json:"outputs"`
	// InputLiteralization says, per argument that reaches tmux, how it is
	// kept from being read as a format or key name: one of the lit*
	// values below.
	InputLiteralization map[string]string `json:"inputLiteralization,omitempty"` // omitted: no argument reaches tmux as text
}

// The values of Capability.InputLiteralization: a short vocabulary, since
// every tool's row travels in every tools/list.
const (
	// litFormat: # doubled where the command expands formats (a #…[ style
	// run kept), a final ';' escaped: stored as given, never expanded.
	litFormat = "format-doubled"
	// litTarget: an exact session name, sent as the target =NAME.
	litTarget = "exact-name"
	// litLiteral: sent as given where tmux reads no format or key name
	// (send-keys -l, a private paste buffer, a typed command line).
	litLiteral = "literal"
	// litValidated: checked against a strict grammar before tmux sees it
	// (ids, key names, option and variable names, layouts, numbers,
	// booleans sent as on/off).
	litValidated = "validated"
	// litNotSent: used by this server only (a search pattern matched in Go).
	litNotSent = "not-sent"
	// litPerTool: each nested operation's arguments, as its own tool.
	litPerTool = "per-tool"
)

// toolSpec is what the model and the host read about a tool.
type toolSpec struct {
	name        string
	toolset     string // Inspect, Manage, Execute, Teardown or OptIn
	title       string
	description string
	capability  Capability
	// annotations override the toolset's (tmux_run follows its contract).
	annotations *mcp.ToolAnnotations
	// inputSchema and outputSchema are given only by raw tools; typed
	// tools infer theirs from their parameter and result types.
	inputSchema, outputSchema json.RawMessage
	// blocks marks a call that waits on the world (a wait or a run) and
	// could outlive its client: stdin EOF cancels it at once.
	blocks bool
}

// tool is one entry of the catalog: a spec and a way to serve it.
type tool interface {
	spec() *toolSpec
	serve(s *server, t *mcp.Tool)
	// callRaw validates args and runs the handler as a direct call would,
	// for call_read_tools_batch (req is the batch's own request).
	callRaw(s *server, ctx context.Context, req *mcp.CallToolRequest, args json.RawMessage) (any, error)
}

// typedTool is a tool with typed arguments and a typed answer: go-sdk
// validates both against the schemas it infers from In and Out.
type typedTool[In, Out any] struct {
	toolSpec
	handle func(s *server, ctx context.Context, req *mcp.CallToolRequest, in In) (Out, error)
}

func (t *typedTool[In, Out]) spec() *toolSpec { return &t.toolSpec }

func (t *typedTool[In, Out]) serve(s *server, mt *mcp.Tool) {
	var args []string
	mt.InputSchema, args = inputSchemaFor[In]()
	mt.OutputSchema = outputSchemaFor[Out]()
	mcp.AddTool(s.mcp, mt, func(ctx context.Context, req *mcp.CallToolRequest, in In) (res *mcp.CallToolResult, out Out, err error) {
		ctx, cancel := s.handlerContext(ctx)
		defer cancel()
		defer s.recoverTool(t.name, &err)
		if err := checkArgNames(t.name, req.Params.Arguments, args); err != nil {
			return nil, out, err
		}
		out, err = t.handle(s, ctx, req, in)
		if err != nil {
			return nil, out, err
		}
		text, err := encodeJSON(out)
		if err != nil {
			return nil, out, fmt.Errorf("encode the %s answer: %w", t.name, err)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, out, nil
	})
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

// catalog is every tool of this server by name. Each tool's file adds it
// with register in an init function: adding a tool is one file (plus its
// golden schema in testdata/tools).
var catalog = map[string]tool{}

// register adds t to the catalog. A duplicate name, an unknown toolset or
// a tool without its documentation is a programming mistake and panics at
// start.
func register(t tool) {
	sp := t.spec()
	switch {
	case sp.name == "" || sp.title == "" || sp.description == "":
		panic(fmt.Sprintf("mcpserver: tool %q lacks a name, title or description", sp.name))
	case catalog[sp.name] != nil:
		panic(fmt.Sprintf("mcpserver: tool %q registered twice", sp.name))
	case sp.toolset != OptIn && !KnownToolset(sp.toolset):
		panic(fmt.Sprintf("mcpserver: tool %q has unknown toolset %q", sp.name, sp.toolset))
	case sp.capability.ProcessReach == "" || sp.capability.InputLiteralization == nil:
		panic(fmt.Sprintf("mcpserver: tool %q has no capability row", sp.name))
	}
	catalog[sp.name] = t
}

// mcpTool is the tool as tools/list shows it.
func (sp *toolSpec) mcpTool() *mcp.Tool {
	a := sp.annotations
	if a == nil {
		a = annotationsFor(sp.toolset)
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

// annotationsFor sets all four hints for a tool of toolset ts: inspect tools
// only read; manage tools change but do not destroy; execute and teardown
// tools may destroy. tmux is a closed world.
func annotationsFor(ts string) *mcp.ToolAnnotations {
	yes, no := true, false
	a := &mcp.ToolAnnotations{OpenWorldHint: &no} // the title is the tool's own
	switch ts {
	case Inspect:
		a.ReadOnlyHint, a.DestructiveHint, a.IdempotentHint = true, &no, true
	case Manage:
		a.DestructiveHint = &no
	default:
		a.DestructiveHint = &yes
	}
	return a
}

// addTools serves every tool of the selection and no other: a tool left
// out is neither listed nor callable (go-sdk answers an unknown tool).
func (s *server) addTools() {
	for _, name := range ToolNames() {
		if s.sel.Has(name) {
			t := catalog[name]
			t.serve(s, t.spec().mcpTool())
		}
	}
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
