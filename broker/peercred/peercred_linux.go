//go:build linux

package peercred

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/libtmux/libtmux-mcp/internal/pollwait"
)

func init() {
	sys = &platform{
		fromConn: fromConn, bootID: bootID, alive: alive, waitExit: waitExit, closeFD: closeFD,
		readStat: readStat, readAttrs: readAttrs, peerGone: peerGone,
		passCred: passCred, readCred: readCred,
	}
}

// closeFD closes a descriptor this package handed out (a pidfd).
func closeFD(fd int) { unix.Close(fd) }

// Hooks that tests replace (see peercred_test.go).
var (
	// peerPidfd reads SO_PEERPIDFD (Linux 6.5 and later) of a connected
	// socket. Tests force the pidfd_open fallback by making it answer
	// ENOPROTOOPT, as older kernels do.
	peerPidfd = func(fd int) (int, error) {
		return unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_PEERPIDFD)
	}
	// readStartTime is StartTime; tests replace it to play out pid reuse.
	readStartTime = StartTime
)

// clockTicksPerSecond is USER_HZ, the unit of the times in /proc/PID/stat:
// 100 on every architecture Go supports on Linux.
const clockTicksPerSecond = 100

// fromConn identifies the process at the other end of c. The caller owns
// the returned pidfd (Peer.Close).
//
// The pidfd comes from SO_PEERPIDFD, which the kernel takes from the very
// process that connected. Kernels before 6.5 lack it (ENOPROTOOPT; EINVAL
// also falls back, since 6.5-6.8 answer EINVAL for a peer that has exited,
// and the fallback then finds the exit). The fallback opens
// pidfd_open(pid) and proves, with start times, that the pid still belongs
// to a process that was already running when FromConn was called; see
// openChecked for the argument and what it cannot rule out.
//
// A peer that has exited by the time its identity is read gives
// ErrPeerExited: no pidfd can then be trusted to name it.
func fromConn(c *net.UnixConn) (Peer, error) {
	// Every process that could have connected to c started before now.
	bound, err := bootTicks()
	if err != nil {
		return Peer{PidFD: -1}, err
	}
	raw, err := c.SyscallConn()
	if err != nil {
		return Peer{PidFD: -1}, fmt.Errorf("peercred: %w", err)
	}
	var (
		cred              *unix.Ucred
		pidfd             = -1
		credErr, pidfdErr error
	)
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
		if credErr == nil {
			pidfd, pidfdErr = peerPidfd(int(fd))
		}
	}); err != nil {
		return Peer{PidFD: -1}, fmt.Errorf("peercred: %w", err)
	}
	if credErr != nil {
		return Peer{PidFD: -1}, fmt.Errorf("peercred: SO_PEERCRED: %w", credErr)
	}
	p := Peer{UID: cred.Uid, GID: cred.Gid, PID: int(cred.Pid), PidFD: -1}
	if p.PID <= 0 {
		if pidfdErr == nil {
			unix.Close(pidfd)
		}
		return Peer{PidFD: -1}, errors.New("peercred: the peer's pid is not visible from this pid namespace")
	}
	switch {
	case pidfdErr == nil:
		p.StartTime, err = liveStartTime(p.PID, pidfd)
		if err != nil {
			unix.Close(pidfd)
			return Peer{PidFD: -1}, err
		}
		p.PidFD = pidfd
	case errors.Is(pidfdErr, unix.ENOPROTOOPT), errors.Is(pidfdErr, unix.EINVAL):
		p.PidFD, p.StartTime, err = openChecked(p.PID, bound)
		if err != nil {
			return Peer{PidFD: -1}, err
		}
	case errors.Is(pidfdErr, unix.ESRCH):
		return Peer{PidFD: -1}, fmt.Errorf("peercred: process %d: %w", p.PID, ErrPeerExited)
	default:
		return Peer{PidFD: -1}, fmt.Errorf("peercred: SO_PEERPIDFD: %w", pidfdErr)
	}
	return p, nil
}

