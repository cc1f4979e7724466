// Package mcpserver is the MCP surface of libtmux-mcp: the tool catalog, the
// toolset policy that decides which tools exist, result envelopes and read
// budgets, and the constructor that returns a ready *mcp.Server.
//
// Every tool goes through one registration helper (register.go) that gives
// it typed parameters, an object answer sent both as structuredContent and
// as unescaped JSON text, tool errors that name the recovery, panic recovery,
// and a context that ends on client cancellation and on server shutdown.
//
// The package does not parse flags (cmd/libtmux-mcp does, through
// LoadConfig) and does not talk to tmux except through package tmux.
package mcpserver
