// Package peercred identifies the process at the other end of a Unix
// socket: its uid and pid (SO_PEERCRED), a pidfd that follows that exact
// process (SO_PEERPIDFD, or pidfd_open with a start-time re-check on
// kernels before 6.5), and a process generation that changes when the pid
// is reused.
//
// Linux only; elsewhere FromConn answers ErrNotSupported.
package peercred

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"lukechampine.com/blake3"
)

// ErrNotSupported is returned on platforms without peer pidfds.
var ErrNotSupported = errors.New("peer credentials are not supported on this platform; tmux_run needs Linux")

// Peer is the process at the other end of a socket.
type Peer struct {
	UID       uint32
	GID       uint32
	PID       int
	PidFD     int    // -1 when none; owned by Peer, released by Close
	StartTime uint64 // clock ticks after boot, /proc/PID/stat field 22
}

// Close releases the pidfd.
func (p *Peer) Close() {
	if p.PidFD >= 0 {
		closeFD(p.PidFD)
		p.PidFD = -1
	}
}

// StartTime reads field 22 of /proc/PID/stat: when the process started, in
// clock ticks after boot. It does not change on exec.
func StartTime(pid int) (uint64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	return parseStartTime(string(b))
}

// parseStartTime reads the start time from a stat line. The command name
// (field 2) may hold spaces and parentheses, so fields are counted after
// the last ')'.
func parseStartTime(stat string) (uint64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("malformed stat line %q", stat)
	}
	fields := strings.Fields(stat[i+1:])
	// fields[0] is field 3 (state), so field 22 is fields[19].
	if len(fields) < 20 {
		return 0, fmt.Errorf("stat line has %d fields after the name; want at least 20", len(fields))
	}
	return strconv.ParseUint(fields[19], 10, 64)
}

// BootID identifies this boot of the machine.
func BootID() (string, error) {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", fmt.Errorf("read the boot id: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// ProcessGeneration names one process for its whole life: 32 hex digits
// derived from the boot, the pid and the start time.
func ProcessGeneration(bootID string, pid int, start uint64) string {
	sum := blake3.Sum256([]byte(fmt.Sprintf("process\x00%s\x00%d\x00%d", bootID, pid, start)))
	return hex.EncodeToString(sum[:16])
}
