//go:build linux

package peercred

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"golang.org/x/sys/unix"
)

// peerPidfd reads SO_PEERPIDFD; tests replace it to force the fallback.
var peerPidfd = func(fd int) (int, error) {
	return unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_PEERPIDFD)
}

// FromConn reads the peer of c. The pidfd comes from SO_PEERPIDFD, which
// names the very process that connected. Before Linux 6.5 that option does
// not exist; then pidfd_open(pid) is used, and the start time is read
// before and after it: if both equal, the pidfd refers to the process that
// connected and not to a later process that reused its pid.
func FromConn(c *net.UnixConn) (Peer, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return Peer{PidFD: -1}, err
	}
	var cred *unix.Ucred
	var pidfd int
	var credErr, pidErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
		if credErr == nil {
			pidfd, pidErr = peerPidfd(int(fd))
		}
	}); err != nil {
		return Peer{PidFD: -1}, err
	}
	if credErr != nil {
		return Peer{PidFD: -1}, fmt.Errorf("SO_PEERCRED: %w", credErr)
	}
	p := Peer{UID: cred.Uid, GID: cred.Gid, PID: int(cred.Pid), PidFD: -1}
	before, err := StartTime(p.PID)
	if err != nil {
		return p, fmt.Errorf("peer %d: %w", p.PID, err)
	}
	if pidErr == nil {
		p.PidFD, p.StartTime = pidfd, before
		return p, nil
	}
	if !errors.Is(pidErr, unix.ENOPROTOOPT) && !errors.Is(pidErr, unix.EINVAL) {
		return p, fmt.Errorf("SO_PEERPIDFD: %w", pidErr)
	}
	pidfd, err = unix.PidfdOpen(p.PID, 0)
	if err != nil {
		return p, fmt.Errorf("pidfd_open(%d): %w", p.PID, err)
	}
	after, err := StartTime(p.PID)
	if err != nil || after != before {
		unix.Close(pidfd)
		return p, fmt.Errorf("peer %d exited while it was being identified", p.PID)
	}
	p.PidFD, p.StartTime = pidfd, before
	return p, nil
}

// Alive reports whether the process behind pidfd still runs.
func Alive(pidfd int) bool {
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n == 0
}

// WaitExit returns nil when the process behind pidfd exits, or ctx's error.
// It polls the pidfd in 200 ms slices so that ctx is honoured.
func WaitExit(ctx context.Context, pidfd int) error {
	for {
		fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int((200 * time.Millisecond).Milliseconds()))
		if err != nil && !errors.Is(err, unix.EINTR) {
			return err
		}
		if n > 0 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

func closeFD(fd int) { unix.Close(fd) }
