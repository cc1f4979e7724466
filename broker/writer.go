package broker

import (
	"fmt"
	"net"
	"sync/atomic"

	"github.com/libtmux/libtmux-mcp/broker/peercred"
)

// foreignWriterError says that bytes on a connection were written by a process other than the
// one that connected: a child that inherited the descriptor (a background job, a command
// substitution in the prompt) tried to speak for the shell.
type foreignWriterError struct{ pid, want int }

func (e *foreignWriterError) Error() string {
	return fmt.Sprintf("process %d wrote on the connection of process %d (an inherited descriptor); dropped", e.pid, e.want)
}

// onlyFrom reads a connection whose every byte must come from one process: the one that
// connected, as SO_PEERCRED named it. The kernel attaches the writer's pid to each write
// (SO_PASSCRED, on since the listener) and never joins two writers' bytes in one read, so every
// line that enrolls, attaches, answers a run or spawns is known to come from that process, and
// an inherited descriptor is useless to anything else.
type onlyFrom struct {
	conn *net.UnixConn
	pid  atomic.Int64 // the one writer accepted; 0 once the connection is handed over
}

func newOnlyFrom(conn *net.UnixConn, pid int) *onlyFrom {
	o := &onlyFrom{conn: conn}
	o.pid.Store(int64(pid))
	return o
}

func (o *onlyFrom) Read(p []byte) (int, error) {
	n, pid, err := peercred.ReadCred(o.conn, p)
	if want := int(o.pid.Load()); n > 0 && want != 0 && pid != want {
		return 0, &foreignWriterError{pid: pid, want: want}
	}
	return n, err
}

// handOver stops the check: after SPAWN the connection belongs to the helper the shell started
// with it (a process of its own, which writes the records).
func (o *onlyFrom) handOver() { o.pid.Store(0) }
