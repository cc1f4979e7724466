//go:build linux

package privfile

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

func init() {
	sys = &platform{
		tryLock: tryLock, ownerUID: ownerUID, openNoFollow: openNoFollow,
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

// waitHangup blocks in poll(2) on two descriptors: the FIFO and an eventfd that a
// context.AfterFunc writes when ctx ends, so a cancel wakes it at once rather than at the next
// slice of a polling loop. The blocked poll holds one OS thread for as long as it waits.
// (peercred's wait for a pidfd is built the same way.)
func waitHangup(ctx context.Context, fd int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if fd < 0 {
		return fmt.Errorf("privfile: wait for a hangup: no descriptor (%d)", fd)
	}
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return fmt.Errorf("privfile: eventfd: %w", err)
	}
	woken := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(woken)
		var one [8]byte
		binary.NativeEndian.PutUint64(one[:], 1)
		unix.Write(wake, one[:])
	})
	defer func() {
		if !stop() {
			<-woken // the write has finished, so wake may be closed
		}
		unix.Close(wake)
	}()
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(wake), Events: unix.POLLIN}}
	for {
		fds[0].Revents, fds[1].Revents = 0, 0
		if _, err := unix.Poll(fds, -1); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return fmt.Errorf("privfile: poll the FIFO: %w", err)
		}
		switch {
		case fds[0].Revents&unix.POLLNVAL != 0:
			return fmt.Errorf("privfile: wait for a hangup: %d is not an open descriptor: %w", fd, unix.EBADF)
		case fds[0].Revents != 0: // POLLHUP: every writer closed it (POLLIN: one wrote)
			return nil
		case fds[1].Revents != 0:
			return ctx.Err()
		}
	}
}
