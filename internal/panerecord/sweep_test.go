package panerecord

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/broker/peercred"
	"github.com/libtmux/libtmux-mcp/broker/privfile"
	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
)

// exists reports whether the record file at path is there.
func exists(t *testing.T, path string) bool {
	t.Helper()
	_, err := os.Lstat(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return err == nil
}

// TestSweepRemovesTheRecordsOfAGoneServer: a real tmux server's records go once the server is
// gone (another runs on its socket since), at the next For of any server; a claim still held on it stays until it is released;
// the records of a live server stay.
func TestSweepRemovesTheRecordsOfAGoneServer(t *testing.T) {
	private(t)
	ts := tmuxtest.Start(t)
	pid, err := strconv.Atoi(strings.TrimSpace(ts.Run("display-message", "-p", "#{pid}")))
	if err != nil {
		t.Fatal(err)
	}
	set := mustFor(t, ts.Socket, pid)
	end, err := set.InputBegins("%0")
	if err != nil {
		t.Fatal(err)
	}
	end()
	held, err := set.Take("%1", Holder{Tool: "run_shell_command", Command: "make"})
	if err != nil {
		t.Fatal(err)
	}
	live := mustFor(t, "/test/socket", 1)
	end, err = live.InputBegins("%0")
	if err != nil {
		t.Fatal(err)
	}
	end()
	input, claim, marker := set.path("%0", inputKind), set.path("%1", claimKind), filepath.Join(set.dir, set.server+"."+serverKind)
	for _, p := range []string{input, claim, marker, live.path("%0", inputKind)} {
		if !exists(t, p) {
			t.Fatalf("%s is missing before the sweep", p)
		}
	}

	mustFor(t, "/other/socket", 1) // the server is alive: nothing of it goes
	if !exists(t, input) || !exists(t, marker) {
		t.Fatal("a live server's records were removed")
	}

	// The server is killed and another starts on its socket: the socket answers, but it is the
	// new server's.
	ts.KillServer()
	if _, err := ts.Client.RunConfig(context.Background(), filepath.Join(ts.Dir, "tmux.conf"), "start-server"); err != nil {
		t.Fatal(err)
	}
	mustFor(t, "/other/socket", 1)
	if exists(t, input) {
		t.Error("the input record of a server that is gone is still there")
	}
	if !exists(t, claim) || !exists(t, marker) {
		t.Error("a claim still held on a gone server's pane, or the marker that vouches for it, was removed")
	}
	if !exists(t, live.path("%0", inputKind)) {
		t.Error("a live server's input record was removed")
	}

	held.Release()
	mustFor(t, "/other/socket", 1)
	if exists(t, claim) || exists(t, marker) {
		t.Errorf("after the claim's release, the gone server's claim (%v) or marker (%v) is still there", exists(t, claim), exists(t, marker))
	}
}

// TestSweepTellsAReusedPID: a marker whose pid now runs a process that started at another time
// describes a server that is gone; one whose start time matches, or is unknown, does not, nor
// one whose socket still takes connections (a server seen from another pid namespace), unless
// that socket is another server's (another file at the path).
func TestSweepTellsAReusedPID(t *testing.T) {
	private(t)
	dir := filepath.Join(os.Getenv("XDG_RUNTIME_DIR"), dirName())
	mustFor(t, "/test/socket", 1) // makes the directory
	start, err := peercred.StartTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	listening := filepath.Join(t.TempDir(), "s")
	l, err := net.Listen("unix", listening)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	pid := os.Getpid()
	cases := map[string]struct {
		marker string
		gone   bool
	}{
		"0123456789abcdef": {fmt.Sprintf("%d %d 0 /no/socket\n", pid, start+1), true},
		"123456789abcdef0": {fmt.Sprintf("%d %d 0 /no/socket\n", pid, start), false},
		"23456789abcdef01": {fmt.Sprintf("%d 0 0 /no/socket\n", pid), false},
		"3456789abcdef012": {"", false}, // unreadable
		// Its socket answers: the server, seen from another pid namespace.
		"456789abcdef0123": {fmt.Sprintf("%d %d %s %s\n", pid, start+1, socketID(listening), listening), false},
		// A socket answers at its path, but another server made it.
		"56789abcdef01234": {fmt.Sprintf("%d %d %s %s\n", pid, start+1, "1"+socketID(listening), listening), true},
	}
	for server, c := range cases {
		if err := os.WriteFile(filepath.Join(dir, server+".server"), []byte(c.marker), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, server+"-7.input"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	mustFor(t, "/test/socket", 1)
	for server, c := range cases {
		if got := !exists(t, filepath.Join(dir, server+"-7.input")); got != c.gone {
			t.Errorf("marker %q: record removed %v; want %v", c.marker, got, c.gone)
		}
		if got := !exists(t, filepath.Join(dir, server+".server")); got != c.gone {
			t.Errorf("marker %q removed %v; want %v", c.marker, got, c.gone)
		}
	}
}

// TestSweepUnvouchedFiles: a record no marker vouches for, and a new claim file never linked,
// go once older than a minute and unlocked; a fresh or locked one stays, and so does a file that
// is not a record.
func TestSweepUnvouchedFiles(t *testing.T) {
	private(t)
	set := mustFor(t, "/test/socket", 1)
	dir := set.dir
	old := time.Now().Add(-2 * unvouchedAge)
	files := map[string]bool{ // name: removed by the sweep
		"fedcba9876543210-3.input":                         true,
		"fedcba9876543210-4.input":                         false, // fresh
		"fedcba9876543210-5.claim":                         false, // locked
		set.server + "-6.claim" + newInfix + "77-0a0b0c0d": true,
		set.server + "-8.input":                            false, // vouched for, however old
		"notarecord":                                       false,
		"fedcba987654321-3.input":                          false, // 15 digits: not a record's name
	}
	var locked *os.File
	for name := range files {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(name, "-4.input") {
			if err := os.Chtimes(path, old, old); err != nil {
				t.Fatal(err)
			}
		}
		if strings.HasSuffix(name, "-5.claim") {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if ok, err := privfile.TryLock(f); !ok || err != nil {
				t.Fatalf("lock %s: %v %v", name, ok, err)
			}
			locked = f
		}
	}
	mustFor(t, "/test/socket", 1)
	for name, removed := range files {
		if got := !exists(t, filepath.Join(dir, name)); got != removed {
			t.Errorf("%s removed %v; want %v", name, got, removed)
		}
	}
	locked.Close()
}

// TestForReplacesTheMarkerOfAnEarlierServer: a server with the socket and pid of one that is gone
// gets a marker of its own, even where a held record kept the old one, so no sweep takes it for
// the gone server.
func TestForReplacesTheMarkerOfAnEarlierServer(t *testing.T) {
	private(t)
	first := mustFor(t, "/reuse/socket", os.Getpid())
	start, err := peercred.StartTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(first.dir, first.server+"."+serverKind)
	stale := fmt.Sprintf("%d %d 0 /reuse/socket\n", os.Getpid(), start+1)
	if err := os.WriteFile(marker, []byte(stale), 0o600); err != nil {
		t.Fatal(err)
	}
	held, err := first.Take("%2", Holder{Tool: "tmux_run"})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	mustFor(t, "/reuse/socket", os.Getpid())
	if b, err := os.ReadFile(marker); err != nil || string(b) != fmt.Sprintf("%d %d 0 /reuse/socket\n", os.Getpid(), start) {
		t.Errorf("the marker says %q (%v); want this process's pid and start time", b, err)
	}
	if !exists(t, first.path("%2", claimKind)) {
		t.Error("a held claim was removed")
	}
}