// liveStartTime reads the start time of pid, where pidfd is known to name
// the process that connected. /proc/PID/stat describes that process only
// while it has not exited (a pid is reused only after its process is
// reaped), so the read counts only if the process is still alive after it.
func liveStartTime(pid, pidfd int) (uint64, error) {
	start, err := readStartTime(pid)
	if errors.Is(err, fs.ErrNotExist) || err == nil && !Alive(pidfd) {
		return 0, fmt.Errorf("peercred: process %d: %w", pid, ErrPeerExited)
	}
	if err != nil {
		return 0, fmt.Errorf("peercred: %w", err)
	}
	return start, nil
}

// openChecked is the fallback before Linux 6.5: a pidfd for pid, checked
// against pid reuse.
//
//  1. before := start time of pid
//  2. fd := pidfd_open(pid)
//  3. after := start time of pid, and the process behind fd is still alive
//
// A pid changes owner only after its process is reaped, and the new owner
// starts later. If fd is alive after step 3, the stat read in step 3 was
// of fd's process; before == after then means the pid had one owner across
// steps 1-3 (two owners within one 10 ms tick would need the whole pid
// space to cycle in that time), so fd names a process with that start time.
// after <= bound means that process was running before FromConn was called.
//
// What remains: the peer exited and a process that started between its
// connect and FromConn took its pid. That window is the accept-to-identify
// delay; callers narrow it further with what the peer claims about itself
// (the broker requires the pid to equal the shell's $$ and tmux's
// #{pane_pid}). SO_PEERPIDFD, where it exists, has no such window.
func openChecked(pid int, bound uint64) (int, uint64, error) {
	exited := func() error { return fmt.Errorf("peercred: process %d: %w", pid, ErrPeerExited) }
	before, err := readStartTime(pid)
	if errors.Is(err, fs.ErrNotExist) {
		return -1, 0, exited()
	}
	if err != nil {
		return -1, 0, fmt.Errorf("peercred: %w", err)
	}
	fd, err := unix.PidfdOpen(pid, 0) // always close-on-exec
	if errors.Is(err, unix.ESRCH) {
		return -1, 0, exited()
	}
	if err != nil {
		return -1, 0, fmt.Errorf("peercred: pidfd_open(%d): %w", pid, err)
	}
	after, err := readStartTime(pid)
	switch {
	case errors.Is(err, fs.ErrNotExist) || err == nil && !Alive(fd):
		err = exited()
	case err != nil:
		err = fmt.Errorf("peercred: %w", err)
	case after != before:
		err = fmt.Errorf("peercred: pid %d changed owner while it was being identified (start time %d, then %d); the peer has exited: %w", pid, before, after, ErrPeerExited)
	case after > bound:
		err = fmt.Errorf("peercred: process %d started after the connection was made, so it reused the peer's pid; the peer has exited: %w", pid, ErrPeerExited)
	}
	if err != nil {
		unix.Close(fd)
		return -1, 0, err
	}
	return fd, after, nil
}

// bootTicks is the time since boot in /proc/PID/stat units. Start times are
// CLOCK_BOOTTIME too (both shifted alike inside a time namespace).
func bootTicks() (uint64, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return 0, fmt.Errorf("peercred: clock_gettime(CLOCK_BOOTTIME): %w", err)
	}
	return uint64(ts.Nano()) / (1e9 / clockTicksPerSecond), nil
}

// bootID identifies this boot of the machine
// (/proc/sys/kernel/random/boot_id).
func bootID() (string, error) {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", fmt.Errorf("read the boot id: %w", err)
	}
	id := strings.TrimSpace(string(b))
	if !validBootID(id) {
		return "", fmt.Errorf("read the boot id: %q is not a boot id", id)
	}
	return id, nil
}

