//go:build !linux

package peercred

import (
	"context"
	"net"
	"syscall"
)

// FromConn answers ErrNotSupported off Linux.
func FromConn(*net.UnixConn) (Peer, error) { return Peer{PidFD: -1}, ErrNotSupported }

// Alive answers false off Linux.
func Alive(int) bool { return false }

// WaitExit answers ErrNotSupported off Linux.
func WaitExit(context.Context, int) error { return ErrNotSupported }

func closeFD(fd int) { syscall.Close(fd) }
