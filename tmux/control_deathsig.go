//go:build linux || freebsd

package tmux

import (
	"os/exec"
	"syscall"
)

// endsWithThisProcess makes the kernel SIGKILL the control client when
// this process ends, however it ends. Without it a client outlives a
// server process that was killed while a watched pane printed: tmux keeps
// the client until its pending output is written, to a pipe nobody reads
// any more, so the client stays, and kill-server never ends the tmux
// server (3.3a to 3.6a, and 3.7c when the server had stopped reading
// first). A client killed is a lost client to tmux, which
// drops it. (Linux sends the signal when the thread that started the
// client ends; Go ends a thread only under runtime.LockOSThread, which
// nothing on this path uses.)
func endsWithThisProcess(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
