package panerecord

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/libtmux/libtmux-mcp/broker/peercred"
	"github.com/libtmux/libtmux-mcp/broker/privfile"
)

// serverKind names a server's marker file, "<server>.server": the tmux server's pid, the time
// its process started, its socket's identity and path, which tell when that server is gone,
// and its records with it. For writes it before a Set is used, so every record of a live server
// has one beside it.
const serverKind = "server"

// serverLen is the length of the prefix that names a server in record files (Set.server).
const serverLen = 16

// unvouchedAge is how old a record file must be before sweep removes it when no live server
// vouches for it: a new claim file (a live taker locks it at once and links or removes it at
// once), or a record whose server marker is missing (its server was found gone while a process
// still wrote to it, or an earlier version of this program made it).
const unvouchedAge = time.Minute

// sweep removes from dir the records no one can need again, so the directory holds about what
// the live tmux servers use (without it every input record stayed for good, and each For read
// them all: 8,875 files on a developer's machine after a day of tests):
//   - every record of a server whose marker says it is gone, then the marker;
//   - a file older than unvouchedAge that no marker vouches for, or a new claim file as old.
//
// A file whose lock is held (a claim, an input under way) is never removed. Names that are not
// records are left alone.
func sweep(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	names, _ := d.Readdirnames(-1) // unsorted: sorting is not needed here
	d.Close()
	byServer := map[string][]string{}
	for _, n := range names {
		if server, ok := serverOf(n); ok {
			byServer[server] = append(byServer[server], n)
		}
	}
	for server, files := range byServer {
		marker := server + "." + serverKind
		vouched, gone := false, false
		for _, n := range files {
			if n == marker {
				vouched, gone = true, markerGone(filepath.Join(dir, n))
			}
		}
		kept := false
		for _, n := range files {
			path := filepath.Join(dir, n)
			switch {
			case n == marker:
				continue
			case gone:
			case vouched && !strings.Contains(n, newInfix):
				continue // a live server's record
			case !olderThan(path, unvouchedAge):
				kept = true
				continue
			}
			if !removeUnlocked(path) {
				kept = true
			}
		}
		if gone && !kept {
			os.Remove(filepath.Join(dir, marker))
		}
	}
}

// serverOf returns the server prefix of a record file's name: 16 hex digits, then "-" (a
// pane's record) or "." (the marker).
func serverOf(name string) (string, bool) {
	if len(name) <= serverLen || (name[serverLen] != '-' && name[serverLen] != '.') {
		return "", false
	}
	for _, c := range name[:serverLen] {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return "", false
		}
	}
	return name[:serverLen], true
}

// writeMarker writes the marker of the server on socket whose process is pid, unless one that
// is not gone is there: another process's marker of the same live server says the same. One
// that is gone (an earlier server with the same socket and pid, whose held records stayed) is
// replaced. The marker is written aside and renamed into place, so a reader never sees half
// of it.
func writeMarker(path, socket string, pid int) error {
	if _, err := os.Lstat(path); err == nil && !markerGone(path) {
		return nil
	}
	start, _ := peercred.StartTime(pid) // 0 when unknown: then only the pid is checked
	id := socketID(socket)              // "0" when unknown: then any server there counts
	tmp := newName(path)
	f, err := privfile.OpenNoFollow(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "%d %d %s %s\n", pid, start, id, socket)
	if err = errors.Join(err, f.Close()); err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// markerGone reports whether the server a marker describes is known to be gone: its process is
// (no process has its pid, it is a zombie, or it started at another time: another process took
// the pid), and its socket is not the one it made (a server started since on the same path made
// another) or takes no connection. The socket is asked only when the process looks gone: a
// server seen from another pid namespace (a container given the socket) still answers there. A
// marker that cannot be read says nothing is gone.
func markerGone(path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	fields := strings.SplitN(strings.TrimSuffix(string(b), "\n"), " ", 4)
	if len(fields) != 4 {
		return false
	}
	pid, err1 := strconv.Atoi(fields[0])
	start, err2 := strconv.ParseUint(fields[1], 10, 64)
	if err1 != nil || err2 != nil || pid <= 0 || !processGone(pid, start) {
		return false
	}
	id, socket := fields[2], fields[3]
	return (id != "0" && socketID(socket) != id) || !socketAnswers(socket)
}

// socketID tells the socket file at path from one made later at the same path: its inode and
// its modification time in nanoseconds ("INODE.NANOSECONDS"; a new file may get a freed inode
// back, as a tmux server started again on its socket does here, but not the same time). tmux
// changes a socket's mode (so its ctime), not its modification time. "0" when it cannot be
// read.
func socketID(path string) string {
	fi, err := os.Lstat(path)
	if err != nil {
		return "0"
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "0"
	}
	return fmt.Sprintf("%d.%d", st.Ino, fi.ModTime().UnixNano())
}

// processGone reports whether no process pid that started at start (0: at any time) runs.
func processGone(pid int, start uint64) bool {
	st, err := peercred.ReadStat(pid)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil {
		return false
	}
	return st.State == 'Z' || st.State == 'X' || (start != 0 && st.StartTime != start)
}

// socketAnswers reports whether a server accepts a connection on the Unix socket at path. The
// connection is closed at once: a tmux server drops a client that never says who it is.
func socketAnswers(path string) bool {
	if path == "" {
		return false
	}
	c, err := net.DialTimeout("unix", path, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// olderThan reports whether the file at path was last changed more than age ago.
func olderThan(path string, age time.Duration) bool {
	fi, err := os.Lstat(path)
	return err == nil && time.Since(fi.ModTime()) > age
}

// removeUnlocked removes the file at path unless another open file holds its lock, and
// reports whether it is gone.
func removeUnlocked(path string) bool {
	f, err := privfile.OpenNoFollow(path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil {
		return false
	}
	defer f.Close()
	if ok, err := privfile.TryLock(f); err != nil || !ok {
		return false
	}
	if !samePath(f, path) { // replaced (a claim taken over) after it was opened
		return false
	}
	err = os.Remove(path)
	return err == nil || errors.Is(err, fs.ErrNotExist)
}
