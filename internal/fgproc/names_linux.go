package fgproc

import (
	"bytes"
	"os"
	"strconv"
)

func init() { readGroupNames = procGroupNames }

// procGroupNames reads the names in group pgid from /proc/PID/stat of
// every process, and asks ps when /proc cannot be listed.
func procGroupNames(pgid int) ([]string, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return psGroupNames(pgid)
	}
	var names []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // exited since the listing
		}
		p, err := parseStat(b)
		if err != nil || p.PGID != pgid {
			continue
		}
		open, close := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
		if open < 0 || close < open {
			continue
		}
		name := string(b[open+1 : close])
		if p.PID == pgid {
			names = append([]string{name}, names...)
		} else {
			names = append(names, name)
		}
	}
	return names, nil
}
