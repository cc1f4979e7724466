package request

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestRecordIsPrivateAndReplacedWhole(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("tmux_run is Linux only")
	}
	dir := t.TempDir()
	rec := Record{PID: 42, Started: time.Unix(100, 0).UTC(), TmuxSocket: "/t/s", TmuxPID: 7, Socket: "/d/request.sock", Version: "v"}
	if err := WriteRecord(dir, rec); err != nil {
		t.Fatal(err)
	}
	rec.Client = "claude-code"
	if err := WriteRecord(dir, rec); err != nil {
		t.Fatalf("rewrite: %v", err)
	}
	got, err := ReadRecord(dir)
	if err != nil || got != rec {
		t.Fatalf("ReadRecord = %+v, %v; want %+v", got, err, rec)
	}
	if fi, _ := os.Lstat(filepath.Join(dir, RecordName)); fi.Mode().Perm() != 0o600 {
		t.Errorf("record mode %v; want 0600", fi.Mode().Perm())
	}
	// A record another hand loosened, or a symlink in its place, is not read.
	os.Chmod(filepath.Join(dir, RecordName), 0o644)
	if _, err := ReadRecord(dir); err == nil {
		t.Error("ReadRecord accepted a 0644 record")
	}
	os.Remove(filepath.Join(dir, RecordName))
	other := t.TempDir()
	WriteRecord(other, rec)
	os.Symlink(filepath.Join(other, RecordName), filepath.Join(dir, RecordName))
	if _, err := ReadRecord(dir); err == nil {
		t.Error("ReadRecord followed a symlink")
	}
}

// run runs Main with records in fake broker directories.
func run(t *testing.T, recs []Record, tmuxEnv string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var dirs []string
	for _, r := range recs {
		d := t.TempDir()
		if err := WriteRecord(d, r); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	var out, errb bytes.Buffer
	devnull, _ := os.Open(os.DevNull)
	defer devnull.Close()
	code = Main(args, Env{TMUX: tmuxEnv, Pane: "%1", Stdout: &out, Stderr: &errb, StdoutFD: devnull.Fd(), Dirs: func() []string { return dirs }})
	return code, out.String(), errb.String()
}

func TestEnrollChoosesNoServerSilently(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("tmux_run is Linux only")
	}
	sock := filepath.Join(t.TempDir(), "s")
	os.WriteFile(sock, nil, 0o600) // SamePath resolves it
	a := Record{PID: 11, Client: "claude-code", TmuxSocket: sock, TmuxPID: 5, Socket: "/nonexistent/a.sock"}
	b := Record{PID: 12, Client: "codex", TmuxSocket: sock, TmuxPID: 5, Socket: "/nonexistent/b.sock"}
	here := sock + ",5,0"

	code, out, errs := run(t, []Record{a, b}, here, "enroll")
	if code != 2 || out != "false\n" || !strings.Contains(errs, "--server PID") || !strings.Contains(errs, "pid 11  claude-code") || !strings.Contains(errs, "pid 12  codex") {
		t.Errorf("two servers: exit %d, stdout %q, stderr %q; want 2, false, both listed", code, out, errs)
	}
	code, _, errs = run(t, []Record{a, b}, here, "enroll", "--server", "13")
	if code != 2 || !strings.Contains(errs, "no server with pid 13") {
		t.Errorf("--server 13: exit %d, stderr %q", code, errs)
	}
	// The one named is asked (and here cannot be reached).
	code, _, errs = run(t, []Record{a, b}, here, "enroll", "--server", "12")
	if code != 1 || !strings.Contains(errs, "ask the server (pid 12)") {
		t.Errorf("--server 12: exit %d, stderr %q; want it asked", code, errs)
	}
	// Another tmux server's pane: nobody serves it, and the fixes are named.
	code, _, errs = run(t, []Record{a}, "/tmp/tmux-1/default,9,0", "enroll")
	if code != 1 || !strings.Contains(errs, "--socket-name default") || !strings.Contains(errs, "tmux -L libtmux-mcp attach") || !strings.Contains(errs, sock+" (pid 11)") {
		t.Errorf("unserved: exit %d, stderr %q", code, errs)
	}
	code, _, errs = run(t, nil, "", "enroll")
	if code != 1 || !strings.Contains(errs, "not inside tmux") {
		t.Errorf("outside tmux: exit %d, stderr %q", code, errs)
	}
	code, _, _ = run(t, nil, here, "enroll", "extra")
	if code != 2 {
		t.Errorf("an extra argument: exit %d; want 2", code)
	}
}

// The code enroll prints never sources the zsh file in another shell: one POSIX if.
func TestEnrollCodeRefusesOtherShells(t *testing.T) {
	code := evalCode("/nonexistent/it's.zsh")
	for _, sh := range []string{"bash", "sh"} {
		path, err := exec.LookPath(sh)
		if err != nil {
			continue
		}
		out, err := exec.Command(path, "-c", "eval \"$1\"; echo status=$?", "x", code).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "this shell is not zsh") || !strings.Contains(string(out), "status=1") || strings.Contains(string(out), "nonexistent") {
			t.Errorf("%s: %v\n%s", sh, err, out)
		}
	}
}
