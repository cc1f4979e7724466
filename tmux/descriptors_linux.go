//go:build linux

package tmux

import (
	"fmt"
	"os"
	"strings"
	"sync"
)

func init() { heldDescriptors = procDescriptors }

// spare is a descriptor held from start-up so that, with every other one taken, /proc/self/fd
// can still be listed: it is let go for the listing and taken again after.
var spare struct {
	sync.Mutex
	f *os.File
}

func init() { spare.f, _ = os.Open(os.DevNull) }

// procDescriptors says what this process's open descriptors are, from /proc/self/fd: how many
// pipes (tmux clients' output, waits), sockets (control connections, the broker) and files.
func procDescriptors() string {
	spare.Lock()
	defer spare.Unlock()
	if spare.f != nil {
		spare.f.Close()
	}
	entries, err := os.ReadDir("/proc/self/fd")
	spare.f, _ = os.Open(os.DevNull)
	if err != nil {
		return ""
	}
	var pipes, sockets, other int
	for _, e := range entries {
		target, err := os.Readlink("/proc/self/fd/" + e.Name())
		switch {
		case err != nil:
		case strings.HasPrefix(target, "pipe:"):
			pipes++
		case strings.HasPrefix(target, "socket:"):
			sockets++
		default:
			other++
		}
	}
	return fmt.Sprintf("%d open: %d pipes (tmux clients and waits), %d sockets (control connections, the broker), %d files and others", len(entries), pipes, sockets, other)
}
