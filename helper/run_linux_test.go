//go:build linux

package helper_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/libtmux/libtmux-mcp/helper/job"
	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
)

const (
	// recordTimeout bounds every wait for a record or an exit that has no tighter bound. It is
	// generous: under -race with parallel tests a helper can be slow to start.
	recordTimeout = 30 * time.Second
	// stopWithin is how soon a stop must end the run and leave no live process in the script's
	// process group.
	stopWithin = 2 * time.Second
)

var (
	binDir     string
	buildOnce  sync.Once
	helperPath string
	buildErr   error
)

const testRunID = "0123456789abcdef0123456789abcdef"

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "libtmux-mcp-helper-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// helperBinary builds cmd/libtmux-mcp-helper once per test run, with -race when the tests run
// with it.
func helperBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		path := filepath.Join(binDir, "libtmux-mcp-helper")
		args := []string{"build", "-o", path}
		if raceEnabled {
			args = append(args, "-race")
		}
		args = append(args, helperCommand)
		if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
			return
		}
		helperPath = path
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return helperPath
}

// launch says how to start the helper.
type launch struct {
	dir string   // its working directory; the test's if empty
	env []string // its environment; the test's if nil
}

// fakeBroker plays the broker on one end of a socketpair; the helper has the other as fd 3.
type fakeBroker struct {
	t      *testing.T
	conn   net.Conn
	in     *bufio.Reader
	cmd    *exec.Cmd
	stdio  bytes.Buffer  // what the helper wrote to its own stdout and stderr: nothing, ever
	exited chan struct{} // closed when cmd.Wait has returned
}

func startHelper(t *testing.T, l launch) *fakeBroker {
	t.Helper()
	bin := helperBinary(t)
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("socketpair: %v", err)
	}
	helperEnd := os.NewFile(uintptr(fds[0]), "helper end")
	brokerEnd := os.NewFile(uintptr(fds[1]), "broker end")
	conn, err := net.FileConn(brokerEnd)
	brokerEnd.Close()
	if err != nil {
		t.Fatalf("broker end: %v", err)
	}
	// fd 4 stands for a descriptor the shell had open: the script must not inherit it.
	stray, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	// Start the helper as an enrolled zsh's background job arrives: with SIGINT and SIGQUIT
	// ignored (here SIGHUP, SIGTERM and SIGPIPE too), which exec preserves.
	cmd := exec.Command("/bin/sh", "-c", `trap '' INT QUIT HUP TERM PIPE; exec "$0" serve`, bin)
	cmd.ExtraFiles = []*os.File{helperEnd, stray}
	cmd.Dir, cmd.Env = l.dir, l.env
	b := &fakeBroker{t: t, conn: conn, in: bufio.NewReader(conn), cmd: cmd, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = &b.stdio, &b.stdio
	cmd.WaitDelay = time.Second
	err = cmd.Start()
	helperEnd.Close()
	stray.Close()
	if err != nil {
		conn.Close()
		t.Fatalf("starting the helper: %v", err)
	}
	go func() {
		_ = cmd.Wait()
		close(b.exited)
	}()
	t.Cleanup(func() {
		conn.Close()
		select {
		case <-b.exited:
		case <-time.After(recordTimeout):
			t.Errorf("helper %d still running at cleanup; killing it", cmd.Process.Pid)
			_ = cmd.Process.Kill()
			<-b.exited
		}
	})
	return b
}

func newJob(script string) job.Job {
	return job.Job{
		RunID:       testRunID,
		Digest:      job.Digest([]byte(script)),
		StdoutLimit: job.DefaultOutput,
		StderrLimit: job.DefaultOutput,
		Umask:       0o22,
		Dir:         "/",
		Env:         os.Environ(),
		Script:      []byte(script),
	}
}

// done closes the broker's end, which ends a resident helper, and checks it exits with want.
func (b *fakeBroker) done(want int) {
	b.t.Helper()
	b.conn.Close()
	if code := b.exitCode(recordTimeout); code != want {
		b.t.Errorf("helper exit status = %d; want %d", code, want)
	}
}

