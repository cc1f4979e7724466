// Package broker is the Unix-socket broker of tmux_run. Enrolled zsh
// shells connect to it (HELLO), receive run requests on that connection
// (RUN), and start the helper on a second connection (SPAWN) that the
// broker then feeds one job and reads the helper's records from.
//
// Every connection's peer credentials are checked before anything it
// sends is read. The broker never types into a terminal and never polls a
// shell: it writes one RUN line and waits, with a deadline, for the answer.
//
// Linux only: elsewhere New fails with peercred.ErrNotSupported, so a
// server asked to enable tmux_run stops at startup with that message.
package broker
