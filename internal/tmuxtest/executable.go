package tmuxtest

import (
	"os"
	"syscall"
	"testing"
)

// WriteExecutable writes a program (a script standing in for tmux, ps or
// a helper) to path, mode 0700, and fails t on an error. It holds
// syscall.ForkLock meanwhile: a process forked by a parallel test between
// the open and the close would hold the file open for writing until its
// exec, and running the program then fails with "text file busy".
func WriteExecutable(t testing.TB, path, content string) {
	t.Helper()
	syscall.ForkLock.Lock()
	err := os.WriteFile(path, []byte(content), 0o700)
	syscall.ForkLock.Unlock()
	if err != nil {
		t.Fatal(err)
	}
}