func (b *fakeBroker) send(jb job.Job) {
	b.t.Helper()
	if err := job.WriteJob(b.conn, jb); err != nil {
		b.t.Fatalf("WriteJob: %v", err)
	}
}

// record reads the next record, waiting at most timeout.
func (b *fakeBroker) record(timeout time.Duration) (job.Record, error) {
	if err := b.conn.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		return job.Record{}, err
	}
	return job.ReadRecord(b.in)
}

// outcome is what the broker learned from one run.
type outcome struct {
	started        job.Record
	stdout, stderr []byte
	final          job.Record
}

// started reads the first record, which must be started, and kills whatever is left of the
// script's process group when the test ends.
func (b *fakeBroker) started() job.Record {
	b.t.Helper()
	rec, err := b.record(recordTimeout)
	if err != nil {
		b.t.Fatalf("reading the started record: %v", err)
	}
	if rec.Kind != job.KindStarted || rec.PID != rec.PGID {
		b.t.Fatalf("first record = %+v; want started with pid == pgid", rec)
	}
	b.t.Cleanup(func() {
		// Only while members live: they keep the group id from being reused.
		if len(liveMembers(rec.PGID)) > 0 {
			_ = unix.Kill(-rec.PGID, unix.SIGKILL)
		}
	})
	return rec
}

// rest reads output records up to the final one, waiting at most timeout in all.
func (b *fakeBroker) rest(o *outcome, timeout time.Duration) {
	b.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		rec, err := b.record(time.Until(deadline))
		if err != nil {
			b.t.Fatalf("after %d stdout and %d stderr bytes: reading a record: %v", len(o.stdout), len(o.stderr), err)
		}
		switch {
		case rec.Kind == job.KindStdout:
			o.stdout = append(o.stdout, rec.Data...)
		case rec.Kind == job.KindStderr:
			o.stderr = append(o.stderr, rec.Data...)
		case rec.Final():
			o.final = rec
			return
		default:
			b.t.Fatalf("unexpected record %+v after started", rec)
		}
	}
}

// collect reads a whole run: started, output, final.
func (b *fakeBroker) collect() outcome {
	b.t.Helper()
	o := outcome{started: b.started()}
	b.rest(&o, recordTimeout)
	return o
}

// exitCode waits for the helper to exit and returns its status. The helper must have written
// nothing to its own stdout and stderr.
func (b *fakeBroker) exitCode(timeout time.Duration) int {
	b.t.Helper()
	select {
	case <-b.exited:
	case <-time.After(timeout):
		b.t.Fatalf("helper still running after %v", timeout)
	}
	if b.stdio.Len() > 0 {
		b.t.Errorf("helper wrote %q to its own stdout or stderr; want nothing", b.stdio.Bytes())
	}
	return b.cmd.ProcessState.ExitCode()
}

// liveMembers lists the processes of group pgid that are not zombies. A zombie is dead, and may
// wait a while for its reaper: pid 1 of some sandboxes reaps orphans only every few seconds.
func liveMembers(pgid int) []string {
	if unix.Kill(-pgid, 0) == unix.ESRCH {
		return nil
	}
	procs, _ := os.ReadDir("/proc")
	var live []string
	for _, p := range procs {
		if _, err := strconv.Atoi(p.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", p.Name(), "stat"))
		if err != nil {
			continue
		}
		// "pid (comm) state ppid pgrp ...": comm may hold spaces, so split after the last ')'.
		i := bytes.LastIndexByte(stat, ')')
		f := strings.Fields(string(stat[i+1:]))
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" && f[0] != "X" {
			live = append(live, fmt.Sprintf("%s %s", p.Name(), stat[:i+1]))
		}
	}
	return live
}

// waitGroupGone polls until group pgid has no live member, failing the test after within.
func waitGroupGone(t *testing.T, pgid int, within time.Duration) {
	t.Helper()
	var live []string
	tmuxtest.Eventually(t, within, fmt.Sprintf("process group %d ending", pgid), func() bool {
		live = liveMembers(pgid)
		return len(live) == 0
	}, func() string { return fmt.Sprintf("live members: %q", live) })
}

