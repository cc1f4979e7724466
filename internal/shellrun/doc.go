// Package shellrun is run_shell_command's engine: it types one framed
// command line into a pane's shell, waits for it and answers its exit
// status and output. It knows panes, commands, runs, outcomes, handles and
// notes; it knows nothing of MCP (the server's mcpserver package adapts
// its results to a tool's answer).
//
// A frame (type frame; not to be confused with package internal/frame,
// which checks JSON-RPC messages) is the command quoted and wrapped in a
// subshell between two marker lines that no output can forge: the begin
// line, and a status line carrying the subshell's exit status. Two
// strategies follow a frame:
//
//   - on the pane's view (package live), the default: the protection check
//     and the typing go over the session's control connection, and the
//     markers are read from the pane's %output lines as they come
//     (view_run.go, await.go);
//   - without a view (control mode forbidden or unavailable): the frame's
//     exit trap stores the status in a pane option and signals a wait-for
//     channel, and the output is read from the grid afterwards
//     (process_run.go).
//
// One command runs per pane at a time (runs.go): a run claims its pane and
// has a handle, by which a wait that timed out can be taken up again.
// Before typing, the pane's shell must be at its prompt (prompt.go) and
// its command line empty of input the server typed without Enter
// (input_record.go). A pane whose last protection check passed is typed
// into under a typing guard (typing_guard.go): tmux re-checks the facts
// of that check in the same command-queue step that types the line
// (if-shell -F), as tmux.GuardCommand does for enrollment. "Guard" means
// that here and there: a condition tmux evaluates in the step that acts.
//
// The engine decides nothing about which panes may take a command: the
// Host's Check (the server's protections) does.
package shellrun
