//go:build unix

package shellsetup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestCreateIsPrivateWhateverTheUmask(t *testing.T) {
	// The umask is process-wide: this test does not run in parallel.
	for _, mask := range []int{0o000, 0o022, 0o277} {
		old := syscall.Umask(mask)
		path := filepath.Join(t.TempDir(), "setup.zsh")
		f, err := Create(path, []byte("echo hi\n"))
		syscall.Umask(old)
		if err != nil {
			t.Fatalf("umask %03o: %v", mask, err)
		}
		fi, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != 0o600 {
			t.Errorf("umask %03o: mode %v; want -rw-------", mask, fi.Mode())
		}
		if b, _ := os.ReadFile(path); string(b) != "echo hi\n" {
			t.Errorf("umask %03o: content %q", mask, b)
		}
		if f.Path() != path {
			t.Errorf("Path() = %q; want %q", f.Path(), path)
		}
		f.Remove()
	}
}

func TestCreateRefusesWhatExists(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("precious\n"), 0o644)
	for _, tc := range []struct {
		why  string
		make func(path string) error
	}{
		{"a regular file", func(p string) error { return os.WriteFile(p, []byte("precious\n"), 0o644) }},
		{"a symlink to a file", func(p string) error { return os.Symlink(target, p) }},
		{"a dangling symlink (O_CREAT alone would create its target)", func(p string) error { return os.Symlink(filepath.Join(dir, "nowhere"), p) }},
		{"a directory", func(p string) error { return os.Mkdir(p, 0o700) }},
		{"a fifo (opening it would block)", func(p string) error { return syscall.Mkfifo(p, 0o600) }},
	} {
		path := filepath.Join(dir, "it's here "+strings.Fields(tc.why)[1])
		if err := tc.make(path); err != nil {
			t.Fatal(err)
		}
		before, _ := os.Lstat(path)
		f, err := Create(path, []byte("new"))
		if f != nil || !errors.Is(err, fs.ErrExist) {
			t.Fatalf("%s: Create = %v, %v; want an error matching fs.ErrExist", tc.why, f, err)
		}
		want := path + " already exists; remove it first (rm " + quote(path) + ") — libtmux-mcp never overwrites a file it did not create"
		if err.Error() != want {
			t.Errorf("%s: error %q; want %q", tc.why, err, want)
		}
		after, _ := os.Lstat(path)
		if !os.SameFile(before, after) || before.Mode() != after.Mode() || before.ModTime() != after.ModTime() {
			t.Errorf("%s: the existing entry changed", tc.why)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "precious\n" {
		t.Errorf("the symlink's target changed: %q", b)
	}
	if _, err := os.Lstat(filepath.Join(dir, "nowhere")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the dangling symlink's target was created: %v", err)
	}
}

func TestCreateErrorNamesPlainPathBare(t *testing.T) {
	path := filepath.Join(t.TempDir(), "enroll.zsh")
	os.WriteFile(path, nil, 0o600)
	_, err := Create(path, nil)
	want := path + " already exists; remove it first (rm " + path + ") — libtmux-mcp never overwrites a file it did not create"
	if err == nil || err.Error() != want {
		t.Errorf("Create = %v; want %q", err, want)
	}
}

func TestCreateNeedsTheDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "setup.zsh")
	if f, err := Create(path, nil); f != nil || err == nil || !strings.Contains(err.Error(), "directory does not exist") {
		t.Errorf("Create in a missing directory = %v, %v; want an error saying the directory does not exist", f, err)
	}
}

func TestRemove(t *testing.T) {
	dir := t.TempDir()
	for i, tc := range []struct {
		why      string
		meddle   func(path string) // what happens to the path after Create
		replaced bool
	}{
		{"still ours: removed", func(string) {}, false},
		{"already removed by someone: not an error", func(p string) { os.Remove(p) }, false},
		{"removed and a new file put there: left alone", func(p string) {
			os.Remove(p)
			os.WriteFile(p, []byte("theirs"), 0o600)
		}, true},
		{"a file renamed over it: left alone", func(p string) {
			os.WriteFile(p+".new", []byte("theirs"), 0o600)
			os.Rename(p+".new", p)
		}, true},
		{"replaced by a symlink to a file: neither is touched", func(p string) {
			os.WriteFile(p+".target", []byte("theirs"), 0o600)
			os.Remove(p)
			os.Symlink(p+".target", p)
		}, true},
		{"a symlink to a hard link of our own file: left alone (lstat, never stat)", func(p string) {
			os.Link(p, p+".hard")
			os.Remove(p)
			os.Symlink(p+".hard", p)
		}, true},
	} {
		path := filepath.Join(dir, fmt.Sprintf("setup%d.zsh", i))
		f, err := Create(path, []byte("ours"))
		if err != nil {
			t.Fatal(err)
		}
		tc.meddle(path)
		after, _ := os.Lstat(path)
		err = f.Remove()
		if tc.replaced {
			if !errors.Is(err, ErrReplaced) {
				t.Errorf("%s: Remove = %v; want ErrReplaced", tc.why, err)
			}
			now, nowErr := os.Lstat(path)
			if nowErr != nil || !os.SameFile(after, now) {
				t.Errorf("%s: the replacement was touched (%v)", tc.why, nowErr)
			}
			if b, _ := os.ReadFile(path); string(b) != "theirs" && string(b) != "ours" {
				t.Errorf("%s: the replacement now holds %q", tc.why, b)
			}
		} else {
			if err != nil {
				t.Errorf("%s: Remove = %v", tc.why, err)
			}
			if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s: %s still exists (%v)", tc.why, path, err)
			}
		}
		// Idempotent: the same answer again.
		if again := f.Remove(); (again == nil) != (err == nil) {
			t.Errorf("%s: second Remove = %v; first was %v", tc.why, again, err)
		}
	}
}