// compareOutput reports a difference between two outputs, briefly when they are long.
func compareOutput(t *testing.T, name string, got []byte, want string) {
	t.Helper()
	if string(got) == want {
		return
	}
	if len(got) < 200 && len(want) < 200 {
		t.Errorf("%s = %q; want %q", name, got, want)
		return
	}
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	t.Errorf("%s: got %d bytes, want %d; they first differ at byte %d", name, len(got), len(want), i)
}

func exited(status int) job.Record { return job.Record{Kind: job.KindExited, Status: status} }
func signaled(signo int) job.Record {
	return job.Record{Kind: job.KindSignaled, Signal: signo}
}
func overflow(stream string) job.Record {
	return job.Record{Kind: job.KindOverflow, Stream: stream}
}

func TestRun(t *testing.T) {
	tests := []struct {
		name      string
		script    string
		edit      func(*job.Job) // changes to the default job, if any
		want      job.Record     // the final record
		stdout    string
		stderr    string
		stderrHas string // checked instead of stderr when the exact text is the shell's
		groupGone bool   // no live process may be left in the group soon after the final record
		check     func(t *testing.T, b *fakeBroker, o outcome)
	}{
		{name: "exit 0", script: "exit 0", want: exited(0)},
		{name: "exit 3", script: "exit 3", want: exited(3)},
		{name: "command not found is 127", script: "no_such_command_libtmux_mcp_test", want: exited(127), stderrHas: "not found"},
		// A script is never read as options of sh: "-x" alone would be "-c requires an argument"
		// (exit 2); as a script it is a command that is not found.
		{name: "a script beginning with a dash is a script", script: "-x", want: exited(127), stderrHas: "not found"},
		{name: "a script beginning with a plus is a script", script: "+x; echo ran", want: exited(0), stdout: "ran\n", stderrHas: "not found"},
		{name: "SIGKILL", script: "kill -KILL $$", want: signaled(9)},
		// The helper was started with these ignored; the script must get them at their defaults.
		{name: "SIGTERM", script: "kill -TERM $$; echo survived", want: signaled(15)},
		{name: "SIGINT", script: "kill -INT $$; echo survived", want: signaled(2)},
		{name: "SIGQUIT", script: "ulimit -c 0; kill -QUIT $$; echo survived", want: signaled(3)},
		{name: "SIGHUP", script: "kill -HUP $$; echo survived", want: signaled(1)},
		{name: "SIGPIPE", script: "kill -PIPE $$; echo survived", want: signaled(13)},
		{name: "stdout and stderr stay separate", script: "echo out; echo err >&2", want: exited(0), stdout: "out\n", stderr: "err\n"},
		{name: "binary output", script: `printf '\377\000\001'`, want: exited(0), stdout: "\xff\x00\x01"},
		{name: "stderr only with a status", script: "echo only >&2; exit 42", want: exited(42), stderr: "only\n"},
		{name: "stdin is empty", script: "cat; echo rc=$?", want: exited(0), stdout: "rc=0\n"},
		{
			name: "limit 0 without output", script: "exit 0",
			edit: func(j *job.Job) { j.StdoutLimit, j.StderrLimit = 0, 0 },
			want: exited(0),
		},
		{
			name: "output exactly at the ceiling", script: "head -c 262144 /dev/zero",
			edit: func(j *job.Job) { j.StdoutLimit = job.MaxOutput },
			want: exited(0), stdout: strings.Repeat("\x00", job.MaxOutput),
		},
		{
			// A background run's streams: every byte goes to the broker, nothing overflows.
			name: "unlimited streams", script: "head -c 1000000 /dev/zero; head -c 300000 /dev/zero >&2; exit 4",
			edit: func(j *job.Job) { j.StdoutLimit, j.StderrLimit = job.Unlimited, job.Unlimited },
			want: exited(4), stdout: strings.Repeat("\x00", 1000000), stderr: strings.Repeat("\x00", 300000),
		},
		{
			name: "limit 0 with output", script: "echo x",
			edit: func(j *job.Job) { j.StdoutLimit = 0 },
			want: overflow(job.StreamStdout), groupGone: true,
		},
		{
			// The sh ignores SIGTERM, so only the SIGKILL after the grace stops it.
			name: "stdout over its limit", script: "trap '' TERM; while :; do echo 0123456789; done",
			edit: func(j *job.Job) { j.StdoutLimit = 1000 },
			want: overflow(job.StreamStdout), stdout: strings.Repeat("0123456789\n", 91)[:1000], groupGone: true,
		},
		{
			name: "stderr over its limit", script: "echo 0123456789 >&2; sleep 30",
			edit: func(j *job.Job) { j.StderrLimit = 5 },
			want: overflow(job.StreamStderr), stderr: "01234", groupGone: true,
		},
		{
			// The sh completes; the sleep holds the pipes, which are drained briefly, then closed.
			name: "background descendant holds the pipes", script: "sleep 30 & echo bg",
			want: exited(0), stdout: "bg\n",
		},
		{
			name:   "inherited descriptors are not passed on",
			script: `for fd in 3 4; do if [ -e /proc/$$/fd/$fd ]; then echo "fd $fd is open"; fi; done`,
			want:   exited(0),
		},
		{
			name: "own session and process group", script: "cut -d' ' -f5,6 /proc/$$/stat",
			want: exited(0),
			check: func(t *testing.T, b *fakeBroker, o outcome) {
				// The sh leads its group, in the session the helper (same pid as its wrapper) leads.
				want := fmt.Sprintf("%d %d\n", o.started.PID, b.cmd.Process.Pid)
				compareOutput(t, "pgrp and session", o.stdout, want)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := startHelper(t, launch{})
			jb := newJob(tt.script)
			if tt.edit != nil {
				tt.edit(&jb)
			}
			b.send(jb)
			o := b.collect()
			if diff := gocmp.Diff(tt.want, o.final); diff != "" {
				t.Errorf("final record (-want +got):\n%s\nstdout %q\nstderr %q", diff, o.stdout, o.stderr)
			}
			if tt.check != nil {
				tt.check(t, b, o)
			} else {
				compareOutput(t, "stdout", o.stdout, tt.stdout)
			}
			if tt.stderrHas != "" {
				if !bytes.Contains(o.stderr, []byte(tt.stderrHas)) {
					t.Errorf("stderr = %q; want it to contain %q", o.stderr, tt.stderrHas)
				}
			} else {
				compareOutput(t, "stderr", o.stderr, tt.stderr)
			}
			if tt.groupGone {
				waitGroupGone(t, o.started.PGID, stopWithin)
			}
			b.done(0)
		})
	}
}

