//go:build unix

package shellsetup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"syscall"
)

// File is a setup file this process created. It keeps the file open (close
// on exec) until Remove: while it is open its inode cannot be freed, so no
// replacement can ever carry the same device and inode numbers.
type File struct {
	path string
	dev  uint64
	ino  uint64

	mu   sync.Mutex
	f    *os.File // nil once Remove has finished with the path
	done error    // Remove's final answer, once f is nil
}

// existsError refuses a path that already names something.
type existsError struct{ path string }

func (e existsError) Error() string {
	return fmt.Sprintf("%s already exists; remove it first (rm %s) — libtmux-mcp never overwrites a file it did not create", e.path, shellWord(e.path))
}

func (existsError) Unwrap() error { return fs.ErrExist }

// Create writes content to a new file at path, mode 0600 whatever the
// umask, and syncs it. Anything already at path, a symlink included (even
// a dangling one), is refused with an error that matches fs.ErrExist and
// names the recovery; the path is never followed or overwritten. The
// parent directory must exist.
func Create(path string, content []byte) (*File, error) {
	// O_EXCL refuses any existing name, symlinks included; O_NOFOLLOW says so
	// twice. os.OpenFile adds O_CLOEXEC.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	switch {
	case errors.Is(err, fs.ErrExist), errors.Is(err, syscall.ELOOP):
		return nil, existsError{path}
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return nil, fmt.Errorf("shellsetup: cannot create %s: its directory does not exist (%w)", path, err)
	case err != nil:
		return nil, fmt.Errorf("shellsetup: %w", err)
	}
	file := &File{path: path, f: f}
	fail := func(err error) (*File, error) {
		file.Remove()
		return nil, fmt.Errorf("shellsetup: write %s: %w", path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		os.Remove(path) // just made by O_EXCL, and its identity is unknown
		return nil, fmt.Errorf("shellsetup: %w", err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	file.dev, file.ino = uint64(st.Dev), uint64(st.Ino)
	if err := f.Chmod(0o600); err != nil {
		return fail(err)
	}
	if _, err := f.Write(content); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	return file, nil
}

// Path is where the file was created.
func (f *File) Path() string { return f.path }

// Remove deletes the file if the path still names the file Create made.
// A missing file is not an error. A path that now names something else (a
// new file, a symlink) is left alone, and Remove says so with an error
// matching ErrReplaced. Calling Remove again gives the same answer.
//
// The check (lstat) and the unlink are two steps: someone who can write the
// directory could swap the file between them. Only the directory's owners
// can, and the setup file lives where the operator chose to put it.
func (f *File) Remove() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.f == nil {
		return f.done
	}
	fi, err := os.Lstat(f.path)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return f.finish(nil)
	case err != nil:
		return fmt.Errorf("shellsetup: %w", err) // not final: may be retried
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || uint64(st.Dev) != f.dev || uint64(st.Ino) != f.ino {
		return f.finish(fmt.Errorf("shellsetup: %s was %w after libtmux-mcp created it; left it alone", f.path, ErrReplaced))
	}
	if err := os.Remove(f.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("shellsetup: %w", err)
	}
	return f.finish(nil)
}

// finish closes the file and records Remove's final answer.
func (f *File) finish(err error) error {
	f.f.Close()
	f.f, f.done = nil, err
	return err
}
