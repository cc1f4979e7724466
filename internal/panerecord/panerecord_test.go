package panerecord

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
)

// The test binary doubles as a claiming process: with childEnv set it runs
// child instead of the tests.
const childEnv = "PANECLAIM_TEST_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(child(mode))
	}
	os.Exit(m.Run())
}

// child is one claiming process. "hold": take %1, print "held", wait to be
// killed. "race ROUNDS MARKER": take %1 ROUNDS times (retrying while busy),
// and while holding make MARKER exclusively and remove it: a second holder
// at the same moment finds it there.
func child(mode string) int {
	set, err := For("/test/socket", 1)
	if err != nil {
		fmt.Println(err)
		return 2
	}
	f := strings.Fields(mode)
	switch f[0] {
	case "hold":
		if _, err := set.Take("%1", Holder{Tool: "run_shell_command", Command: "sleep 60", Handle: "rsc-test"}); err != nil {
			fmt.Println(err)
			return 2
		}
		fmt.Println("held")
		select {}
	case "race":
		rounds, _ := strconv.Atoi(f[1])
		for i := 0; i < rounds; {
			c, err := set.Take("%1", Holder{Tool: "run_shell_command", Command: "race"})
			var busy *BusyError
			if errors.As(err, &busy) {
				continue
			}
			if err != nil {
				fmt.Println(err)
				return 2
			}
			m, err := os.OpenFile(f[2], os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
			if err != nil {
				fmt.Println("two holders at once:", err)
				return 1
			}
			m.Close()
			os.Remove(f[2])
			c.Release()
			i++
		}
		return 0
	}
	return 2
}

// private gives the test a private runtime directory of its own.
func private(t testing.TB) {
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	if err := os.Chmod(os.Getenv("XDG_RUNTIME_DIR"), 0o700); err != nil {
		t.Fatal(err)
	}
}

func TestTakeRefuseRelease(t *testing.T) {
	private(t)
	a, err := For("/test/socket", 1)
	if err != nil {
		t.Fatal(err)
	}
	b := mustFor(t, "/test/socket", 1)
	c, err := a.Take("%1", Holder{Tool: "run_shell_command", Command: "make test\nsecond line", Handle: "rsc-1"})
	if err != nil || c.Gone != nil {
		t.Fatalf("Take on a free pane: %v, gone %v", err, c.Gone)
	}
	// Another open of the same claim (another process, or the broker in this one) is refused.
	_, err = b.Take("%1", Holder{Tool: "tmux_run"})
	var busy *BusyError
	if !errors.As(err, &busy) || busy.Holder.PID != os.Getpid() || busy.Holder.Command != "make test…" || busy.Holder.Handle != "rsc-1" {
		t.Fatalf("Take on a held pane: %v; want a BusyError naming this process, its command and handle", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "process "+strconv.Itoa(os.Getpid())) || !strings.Contains(msg, `"make test…"`) {
		t.Errorf("refusal %q does not name the holder's pid and command", msg)
	}
	if h, ok := b.Holder("%1"); !ok || !h.Mine() {
		t.Errorf("Holder = %+v, %v; want this process", h, ok)
	}
	// Other panes and other servers are apart.
	if c2, err := b.Take("%2", Holder{}); err != nil {
		t.Errorf("Take on another pane: %v", err)
	} else {
		c2.Release()
	}
	other := mustFor(t, "/test/socket", os.Getpid())
	if c3, err := other.Take("%1", Holder{}); err != nil {
		t.Errorf("Take on another server's pane: %v", err)
	} else {
		c3.Release()
	}
	c.Release()
	c.Release() // twice is fine
	if _, ok := b.Holder("%1"); ok {
		t.Error("Holder reports a released claim")
	}
	c, err = b.Take("%1", Holder{})
	if err != nil || c.Gone != nil {
		t.Fatalf("Take after release: %v (gone %v); want a free pane", err, c.Gone)
	}
	c.Release()
}

func TestKilledHolderIsTakenOver(t *testing.T) {
	private(t)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), childEnv+"=hold")
	tmuxtest.StartSaying(t, cmd, "held")
	set := mustFor(t, "/test/socket", 1)
	var busy *BusyError
	if _, err := set.Take("%1", Holder{}); !errors.As(err, &busy) || busy.Holder.PID != cmd.Process.Pid {
		t.Fatalf("Take while the child holds: %v; want busy naming pid %d", err, cmd.Process.Pid)
	}
	if h, ok := set.Holder("%1"); !ok || h.PID != cmd.Process.Pid || h.Mine() {
		t.Errorf("Holder = %+v, %v; want the child", h, ok)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	c, err := set.Take("%1", Holder{})
	if err != nil {
		t.Fatalf("Take after the holder was killed: %v", err)
	}
	defer c.Release()
	if c.Gone == nil || c.Gone.PID != cmd.Process.Pid || c.Gone.Command != "sleep 60" {
		t.Errorf("Gone = %+v; want the killed child's claim", c.Gone)
	}
}

// Many processes race for one pane's claim: never two hold it at once.
func TestProcessesRacing(t *testing.T) {
	private(t)
	marker := filepath.Join(t.TempDir(), "holder")
	var cmds []*exec.Cmd
	for range 6 {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), childEnv+"=race 200 "+marker)
		cmd.Stdout = new(strings.Builder)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	timer := time.AfterFunc(60*time.Second, func() {
		for _, c := range cmds {
			c.Process.Kill()
		}
	})
	defer timer.Stop()
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("racer %d: %v: %s", i, err, c.Stdout)
		}
	}
}

