// Package tmux is the one way libtmux-mcp talks to a tmux server.
//
// A Client pins a Route (the tmux executable and the socket) and runs tmux
// commands with a deadline, a UTF-8 locale and tmux's stderr carried in every
// error. Rows (sessions, windows, panes, clients) are parsed from format field
// lists whose separators cannot occur in the values tmux reports.
//
// The package does not decide policy: which panes may be written to, and what
// an agent may see, are decided by its callers.
package tmux
