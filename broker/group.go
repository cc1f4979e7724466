package broker

import (
	"fmt"
	"syscall"

	"github.com/libtmux/libtmux-mcp/broker/peercred"
)

// kill is kill(2); group_linux.go fills it, and elsewhere it stays nil.
var kill func(pid int, sig syscall.Signal) error

// signalGroup sends sig to every process in process group pgid (kill(-pgid, sig)); signal 0
// only checks that the group still has a member (a zombie counts). It refuses a pgid below 2,
// which would name this process's own group or every process. Off Linux it answers
// peercred.ErrNotSupported, as the rest of the broker does.
func signalGroup(pgid int, sig syscall.Signal) error {
	if kill == nil {
		return peercred.ErrNotSupported
	}
	if pgid < 2 {
		return fmt.Errorf("broker: no process group %d to signal", pgid)
	}
	return kill(-pgid, sig)
}
