package fgproc

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

func init() { readFamily = procFamily }

// procFamily reads process pid and its children from /proc, and asks ps
// when /proc cannot answer: not mounted, or a kernel without
// /proc/PID/task/TID/children (CONFIG_PROC_CHILDREN). A process that /proc
// does not list is gone; ps is not asked again.
func procFamily(pid int) (proc, []proc, error) {
	shell, kids, err := procfsFamily(pid)
	if err == nil || errors.Is(err, errNoProcess) {
		return shell, kids, err
	}
	shell, kids, psErr := psFamily(pid)
	if psErr != nil {
		return proc{}, nil, fmt.Errorf("%w; and %w", err, psErr)
	}
	return shell, kids, nil
}

// procfsFamily reads /proc/PID/stat of pid and of each child listed in
// /proc/PID/task/PID/children (a shell is one thread, so its main thread's
// children are all of them).
func procfsFamily(pid int) (proc, []proc, error) {
	id := strconv.Itoa(pid)
	b, err := procFile(pid, "stat")
	if err != nil {
		return proc{}, nil, err
	}
	shell, err := parseStat(b)
	if err != nil {
		return proc{}, nil, err
	}
	list, err := os.ReadFile("/proc/" + id + "/task/" + id + "/children")
	if err != nil {
		return proc{}, nil, err
	}
	var kids []proc
	for _, k := range strings.Fields(string(list)) {
		p, err := readStat(k)
		if errors.Is(err, fs.ErrNotExist) {
			continue // exited and reaped since the list was read: not running
		}
		if err != nil {
			return proc{}, nil, err
		}
		kids = append(kids, p)
	}
	return shell, kids, nil
}

// procFile reads /proc/PID/NAME. A process /proc does not list (while
// /proc itself answers) is errNoProcess; any other error is /proc's.
func procFile(pid int, name string) ([]byte, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/" + name)
	if errors.Is(err, fs.ErrNotExist) {
		if _, selfErr := os.Stat("/proc/self/stat"); selfErr == nil {
			return nil, fmt.Errorf("process %d: %w (/proc does not list it)", pid, errNoProcess)
		}
	}
	return b, err
}

// readStat reads the fields of /proc/PID/stat that a proc holds.
func readStat(pid string) (proc, error) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return proc{}, err
	}
	return parseStat(b)
}

// parseStat reads "pid (comm) state ppid pgrp session tty_nr tpgid …". The
// command name may hold spaces and parentheses, so the fields after it are
// counted from the last ')'.
func parseStat(b []byte) (proc, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return proc{}, fmt.Errorf("/proc stat %q: no ')' after the command name", b)
	}
	first, _, _ := strings.Cut(string(b), " ")
	pid, err := strconv.Atoi(first)
	if err != nil {
		return proc{}, fmt.Errorf("/proc stat %q: pid: %w", b, err)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 6 {
		return proc{}, fmt.Errorf("/proc stat %q: %d fields after the command name; want at least 6", b, len(f))
	}
	var v [3]int
	for k, at := range []int{1, 2, 5} { // ppid, pgrp, tpgid
		if v[k], err = strconv.Atoi(f[at]); err != nil {
			return proc{}, fmt.Errorf("/proc stat %q: field %d: %w", b, at+3, err)
		}
	}
	return proc{PID: pid, PPID: v[0], PGID: v[1], TPGID: v[2]}, nil
}
