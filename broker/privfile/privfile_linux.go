//go:build linux

package privfile

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/libtmux/libtmux-mcp/internal/pollwait"
)

func init() {
	sys = &platform{
		tryLock: tryLock, lockShared: lockShared, ownerUID: ownerUID, openNoFollow: openNoFollow,
		openFIFO: openFIFO, hungup: hungup, waitHangup: waitHangup, closeFD: func(fd int) { unix.Close(fd) },
	}
}

func tryLock(fd uintptr) (bool, error) {
	for {
		err := unix.Flock(int(fd), unix.LOCK_EX|unix.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EWOULDBLOCK):
			return false, nil
		}
		return false, fmt.Errorf("privfile: flock: %w", err)
	}
}

func lockShared(fd uintptr) error {
	for {
		err := unix.Flock(int(fd), unix.LOCK_SH)
		if !errors.Is(err, unix.EINTR) {
			if err != nil {
				return fmt.Errorf("privfile: flock: %w", err)
			}
			return nil
		}
	}
}

func ownerUID(fi os.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

func openNoFollow(path string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
}

func openFIFO(path string) (int, error) {
	if err := unix.Mkfifo(path, 0o600); err != nil {
		return -1, fmt.Errorf("make the FIFO %s: %w", path, err)
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		os.Remove(path)
		return -1, fmt.Errorf("open the FIFO %s: %w", path, err)
	}
	return fd, nil
}

func hungup(fd int) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err == nil && n > 0 && fds[0].Revents&unix.POLLHUP != 0
	}
}

// waitHangup waits in poll(2) for the FIFO to hang up, or for ctx to end (internal/pollwait,
// as peercred's wait for a pidfd). Bytes written to it are read and dropped: a FIFO that has
// something to read still has a writer, so it has not hung up.
func waitHangup(ctx context.Context, fd int) error {
	var buf [512]byte
	for {
		if err := pollwait.Ready(ctx, fd); err != nil {
			if ctx.Err() == nil {
				return fmt.Errorf("privfile: wait for a hangup: %w", err)
			}
			return err
		}
		if hungup(fd) {
			return nil
		}
		for { // drain; EAGAIN when it is empty, 0 at a hangup (seen at the next poll)
			n, err := unix.Read(fd, buf[:])
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err != nil || n == 0 {
				break
			}
		}
	}
}
