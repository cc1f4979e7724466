//go:build !linux && !freebsd

package tmux

import "os/exec"

// endsWithThisProcess does nothing here: macOS has no parent-death signal,
// so a control client can outlive a server process that was killed while a
// watched pane printed (see control_deathsig.go).
func endsWithThisProcess(*exec.Cmd) {}