// Each job brings the shell's directory, environment and umask of its moment; the helper itself
// holds no directory busy between jobs, and runs job after job.
func TestRunTakesEachJobsDirectoryEnvironmentAndUmask(t *testing.T) {
	dir := t.TempDir()
	b := startHelper(t, launch{dir: dir, env: append(os.Environ(), "LIBTMUX_MCP_HELPER_OWN=yes")})
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct {
		dir   string
		umask int
		env   []string
		want  string
	}{
		{dir, 0o27, []string{"PATH=/usr/bin:/bin", "LIBTMUX_MCP_HELPER_TEST=two  words"}, real + "\ntwo  words-\n0027\n"},
		{"/", 0o77, []string{"PATH=/usr/bin:/bin"}, "/\n-\n0077\n"},
	} {
		jb := newJob(`pwd -P; printf '%s-%s\n' "$LIBTMUX_MCP_HELPER_TEST" "$LIBTMUX_MCP_HELPER_OWN"; umask`)
		jb.Dir, jb.Umask, jb.Env = tc.dir, tc.umask, tc.env
		b.send(jb)
		o := b.collect()
		if diff := gocmp.Diff(exited(0), o.final); diff != "" {
			t.Errorf("job %d: final record (-want +got):\n%s", i, diff)
		}
		compareOutput(t, fmt.Sprintf("job %d stdout", i), o.stdout, tc.want)
		compareOutput(t, fmt.Sprintf("job %d stderr", i), o.stderr, "")
	}
	if cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", b.cmd.Process.Pid)); err != nil || cwd != "/" {
		t.Errorf("the idle helper's directory is %q (%v); want /", cwd, err)
	}
	// A STOP with nothing running changes nothing; the next job still runs.
	if err := job.WriteStop(b.conn); err != nil {
		t.Fatal(err)
	}
	b.send(newJob("echo again"))
	if o := b.collect(); string(o.stdout) != "again\n" {
		t.Errorf("after an idle STOP: stdout %q", o.stdout)
	}
	b.done(0)
}

