//go:build linux

package pollwait

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// Ready returns nil once fd polls ready (readable, hung up or in error: the caller knows which
// of those its descriptor can mean), or ctx's error once ctx is done, whichever comes first. A
// descriptor that is not open is an error wrapping unix.EBADF.
func Ready(ctx context.Context, fd int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if fd < 0 {
		return fmt.Errorf("pollwait: no descriptor (%d)", fd)
	}
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return fmt.Errorf("pollwait: eventfd: %w", err)
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
			return fmt.Errorf("pollwait: poll %d: %w", fd, err)
		}
		switch {
		case fds[0].Revents&unix.POLLNVAL != 0:
			return fmt.Errorf("pollwait: %d is not an open descriptor: %w", fd, unix.EBADF)
		case fds[0].Revents != 0:
			return nil
		case fds[1].Revents != 0:
			return ctx.Err()
		}
	}
}
