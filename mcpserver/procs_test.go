package mcpserver

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// childrenRunning lists this process's descendant processes whose command
// line contains every one of words, read from /proc. Tests run in
// parallel, so a test names its own socket among the words.
func childrenRunning(t *testing.T, words ...string) []string {
	t.Helper()
	self := os.Getpid()
	parent := map[int]int{}
	cmdline := map[int]string{}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, _ := strconv.Atoi(filepath.Base(d))
		stat, err := os.ReadFile(d + "/stat")
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(stat), ')')
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 2 {
			continue
		}
		parent[pid], _ = strconv.Atoi(f[1])
		cl, _ := os.ReadFile(d + "/cmdline")
		cmdline[pid] = strings.ReplaceAll(string(cl), "\x00", " ")
	}
	var out []string
	for pid, cl := range cmdline {
		for p := parent[pid]; p > 1; p = parent[p] {
			if p == self {
				if containsAll(cl, words) {
					out = append(out, strconv.Itoa(pid)+": "+cl)
				}
				break
			}
		}
	}
	return out
}

func containsAll(s string, words []string) bool {
	for _, w := range words {
		if !strings.Contains(s, w) {
			return false
		}
	}
	return true
}
