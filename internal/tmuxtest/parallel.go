package tmuxtest

import (
	"flag"
	"runtime"
	"strconv"
)

// WaitingParallel sets go test's -parallel to twice GOMAXPROCS unless the
// command line gave one. Call it first in the TestMain of a package whose
// parallel tests own tmux servers: they spend much of their time waiting
// for tmux and shells, which the default (GOMAXPROCS) leaves the cores idle
// through. Measured on 2 cores: mcpserver's tests 48 s at -parallel 2, 36 s
// at 4; integration's 34 s and 26 s.
func WaitingParallel() {
	if !flag.Parsed() {
		flag.Parse()
	}
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		flag.Set("test.parallel", strconv.Itoa(2*runtime.GOMAXPROCS(0)))
	}
}
