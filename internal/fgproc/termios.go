//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package fgproc

import (
	"fmt"

	"golang.org/x/sys/unix"
)

func init() { readModes = termiosModes }

// termiosModes opens tty without making it this process's controlling
// terminal (O_NOCTTY) and without waiting for a carrier or a reader
// (O_NONBLOCK), and reads its termios: one open, one ioctl, one close.
// Nothing is read from the terminal and nothing is written to it.
func termiosModes(tty string) (modes, error) {
	if tty == "" {
		return modes{}, fmt.Errorf("no terminal path")
	}
	fd, err := unix.Open(tty, unix.O_RDONLY|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return modes{}, fmt.Errorf("open: %w", err)
	}
	defer unix.Close(fd)
	t, err := unix.IoctlGetTermios(fd, getTermios)
	if err != nil {
		return modes{}, fmt.Errorf("ioctl %s: %w", getTermiosName, err)
	}
	return modes{canonical: t.Lflag&unix.ICANON != 0, echo: t.Lflag&unix.ECHO != 0}, nil
}
