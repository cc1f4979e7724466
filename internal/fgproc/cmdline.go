package fgproc

import "strings"

// readArgs reads process pid's arguments. ps answers unless a _linux.go
// file puts /proc first.
var readArgs = psArgsOf

// CommandString reports whether process pid, a shell, was started with a
// command string (-c, alone or in a cluster such as -lc, without -i): such
// a shell runs that string and exits, and never shows a prompt, where an
// interactive one reads its startup files first. An error means the
// arguments could not be read.
func CommandString(pid int) (bool, error) {
	read := readArgs
	if forcePS.Load() {
		read = psArgsOf
	}
	args, err := read(pid)
	if err != nil {
		return false, err
	}
	return commandString(args), nil
}

// commandString is CommandString's decision on a shell's arguments (its
// name first).
func commandString(args []string) bool {
	c := false
	for _, a := range args[min(1, len(args)):] {
		if len(a) < 2 || a[0] != '-' || a[1] == '-' {
			continue
		}
		if strings.ContainsRune(a[1:], 'i') {
			return false
		}
		c = c || strings.ContainsRune(a[1:], 'c')
	}
	return c
}

// psArgsOf reads process pid's arguments from one run of ps, split at
// spaces (ps joins them with one): enough to find the options.
func psArgsOf(pid int) ([]string, error) {
	out, err := psOf(pid, "args=")
	if err != nil {
		return nil, err
	}
	return strings.Fields(out), nil
}
