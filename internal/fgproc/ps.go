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

// psArgs lists every process with four numeric columns and no header: a
// column titled with an empty string has none, and with every title empty
// no header line is printed. "ax" (BSD style: a first argument without a
// dash) selects every process in procps (Linux), macOS and the BSDs alike,
// where POSIX's -A is missing from FreeBSD's ps(1) synopsis before 2025.
// pid, ppid and pgid are POSIX keywords; tpgid is not, but procps, macOS,
// FreeBSD, OpenBSD and NetBSD all document it.
var psArgs = []string{"ax", "-o", "pid=,ppid=,pgid=,tpgid="}

// psTimeout bounds one ps run.
const psTimeout = 5 * time.Second

// psFamily reads process pid and its children from one run of ps.
func psFamily(pid int) (proc, []proc, error) {
	ctx, cancel := context.WithTimeout(context.Background(), psTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ps", psArgs...)
	// A clean environment: procps reads PS_FORMAT and PS_PERSONALITY, and
	// the numbers need no locale.
	cmd.Env = []string{"LC_ALL=C"}
	cmd.WaitDelay = time.Second // a stuck ps is killed by the context; this bounds reading its pipes after
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 200 {
			msg = "…" + msg[len(msg)-200:]
		}
		if msg != "" {
			return proc{}, nil, fmt.Errorf("ps %s: %w: %s", strings.Join(psArgs, " "), err, msg)
		}
		return proc{}, nil, fmt.Errorf("ps %s: %w", strings.Join(psArgs, " "), err)
	}
	return parsePS(out, pid)
}

// errNoProcess says the process was not in the table: it has exited.
var errNoProcess = errors.New("no such process")

// parsePS finds process pid and its children in ps output. Every line must
// hold four integers: anything else (a header, a missing keyword) is an
// error rather than a row skipped, so a ps that answers another question
// is never read as this one.
func parsePS(out []byte, pid int) (proc, []proc, error) {
	var (
		shell proc
		found bool
		kids  []proc
	)
	for n, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) != 4 {
			return proc{}, nil, fmt.Errorf("ps line %d is %q; want pid, ppid, pgid and tpgid", n+1, line)
		}
		var v [4]int
		for i, s := range f {
			x, err := strconv.Atoi(s)
			if err != nil {
				return proc{}, nil, fmt.Errorf("ps line %d is %q; want pid, ppid, pgid and tpgid", n+1, line)
			}
			v[i] = x
		}
		p := proc{PID: v[0], PPID: v[1], PGID: v[2], TPGID: v[3]}
		switch {
		case p.PID == pid:
			shell, found = p, true
		case p.PPID == pid:
			kids = append(kids, p)
		}
	}
	if !found {
		return proc{}, nil, fmt.Errorf("process %d: %w (ps does not list it)", pid, errNoProcess)
	}
	return shell, kids, nil
}