// alive reports whether the process behind pidfd has not exited yet. A
// zombie has exited. An invalid descriptor is not alive.
func alive(pidfd int) bool {
	if pidfd < 0 {
		return false
	}
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err == nil && n == 0
	}
}

// waitExit returns nil once the process behind pidfd exits (a pidfd polls readable then), or
// ctx's error once ctx is done, whichever comes first (internal/pollwait).
func waitExit(ctx context.Context, pidfd int) error {
	err := pollwait.Ready(ctx, pidfd)
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("peercred: wait for exit: %w", err)
	}
	return err
}

// readStat reads /proc/PID/stat. A missing process gives an error that matches fs.ErrNotExist.
func readStat(pid int) (Stat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Stat{}, fmt.Errorf("read the state of process %d: %w", pid, err)
	}
	s, err := parseStat(string(b))
	if err != nil {
		return Stat{}, fmt.Errorf("process %d: %w", pid, err)
	}
	return s, nil
}

// readAttrs reads the umask, niceness and resource limits of process pid (same user).
func readAttrs(pid int) (Attrs, error) {
	var a Attrs
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return a, fmt.Errorf("read the status of process %d: %w", pid, err)
	}
	if a.Umask, err = parseUmask(string(b)); err != nil {
		return a, fmt.Errorf("process %d: %w", pid, err)
	}
	if a.Nice, err = unix.Getpriority(unix.PRIO_PROCESS, pid); err != nil {
		return a, fmt.Errorf("the niceness of process %d: %w", pid, err)
	}
	for res := range a.Limits {
		var l unix.Rlimit
		if err := unix.Prlimit(pid, res, nil, &l); err != nil {
			return a, fmt.Errorf("resource limit %d of process %d: %w", res, pid, err)
		}
		a.Limits[res] = [2]uint64{l.Cur, l.Max}
	}
	return a, nil
}

// peerGone reports, without waiting, whether the other end of c has closed its side or gone
// away (POLLHUP or POLLRDHUP), even while another goroutine is blocked reading c.
func peerGone(c *net.UnixConn) bool {
	raw, err := c.SyscallConn()
	if err != nil {
		return true
	}
	gone := false
	if err := raw.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLRDHUP}}
		for {
			n, err := unix.Poll(fds, 0)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			gone = err != nil || n > 0 && fds[0].Revents&(unix.POLLHUP|unix.POLLRDHUP|unix.POLLERR|unix.POLLNVAL) != 0
			return
		}
	}); err != nil {
		return true
	}
	return gone
}

func passCred(c syscall.Conn) error {
	raw, err := c.SyscallConn()
	if err != nil {
		return fmt.Errorf("peercred: %w", err)
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_PASSCRED, 1)
	}); err != nil {
		return fmt.Errorf("peercred: %w", err)
	}
	if serr != nil {
		return fmt.Errorf("peercred: SO_PASSCRED: %w", serr)
	}
	return nil
}

// credSpace holds one SCM_CREDENTIALS message, and room for a few more control messages (a
// peer may send descriptors too; they are closed unread).
var credSpace = unix.CmsgSpace(unix.SizeofUcred) + unix.CmsgSpace(16*4)

func readCred(c *net.UnixConn, p []byte) (int, int, error) {
	oob := make([]byte, credSpace)
	n, oobn, _, _, err := c.ReadMsgUnix(p, oob)
	if n < 0 { // a failed read can report -1
		n = 0
	}
	if oobn < 0 {
		oobn = 0
	}
	pid := 0
	if oobn > 0 {
		msgs, perr := unix.ParseSocketControlMessage(oob[:oobn])
		if perr == nil {
			for _, m := range msgs {
				if cred, cerr := unix.ParseUnixCredentials(&m); cerr == nil {
					pid = int(cred.Pid)
				} else if fds, ferr := unix.ParseUnixRights(&m); ferr == nil {
					for _, fd := range fds {
						unix.Close(fd)
					}
				}
			}
		}
	}
	return n, pid, err
}
