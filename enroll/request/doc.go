// Package request lets a person ask, from a pane, for that pane to be enrolled for tmux_run,
// and read what ran there: the `libtmux-mcp enroll` and `libtmux-mcp status` commands (Main),
// the server side that answers them on a private socket in the broker's directory (Server),
// and the record by which the commands find the servers (Record).
//
// Nothing the command says is trusted: the server checks the requesting process itself (same
// user, in the pane's terminal as its foreground job, the pane's shell is zsh, no input from
// this server reached the pane since its shell started) before it writes an invitation with
// package enroll, and the shell still enrolls only by sourcing it, through package broker's
// HELLO checks. This package never types into a terminal and never runs a script.
//
// Linux only, as tmux_run is: elsewhere the peer credential calls answer
// peercred.ErrNotSupported and the commands say that tmux_run needs Linux.
package request
