package request

import (
	"time"

	"golang.org/x/sys/unix"
)

func init() {
	sys = &platform{ttyDev: ttyDev, bootTime: bootTime, clockTicks: 100, isTerminal: isTerminal}
	// clockTicks: USER_HZ, the unit of /proc/PID/stat's times, is 100 on every Linux.
}

// ttyDev is the device number of the terminal at path, encoded as the kernel writes tty_nr in
// /proc/PID/stat: minor's low byte, the major, then minor's high bits.
func ttyDev(path string) (int, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0, err
	}
	major, minor := unix.Major(uint64(st.Rdev)), unix.Minor(uint64(st.Rdev))
	return int(minor&0xff | major<<8 | (minor&^0xff)<<12), nil
}

// bootTime is now minus the time since boot (CLOCK_BOOTTIME counts suspended time too, as
// process start times do).
func bootTime() (time.Time, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return time.Time{}, err
	}
	return time.Now().Add(-time.Duration(ts.Nano())), nil
}

func isTerminal(fd uintptr) bool {
	_, err := unix.IoctlGetTermios(int(fd), unix.TCGETS)
	return err == nil
}
