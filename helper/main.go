package helper

import (
	"fmt"
	"os"
)

// Exit statuses of the helper process. The broker learns the outcome from the records, not from
// these: nobody waits for the helper (its parent is pid 1).
const (
	exitOK      = 0 // a final record was written, or the run was cancelled
	exitFailure = 1 // a failed record was written, or the broker could not be told anything
	exitUsage   = 2 // wrong arguments
)

// serve serves jobs on the broker connection at fd 3 and returns the exit status. run_linux.go
// fills it in; elsewhere it stays nil and Main says the platform is not supported.
var serve func() int

// Main runs the helper with the arguments that follow the program name, "serve", and returns
// the process's exit status. It writes to stderr only for wrong arguments or when fd 3 is not a
// usable connection; everything else is reported to the broker as records.
func Main(args []string) int {
	if len(args) != 1 || args[0] != "serve" {
		fmt.Fprintln(os.Stderr, "usage: libtmux-mcp-helper serve\n"+
			"An enrolled zsh starts the helper with its broker connection on fd 3; it runs the jobs "+
			"the broker sends there, one at a time, until the connection ends. It is not meant to be run by hand.")
		return exitUsage
	}
	if serve == nil {
		fmt.Fprintln(os.Stderr, "libtmux-mcp-helper: running jobs is not supported on this platform (Linux only)")
		return exitFailure
	}
	return serve()
}
