package mcpserver

import (
	"context"
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
	// kept from being read as a format or key name.
	InputLiteralization map[string]string `json:"inputLiteralization"`
}

// toolSpec is one tool: its documentation for the model, its capability
// row and its handler. The toolset comes from the catalog.
type toolSpec[In, Out any] struct {
	name        string
	title       string
	description string
	capability  Capability
	handle      func(ctx context.Context, req *mcp.CallToolRequest, in In) (Out, error)
}

// annotationsFor sets all four hints for a tool of toolset ts: inspect tools
// only read; manage tools change but do not destroy; execute and teardown
// tools may destroy. tmux is a closed world.
func annotationsFor(ts, title string) *mcp.ToolAnnotations {
	yes, no := true, false
	a := &mcp.ToolAnnotations{Title: title, OpenWorldHint: &no}
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

// addTool registers spec on s when the selection has it. It panics on a
// tool missing from the catalog: that is a programming mistake.
func addTool[In, Out any](s *server, spec toolSpec[In, Out]) {
	ts, ok := catalog[spec.name]
	if !ok {
		panic(fmt.Sprintf("mcpserver: tool %q is not in the catalog", spec.name))
	}
	s.registered[spec.name] = spec.capability
	if !s.sel.Has(spec.name) {
		return
	}
	tool := &mcp.Tool{
		Name:        spec.name,
		Title:       spec.title,
		Description: spec.description,
		Annotations: annotationsFor(ts, spec.title),
		Meta:        mcp.Meta{CapabilityMetaKey: spec.capability},
	}
	mcp.AddTool(s.mcp, tool, func(ctx context.Context, req *mcp.CallToolRequest, in In) (res *mcp.CallToolResult, out Out, err error) {
		ctx, cancel := s.handlerContext(ctx)
		defer cancel()
		defer func() {
			if r := recover(); r != nil {
				s.log.Error("tool panicked", slog.String("tool", spec.name), slog.Any("panic", r), slog.String("stack", string(debug.Stack())))
				err = fmt.Errorf("internal error in %s: %v; this is a bug in libtmux-mcp, please report it with the call that caused it", spec.name, r)
			}
		}()
		out, err = spec.handle(ctx, req, in)
		if err != nil {
			return nil, out, err
		}
		text, err := encodeJSON(out)
		if err != nil {
			return nil, out, fmt.Errorf("encode the %s answer: %w", spec.name, err)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, out, nil
	})
}

// handlerContext ends when the request is cancelled or the server shuts
// down; go-sdk cancels the former but not the latter.
func (s *server) handlerContext(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.life, cancel)
	return ctx, func() { stop(); cancel() }
}
