// Package peercred identifies the process at the other end of a Unix socket:
// its uid, gid and pid (SO_PEERCRED), a pidfd that follows that very process
// (SO_PEERPIDFD, or pidfd_open with a start-time check on kernels before
// 6.5), its start time, and a process generation that names one process for
// its whole life, so a reused pid is never mistaken for the process that
// connected.
//
// It reads identities and watches for exits; it decides nothing. Deciding
// whether a peer may enroll or spawn is package broker's job.
//
// Linux only: elsewhere every call answers ErrNotSupported.
package peercred

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"lukechampine.com/blake3"
)

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
	if p.PidFD >= 0 {
		closeFD(p.PidFD)
		p.PidFD = -1
	}
}

// parseStartTime reads field 22 from the text of /proc/PID/stat. Field 2 is
// the command name in parentheses and may itself hold spaces and
// parentheses, so fields are counted after the last ')'.
func parseStartTime(stat string) (uint64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("malformed stat line (no ')' after the command name): %q", stat)
	}
	fields := strings.Fields(stat[i+1:])
	// fields[0] is field 3 (the state), so field 22 is fields[19].
	if len(fields) < 20 {
		return 0, fmt.Errorf("stat line has %d fields after the command name; want at least 20", len(fields))
	}
	v, err := strconv.ParseUint(fields[19], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("stat field 22 (starttime): %w", err)
	}
	return v, nil
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
