package fgproc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// readAge says how long ago process pid started. ps answers unless a
// _linux.go file puts /proc first.
var readAge = psAge

// Age is how long ago process pid started: from /proc on Linux, from ps's
// elapsed time (etime, to the second) elsewhere and when /proc cannot
// answer. An error means it could not be read, the process being gone
// among the reasons.
func Age(pid int) (time.Duration, error) {
	if forcePS.Load() {
		return psAge(pid)
	}
	return readAge(pid)
}

// psAge reads process pid's elapsed time from one run of ps.
func psAge(pid int) (time.Duration, error) {
	out, err := psOf(pid, "etime=")
	if err != nil {
		return 0, err
	}
	return parseEtime(out)
}

// psOf runs ps for process pid alone with one column (keyword, titled
// "" so no header is printed) and returns what it printed, trimmed. A pid
// ps does not list is errNoProcess: procps, macOS and the BSDs exit 1
// with nothing printed; a missing or failing ps is another error.
func psOf(pid int, keyword string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), psTimeout)
	defer cancel()
	args := []string{"-o", keyword, "-p", strconv.Itoa(pid)}
	cmd := exec.CommandContext(ctx, "ps", args...)
	cmd.Env = []string{"LC_ALL=C"} // as psFamily's
	cmd.WaitDelay = time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && len(bytes.TrimSpace(out)) == 0 && stderr.Len() == 0 {
			return "", fmt.Errorf("process %d: %w (ps does not list it)", pid, errNoProcess)
		}
		return "", fmt.Errorf("ps %s: %w: %.200s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// parseEtime reads ps's etime, "[[dd-]hh:]mm:ss".
func parseEtime(s string) (time.Duration, error) {
	bad := fmt.Errorf("ps etime %q; want [[dd-]hh:]mm:ss", s)
	days := 0
	if d, rest, ok := strings.Cut(s, "-"); ok {
		n, err := strconv.Atoi(d)
		if err != nil || n < 0 {
			return 0, bad
		}
		days, s = n, rest
	}
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 || (days > 0 && len(parts) != 3) {
		return 0, bad
	}
	secs := 0
	for _, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return 0, bad
		}
		secs = secs*60 + n
	}
	return time.Duration(days)*24*time.Hour + time.Duration(secs)*time.Second, nil
}
