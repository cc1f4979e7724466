//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package fgproc

import "golang.org/x/sys/unix"

// getTermios is the ioctl request that reads a terminal's termios.
const getTermios, getTermiosName = unix.TIOCGETA, "TIOCGETA"
