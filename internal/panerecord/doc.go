// Package panerecord is what every libtmux-mcp process of this user records
// about the panes of a tmux server, so that several agents on one tmux
// server see each other:
//
//   - the pane's claim (claim.go): before a process types a command into a
//     pane (run_shell_command) or runs a script in its shell (tmux_run), it
//     takes the pane's claim, and while it holds it every other process is
//     refused, told who holds the pane;
//   - the pane's input record (input.go): when any process last sent the
//     pane input, so that an enrollment from a pane another process typed
//     into is refused as one this process typed into is.
//
// The records are files named for the tmux server and the pane, in a
// private directory of this user (0700, under $XDG_RUNTIME_DIR when that is
// private, else the temporary directory), with flocks the kernel releases
// when their process exits, however it exits. Beside them each server has a
// marker (sweep.go) with its pid, the time its process started and its
// socket: every For removes the records of servers that are gone, so the
// directory holds about what the live servers use.
//
// Linux only, as the broker's private files are: elsewhere For answers
// privfile.ErrNotSupported and a process keeps its records to itself.
package panerecord
