package tmux

import (
	"path/filepath"
	"strconv"
	"strings"
)

// ClientEnv is what a process inside tmux learns from $TMUX: the socket
// path, the server's pid and the session's number.
type ClientEnv struct {
	Socket    string
	ServerPID int
	Session   int
}

// ParseTMUX reads a $TMUX value ("socket,pid,session"). The socket path may
// itself hold commas, so the two numbers are taken from the right.
func ParseTMUX(v string) (ClientEnv, bool) {
	rest, session, ok1 := cutLast(v)
	socket, pid, ok2 := cutLast(rest)
	if !ok1 || !ok2 || socket == "" {
		return ClientEnv{}, false
	}
	p, err1 := strconv.Atoi(pid)
	s, err2 := strconv.Atoi(session)
	if err1 != nil || err2 != nil || p <= 0 || s < 0 {
		return ClientEnv{}, false
	}
	return ClientEnv{Socket: socket, ServerPID: p, Session: s}, true
}

func cutLast(v string) (string, string, bool) {
	i := strings.LastIndexByte(v, ',')
	if i < 0 {
		return "", "", false
	}
	return v[:i], v[i+1:], true
}

// Names reports whether e names the server info describes: the same pid
// and the same socket, both paths resolved.
func (e ClientEnv) Names(info ServerInfo) bool {
	return e.ServerPID == info.PID && SamePath(e.Socket, info.SocketPath)
}

// SamePath reports whether two paths name the same file once symlinks are
// resolved; a path that cannot be resolved matches nothing.
func SamePath(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}
