package peercred

import (
	"fmt"
	"strconv"
	"strings"
)

// Stat is what /proc/PID/stat says about a process that the broker checks on every run.
type Stat struct {
	Comm      string // field 2 without its parentheses: the executable's name, at most 15 bytes
	State     byte   // R, S, D, Z, X, ... (field 3)
	PPID      int    // field 4: the tmux server, for a pane's own process
	PGRP      int    // field 5: its process group
	TTY       int    // field 7: the controlling terminal's device number; 0 once it hung up
	TPGID     int    // field 8: the terminal's foreground process group
	StartTime uint64 // field 22
	// StartStack (field 28) is where the process's stack began at its last execve: with address
	// space randomization each exec moves it, so a change says the process exec'd. 0 when the
	// kernel hides it (another user's process).
	StartStack uint64
}

// parseStat reads the fields of Stat from the text of /proc/PID/stat. Field 2 is the command
// name in parentheses and may itself hold spaces and parentheses, so fields are counted after
// the last ')'.
func parseStat(stat string) (Stat, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return Stat{}, fmt.Errorf("malformed stat line (no ')' after the command name): %q", stat)
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return Stat{}, fmt.Errorf("stat line has %d fields after the command name; want at least 20", len(f))
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgrp, err2 := strconv.Atoi(f[2])
	tty, err3 := strconv.Atoi(f[4])
	tpgid, err4 := strconv.Atoi(f[5])
	start, err5 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || err5 != nil {
		return Stat{}, fmt.Errorf("malformed stat line %q", stat)
	}
	comm := ""
	if j := strings.IndexByte(stat, '('); j >= 0 && j < i {
		comm = stat[j+1 : i]
	}
	var stack uint64
	if len(f) > 25 {
		stack, _ = strconv.ParseUint(f[25], 10, 64)
	}
	return Stat{Comm: comm, State: f[0][0], PPID: ppid, PGRP: pgrp, TTY: tty, TPGID: tpgid, StartTime: start, StartStack: stack}, nil
}

// Attrs are the process attributes a script inherits from the shell that tmux_run must match at
// the moment of a run, beyond its directory and environment.
type Attrs struct {
	Umask  int           // from /proc/PID/status
	Nice   int           // getpriority(PRIO_PROCESS, PID), as the raw system call reports it
	Limits [16][2]uint64 // every resource's soft and hard limit (prlimit)
}

// SameInherited reports whether a helper started with attributes a runs a script as a shell with
// attributes b would: the same limits and niceness. (The umask goes with each job.)
func (a Attrs) SameInherited(b Attrs) bool { return a.Nice == b.Nice && a.Limits == b.Limits }

// parseUmask reads the Umask line of /proc/PID/status (Linux 4.7 and later).
func parseUmask(status string) (int, error) {
	for line := range strings.Lines(status) {
		if v, ok := strings.CutPrefix(line, "Umask:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 8, 32)
			if err != nil {
				return 0, fmt.Errorf("malformed Umask line %q", line)
			}
			return int(n), nil
		}
	}
	return 0, fmt.Errorf("no Umask line in /proc/PID/status (Linux 4.7 or later is needed)")
}
