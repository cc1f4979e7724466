//go:build !linux

package peercred

import (
	"context"
	"net"
)

// FromConn answers ErrNotSupported off Linux.
func FromConn(*net.UnixConn) (Peer, error) { return Peer{PidFD: -1}, ErrNotSupported }

// StartTime answers ErrNotSupported off Linux.
func StartTime(int) (uint64, error) { return 0, ErrNotSupported }

// BootID answers ErrNotSupported off Linux.
func BootID() (string, error) { return "", ErrNotSupported }

// Alive answers false off Linux.
func Alive(int) bool { return false }

// WaitExit answers ErrNotSupported off Linux.
func WaitExit(context.Context, int) error { return ErrNotSupported }

// closeFD has nothing to close: no pidfd is ever handed out here.
func closeFD(int) {}

// ReadStat answers ErrNotSupported off Linux.
func ReadStat(int) (Stat, error) { return Stat{}, ErrNotSupported }

// ReadAttrs answers ErrNotSupported off Linux.
func ReadAttrs(int) (Attrs, error) { return Attrs{}, ErrNotSupported }

// Hungup answers false off Linux.
func Hungup(int) bool { return false }

// OpenFIFO answers ErrNotSupported off Linux.
func OpenFIFO(string) (int, error) { return -1, ErrNotSupported }

// CloseFD does nothing off Linux.
func CloseFD(int) {}

// PeerGone answers false off Linux.
func PeerGone(*net.UnixConn) bool { return false }
