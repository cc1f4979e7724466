package request

import "time"

// platform is what this package needs from the operating system, filled by that platform's
// file; nil elsewhere.
type platform struct {
	ttyDev     func(path string) (int, error) // a terminal's device number as /proc/PID/stat writes it
	bootTime   func() (time.Time, error)      // when the machine booted, on the wall clock
	clockTicks int                            // units of peercred.Stat.StartTime per second
	isTerminal func(fd uintptr) bool
}

var sys *platform