func TestRunRefusals(t *testing.T) {
	tests := []struct {
		name     string
		send     func(t *testing.T, b *fakeBroker, file string) // what the broker sends
		want     job.Record                                     // the only record; Kind "" means none
		stays    bool                                           // the helper serves on after it
		wantExit int
	}{
		{
			name: "digest mismatch",
			send: func(t *testing.T, b *fakeBroker, file string) {
				jb := newJob("touch '" + file + "'")
				jb.Digest = job.Digest([]byte("touch somewhere/else"))
				b.send(jb)
			},
			want: job.Record{Kind: job.KindFailed, Reason: job.ReasonDigestMismatch}, stays: true,
		},
		{
			name: "directory that does not exist",
			send: func(t *testing.T, b *fakeBroker, file string) {
				jb := newJob("touch '" + file + "'")
				jb.Dir = "/nonexistent/libtmux-mcp"
				b.send(jb)
			},
			want: job.Record{Kind: job.KindFailed, Reason: job.ReasonSpawn}, stays: true,
		},
		{
			name: "unknown job version",
			send: func(t *testing.T, b *fakeBroker, file string) {
				script := "touch '" + file + "'"
				fmt.Fprintf(b.conn, "JOB 1 %s %s 1 1 %d\n%s", testRunID, job.Digest([]byte(script)), len(script), script)
			},
			want: job.Record{Kind: job.KindFailed, Reason: job.ReasonBadJob}, wantExit: 1,
		},
		{
			name: "broker says nothing and closes",
			send: func(t *testing.T, b *fakeBroker, file string) {
				if err := b.conn.(*net.UnixConn).CloseWrite(); err != nil {
					t.Fatal(err)
				}
			},
		},
		{
			name: "cancel",
			send: func(t *testing.T, b *fakeBroker, file string) {
				if err := job.WriteCancel(b.conn); err != nil {
					t.Fatal(err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			file := filepath.Join(t.TempDir(), "ran")
			b := startHelper(t, launch{})
			tt.send(t, b, file)
			rec, err := b.record(recordTimeout)
			switch {
			case tt.want.Kind == "" && err != io.EOF:
				t.Errorf("first record = %+v, %v; want EOF", rec, err)
			case tt.want.Kind != "" && err != nil:
				t.Errorf("first record: %v; want %+v", err, tt.want)
			case tt.want.Kind != "":
				if diff := gocmp.Diff(tt.want, rec); diff != "" {
					t.Errorf("first record (-want +got):\n%s", diff)
				}
				if !tt.stays {
					if rec, err := b.record(recordTimeout); err != io.EOF {
						t.Errorf("after %s: %+v, %v; want EOF", tt.want.Kind, rec, err)
					}
				}
			}
			if tt.stays {
				b.send(newJob("echo still here"))
				if o := b.collect(); string(o.stdout) != "still here\n" {
					t.Errorf("the next job printed %q", o.stdout)
				}
				b.conn.Close()
			}
			if code := b.exitCode(recordTimeout); code != tt.wantExit {
				t.Errorf("helper exit status = %d; want %d", code, tt.wantExit)
			}
			if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("stat %s: %v; want it not to exist: the script must not have run", file, err)
			}
		})
	}
}

// A helper killed while its script runs takes the script's sh with it (its parent-death
// signal), even when the broker never learned the group: nothing else would stop it.
func TestScriptDiesWithItsHelper(t *testing.T) {
	t.Parallel()
	b := startHelper(t, launch{})
	// The script kills its helper only once the started record was read (the FIFO opens
	// then): a helper killed before it writes the record is another test's case.
	gate := filepath.Join(t.TempDir(), "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	b.send(newJob("echo $$ >&2; read x < " + gate + "; kill -KILL $PPID; sleep 30; echo survived"))
	st := b.started()
	t.Cleanup(func() { syscall.Kill(-st.PGID, syscall.SIGKILL) }) // the sleep, which only its group's stop ends
	opened := make(chan error, 1)
	go func() { opened <- os.WriteFile(gate, []byte("go\n"), 0) }()
	select {
	case err := <-opened:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(recordTimeout):
		t.Fatal("the script did not open its gate")
	}
	select {
	case <-b.exited:
	case <-time.After(recordTimeout):
		t.Fatal("the helper the script killed has not exited")
	}
	tmuxtest.Eventually(t, 10*time.Second, fmt.Sprintf("the script's sh %d gone after its helper was killed", st.PID), func() bool {
		return syscall.Kill(st.PID, 0) != nil || liveMembers(st.PGID) == nil
	}, func() string { return fmt.Sprintf("live members: %q", liveMembers(st.PGID)) })
}

func TestStop(t *testing.T) {
	tests := []struct {
		name   string
		script string
		stop   func(t *testing.T, b *fakeBroker)
		final  bool // whether the broker can still read the final record, stopped
		stays  bool // whether the helper serves on after the stop
	}{
		{
			name: "STOP", script: "sleep 30; echo never",
			stop: func(t *testing.T, b *fakeBroker) {
				if err := job.WriteStop(b.conn); err != nil {
					t.Fatal(err)
				}
			},
			final: true, stays: true,
		},
		{
			// Only the SIGKILL after the grace stops this group.
			name: "STOP with SIGTERM ignored", script: "trap '' TERM; sleep 30; echo never",
			stop: func(t *testing.T, b *fakeBroker) {
				if err := job.WriteStop(b.conn); err != nil {
					t.Fatal(err)
				}
			},
			final: true, stays: true,
		},
		{
			name: "helper gets SIGTERM", script: "sleep 30; echo never",
			stop: func(t *testing.T, b *fakeBroker) {
				if err := b.cmd.Process.Signal(syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
			},
			final: true,
		},
		{
			name: "broker closes the connection", script: "sleep 30; echo never",
			stop: func(t *testing.T, b *fakeBroker) { b.conn.Close() },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := startHelper(t, launch{})
			b.send(newJob("echo ready; " + tt.script))
			o := outcome{started: b.started()}
			// Stop only once the script is surely running.
			if rec, err := b.record(recordTimeout); err != nil || rec.Kind != job.KindStdout || string(rec.Data) != "ready\n" {
				t.Fatalf("second record = %+v, %v; want out %q", rec, err, "ready\n")
			}
			stopped := time.Now()
			tt.stop(t, b)
			if tt.final {
				b.rest(&o, stopWithin)
				if diff := gocmp.Diff(job.Record{Kind: job.KindStopped}, o.final); diff != "" {
					t.Errorf("final record (-want +got):\n%s", diff)
				}
				compareOutput(t, "stdout after ready", o.stdout, "")
			}
			waitGroupGone(t, o.started.PGID, time.Until(stopped.Add(stopWithin))) // within stopWithin of the stop
			if tt.stays {
				b.send(newJob("echo next"))
				if o := b.collect(); string(o.stdout) != "next\n" {
					t.Errorf("the job after the stop printed %q", o.stdout)
				}
				b.conn.Close()
			}
			if code := b.exitCode(stopWithin); tt.final && code != 0 {
				t.Errorf("helper exit status = %d; want 0", code)
			}
			t.Logf("stopped after %v", time.Since(stopped))
		})
	}
}

func TestUsage(t *testing.T) {
	bin := helperBinary(t)
	tests := []struct {
		args []string
		want int
		why  string
	}{
		{nil, 2, "no arguments"},
		{[]string{"job", testRunID}, 2, "the one-job form is gone"},
		{[]string{"serve", "extra"}, 2, "extra argument"},
		{[]string{"serve"}, 1, "no fd 3"},
	}
	for _, tt := range tests {
		cmd := exec.Command(bin, tt.args...)
		out, _ := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != tt.want || len(out) == 0 {
			t.Errorf("helper %q (%s): exit %d, output %q; want exit %d and a message", tt.args, tt.why, code, out, tt.want)
		}
	}
}
