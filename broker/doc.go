// Package broker is the Unix-socket broker of tmux_run. An enrolled zsh
// connects to it once to enroll (HELLO, closed after the answer), then once per prompt (ATTACH: the
// connection lives while the prompt is shown, so the person's commands never
// inherit it and the broker knows at once when a command runs). A run asks
// the shell on that connection (RUN, or HELPER the first time) whether it is
// idle, and the shell answers GO with its directory and exported environment
// of that moment. The shell starts one resident helper per enrollment on a
// connection of its own (SPAWN); the broker feeds it jobs (package
// helper/job) and reads its records. protocol.go holds every word of the
// shell protocol.
//
// A run is authorized without starting any process when the enrolled shell
// provably is what tmux would report (see authorizedFast); otherwise one tmux
// call decides, so every refusal keeps its documented code.
//
// Every connection's peer credentials are checked before anything it sends
// is read, and HELLO, ATTACH, SPAWN and BYE must come from the enrolled
// process itself (pid and process generation). Every byte a shell's
// connection carries must be written by the process that connected
// (SO_PASSCRED: the kernel names each write's sender), so a descriptor a
// child inherited cannot answer for the shell; and a shell whose terminal
// has a foreground job is never asked, whatever connection seems attached. The broker never types into a
// terminal and never polls a shell: it writes one line and waits, with a
// deadline, for the answer.
//
// Linux only: elsewhere the broker's private files and the peer credential
// calls fail (privfile.ErrNotSupported, first, from Listen;
// peercred.ErrNotSupported), so a server asked to enable tmux_run stops at
// startup saying that tmux_run needs Linux.
package broker
