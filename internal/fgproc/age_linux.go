package fgproc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

func init() {
	readAge = procAge
	readArgs = procArgs
}

// procArgs reads process pid's arguments from /proc/PID/cmdline, and asks
// ps when /proc cannot answer. A process that shows none (a kernel thread,
// a zombie, or one caught in exec before its new arguments are set up: the
// moment a parent's exec.Cmd.Start returns can fall there) is an error, not
// a program without options.
func procArgs(pid int) ([]string, error) {
	b, err := procFile(pid, "cmdline")
	if errors.Is(err, errNoProcess) {
		return nil, err
	}
	if err != nil {
		return psArgsOf(pid)
	}
	if len(b) == 0 {
		return nil, fmt.Errorf("process %d shows no arguments (a kernel thread, a zombie, or in the middle of exec)", pid)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00"), nil
}

// userHZ is the unit of the start time in /proc/PID/stat: USER_HZ, which
// Linux fixes at 100 for programs on every architecture Go builds for.
const userHZ = 100

// procAge reads process pid's start time (field 22 of /proc/PID/stat, in
// clock ticks since boot) against the time since boot (/proc/uptime),
// and asks ps when /proc cannot answer.
func procAge(pid int) (time.Duration, error) {
	stat, err := procFile(pid, "stat")
	if errors.Is(err, errNoProcess) {
		return 0, err
	}
	if err != nil {
		return psAge(pid)
	}
	uptime, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return psAge(pid)
	}
	return parseAge(stat, uptime)
}

// parseAge is the age of the process whose /proc/PID/stat is stat, at the
// /proc/uptime reading uptime ("seconds-since-boot idle-seconds").
func parseAge(stat, uptime []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc stat %q: no ')' after the command name", stat)
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 20 {
		return 0, fmt.Errorf("/proc stat %q: %d fields after the command name; want at least 20", stat, len(f))
	}
	ticks, err := strconv.ParseUint(f[19], 10, 64) // field 22: starttime
	if err != nil {
		return 0, fmt.Errorf("/proc stat %q: field 22: %w", stat, err)
	}
	up, _, _ := strings.Cut(strings.TrimSpace(string(uptime)), " ")
	secs, err := strconv.ParseFloat(up, 64)
	if err != nil {
		return 0, fmt.Errorf("/proc/uptime %q: %w", uptime, err)
	}
	age := time.Duration(secs*float64(time.Second)) - time.Duration(ticks)*time.Second/userHZ
	return max(age, 0), nil
}
