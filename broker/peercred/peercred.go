// Package peercred identifies the process at the other end of a Unix socket:
// its uid, gid and pid (SO_PEERCRED), a pidfd that follows that very process
// (SO_PEERPIDFD, or pidfd_open with a start-time check on kernels before
// 6.5), its start time, and a process generation that names one process for
// its whole life, so a reused pid is never mistaken for the process that
// connected. It also names the writer of every read from a connection
// (SO_PASSCRED), tells when a connection's peer hung up, reads what /proc
// says about a process (its state, its umask, niceness and limits), and
// waits for a pidfd's exit.
//
// It reads identities and watches for exits; it decides nothing. Deciding
// whether a peer may enroll or spawn is package broker's job, and the
// broker's private files (locks, FIFOs) are package privfile's.
//
// Linux only: peercred_linux.go fills the platform table sys; elsewhere it
// stays nil, and every call that needs it answers ErrNotSupported (or false,
// or does nothing, as each function says).
package peercred

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"net"
	"syscall"

	"lukechampine.com/blake3"
)

// platform is what this package needs from the operating system. One
// variable per platform, filled by that platform's file, instead of a stub
// of every function for the others.
type platform struct {
	fromConn  func(*net.UnixConn) (Peer, error)
	bootID    func() (string, error)
	alive     func(pidfd int) bool
	waitExit  func(ctx context.Context, pidfd int) error
	closeFD   func(fd int)
	readStat  func(pid int) (Stat, error)
	readAttrs func(pid int) (Attrs, error)
	peerGone  func(*net.UnixConn) bool
	passCred  func(syscall.Conn) error
	readCred  func(c *net.UnixConn, p []byte) (n, pid int, err error)
}

// sys is this platform's implementation; nil where none exists.
var sys *platform

// FromConn identifies the process at the other end of c; the caller owns the returned pidfd
// (Peer.Close). A peer that has exited by the time its identity is read gives ErrPeerExited: no
// pidfd can then be trusted to name it.
func FromConn(c *net.UnixConn) (Peer, error) {
	if sys == nil {
		return Peer{PidFD: -1}, ErrNotSupported
	}
	return sys.fromConn(c)
}

// BootID identifies this boot of the machine (/proc/sys/kernel/random/boot_id).
func BootID() (string, error) {
	if sys == nil {
		return "", ErrNotSupported
	}
	return sys.bootID()
}

// Alive reports whether the process behind pidfd has not exited yet. A zombie has exited. An
// invalid descriptor is not alive; nothing is alive where pidfds do not exist.
func Alive(pidfd int) bool { return sys != nil && sys.alive(pidfd) }

// WaitExit returns nil once the process behind pidfd exits, or ctx's error once ctx is done,
// whichever comes first.
func WaitExit(ctx context.Context, pidfd int) error {
	if sys == nil {
		return ErrNotSupported
	}
	return sys.waitExit(ctx, pidfd)
}

// ReadStat reads /proc/PID/stat. A missing process gives an error that matches fs.ErrNotExist.
func ReadStat(pid int) (Stat, error) {
	if sys == nil {
		return Stat{}, ErrNotSupported
	}
	return sys.readStat(pid)
}

// StartTime reads when process pid started: field 22 of /proc/PID/stat, in clock ticks after
// boot. It does not change on exec. A missing process gives an error that matches
// fs.ErrNotExist.
func StartTime(pid int) (uint64, error) {
	st, err := ReadStat(pid)
	return st.StartTime, err
}

// ReadAttrs reads the umask, niceness and resource limits of process pid (same user).
func ReadAttrs(pid int) (Attrs, error) {
	if sys == nil {
		return Attrs{}, ErrNotSupported
	}
	return sys.readAttrs(pid)
}

// PassCred asks the kernel to report, with every read from c, which process wrote the bytes
// (SO_PASSCRED); ReadCred then tells them apart. On a listener, every connection it accepts has
// it from the start, so even bytes written before the accept carry their writer (turned on
// after them, they carry none).
func PassCred(c syscall.Conn) error {
	if sys == nil {
		return ErrNotSupported
	}
	return sys.passCred(c)
}

// ReadCred reads from c, on which PassCred is on, like Read, and reports the pid (in this pid
// namespace) of the process that wrote the bytes read. The kernel never joins the writes of two
// processes in one read, so every byte of p[:n] comes from pid. pid is 0 when the kernel gave no
// credentials.
func ReadCred(c *net.UnixConn, p []byte) (n, pid int, err error) {
	if sys == nil {
		return 0, 0, ErrNotSupported
	}
	return sys.readCred(c, p)
}

// PeerGone reports, without waiting, whether the other end of c has closed its side or gone
// away, even while another goroutine is blocked reading c.
func PeerGone(c *net.UnixConn) bool { return sys != nil && sys.peerGone(c) }

// ErrNotSupported is what every call answers off Linux.
var ErrNotSupported = errors.New("peer credentials are not supported on this platform; tmux_run needs Linux")

// ErrPeerExited means the process that connected was already gone when its
// identity was read, so no pidfd can safely name it.
var ErrPeerExited = errors.New("the peer process has exited")

// Peer is the process at the other end of a socket.
type Peer struct {
	UID, GID  uint32
	PID       int    // in this process's pid namespace
	PidFD     int    // follows the process, not the pid; -1 when none; released by Close
	StartTime uint64 // /proc/PID/stat field 22: clock ticks after boot; unchanged by exec
}

// Close releases the pidfd. It is safe to call more than once.
func (p *Peer) Close() {
	if p.PidFD >= 0 && sys != nil {
		sys.closeFD(p.PidFD)
		p.PidFD = -1
	}
}

// generationDomain separates process generations from every other BLAKE3
// use in the program.
const generationDomain = "libtmux-mcp process generation v1"

// ProcessGeneration names one process for its whole life: 32 lowercase hex
// digits, the first 16 bytes of BLAKE3-256 over
//
//	domain NUL | uint32 len(bootID) | bootID | uint64 pid | uint64 start
//
// (integers big-endian). Each field has a fixed width or a length, so no two
// inputs share an encoding. A pid is only reused after a reboot (new boot
// id) or by a process with a later start time.
func ProcessGeneration(bootID string, pid int, start uint64) string {
	b := make([]byte, 0, len(generationDomain)+1+4+len(bootID)+8+8)
	b = append(b, generationDomain...)
	b = append(b, 0)
	b = binary.BigEndian.AppendUint32(b, uint32(len(bootID)))
	b = append(b, bootID...)
	b = binary.BigEndian.AppendUint64(b, uint64(pid))
	b = binary.BigEndian.AppendUint64(b, start)
	sum := blake3.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// validBootID reports whether s looks like the kernel's boot id: 36
// characters of lowercase hex and dashes.
func validBootID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f':
		default:
			return false
		}
	}
	return true
}
