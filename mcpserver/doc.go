// Package mcpserver is the MCP surface of libtmux-mcp: the tool catalog, the
// toolset policy that decides which tools exist, result envelopes and read
// budgets, and New, which returns a ready *mcp.Server for any transport.
//
// A tool is a value: one file declares its spec (name, toolset, title,
// description for the model, capability row) in a named constructor, and
// its handler, a named method of server; tools.go lists every constructor,
// one line each. register.go gives every tool the same treatment: typed
// parameters checked by one function in one message style, direct call or
// batch row (or, for tmux_run, its contract's schemas verbatim), the
// schemas recorded in its golden file, an object answer sent both as
// structuredContent and as unescaped JSON text, tool errors that name the
// recovery, panic recovery, and a context that ends on client cancellation
// and on server shutdown.
//
// The package parses no flags (internal/config does), starts no process
// and installs no signal handler: cmd/libtmux-mcp builds the pieces (the
// tmux client, the tmux_run broker and registry) and hands them to New.
// It talks to tmux only through package tmux.
package mcpserver