func TestFirstLine(t *testing.T) {
	for in, want := range map[string]string{
		"make":                   "make",
		"make\ntest":             "make…",
		"a\tb\x1b[31m":           "ab[31m",
		strings.Repeat("é", 100): strings.Repeat("é", 80) + "…",
		"":                       "",
	} {
		if got := FirstLine(in); got != want {
			t.Errorf("FirstLine(%q) = %q; want %q", in, got, want)
		}
	}
}

func TestPrivateDirectoryRequired(t *testing.T) {
	private(t)
	dir := filepath.Join(os.Getenv("XDG_RUNTIME_DIR"), dirName())
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := For("/test/socket", 1); err == nil || !strings.Contains(err.Error(), "not a private directory") {
		t.Errorf("For with a 0755 claims directory: %v; want a refusal", err)
	}
}

// BenchmarkTakeRelease is what a run pays for its claim: taking a free pane's and releasing it.
func BenchmarkTakeRelease(b *testing.B) {
	set := benchSet(b)
	for b.Loop() {
		c, err := set.Take("%1", Holder{Tool: "run_shell_command", Command: "true"})
		if err != nil {
			b.Fatal(err)
		}
		c.Release()
	}
}

func TestInputRecords(t *testing.T) {
	private(t)
	a := mustFor(t, "/test/socket", 1)
	b, err := For("/test/socket", 1)
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	if sent, _ := b.InputSince("%1", before); sent {
		t.Fatal("a pane never typed into has input")
	}
	end, err := a.InputBegins("%1")
	var none *Set
	if e, err := none.InputBegins("%1"); err != nil {
		t.Errorf("a nil Set: %v", err)
	} else {
		e()
	}
	if err != nil {
		t.Fatal(err)
	}
	if sent, _ := b.InputSince("%1", time.Now().Add(time.Hour)); !sent {
		t.Error("input under way is not seen")
	}
	end()
	end() // twice is fine
	after := time.Now()
	if sent, pid := b.InputSince("%1", before); !sent || pid != os.Getpid() {
		t.Errorf("InputSince(before) = %v, %d; want the input of this process", sent, pid)
	}
	if sent, _ := b.InputSince("%1", after.Add(time.Millisecond)); sent {
		t.Error("input that went before the time asked is reported")
	}
	if sent, _ := b.InputSince("%2", before); sent {
		t.Error("another pane's input is reported")
	}
}

// BenchmarkInputBegins is what an input tool pays to record its input for other processes.
func BenchmarkInputBegins(b *testing.B) {
	set := benchSet(b)
	for b.Loop() {
		end, err := set.InputBegins("%1")
		if err != nil {
			b.Fatal(err)
		}
		end()
	}
}

// benchSet is a Set in a private runtime directory of the benchmark's own.
func benchSet(b *testing.B) *Set {
	private(b)
	return mustFor(b, "/bench/socket", 1)
}

// mustFor is For, failing the test on an error.
func mustFor(t testing.TB, socket string, serverPID int) *Set {
	t.Helper()
	set, err := For(socket, serverPID)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// BenchmarkForBesideStaleRecords is what a process pays to open a server's records (once per
// tmux server it serves) in a directory that also holds 8,800 input records of servers that are
// gone, an hour old, as a developer's held after a day of tests before sweep.
func BenchmarkForBesideStaleRecords(b *testing.B) {
	private(b)
	dir := filepath.Join(os.Getenv("XDG_RUNTIME_DIR"), dirName())
	if err := os.Mkdir(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	for i := range 8800 {
		path := filepath.Join(dir, fmt.Sprintf("%016x-%d.input", i/4, i%4))
		if err := os.WriteFile(path, []byte("1\n"), 0o600); err != nil {
			b.Fatal(err)
		}
		if err := os.Chtimes(path, old, old); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := For("/bench/socket", 1); err != nil {
			b.Fatal(err)
		}
	}
}
