package fgproc

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
)

// readGroupNames lists the command names of the processes in process
// group pgid. ps answers unless a _linux.go file puts /proc first.
var readGroupNames = psGroupNames

// ForegroundNames names the programs in the foreground process group of
// the terminal that process pid (a pane's shell) controls, the group's
// leader first: what holds the terminal when the shell is not at its
// prompt (a pager under a subshell, say, where tmux names only the
// subshell). It is advice for a message: an error means the facts could
// not be read, and callers then say less.
func ForegroundNames(pid int) ([]string, error) {
	read := readFamily
	if forcePS.Load() {
		read = psFamily
	}
	shell, _, err := read(pid)
	if err != nil {
		return nil, err
	}
	if shell.TPGID <= 0 {
		return nil, nil
	}
	return readGroupNames(shell.TPGID)
}

// psGroupNames reads the names in group pgid from one run of ps.
func psGroupNames(pgid int) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), psTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ps", "ax", "-o", "pid=,pgid=,comm=")
	cmd.Env = []string{"LC_ALL=C"}
	cmd.WaitDelay = psTimeout
	out, err := cmd.Output()
	if err != nil {
		return nil, err
	}
	return parseGroupNames(string(out), pgid), nil
}

// parseGroupNames picks the names of group pgid from "pid pgid comm"
// lines, the leader (pid == pgid) first.
func parseGroupNames(out string, pgid int) []string {
	var names []string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		pid, err1 := strconv.Atoi(f[0])
		group, err2 := strconv.Atoi(f[1])
		if err1 != nil || err2 != nil || group != pgid {
			continue
		}
		name := strings.Join(f[2:], " ")
		if pid == pgid {
			names = append([]string{name}, names...)
		} else {
			names = append(names, name)
		}
	}
	return names
}
