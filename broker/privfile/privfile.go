// Package privfile makes and checks the files of the broker's private directory: a lock file a
// live process holds (flock), files opened without following a symlink, the owner of a file,
// and liveness FIFOs whose hangup tells that every writer closed them (a shell that exec'd or
// exited).
//
// It knows nothing of processes or sockets (package peercred does). Besides PrivateBase, where
// this user's private directories go, it decides nothing: which directory to sweep is package
// broker's choice.
//
// Linux only: privfile_linux.go fills the platform table sys; elsewhere it stays nil, and every
// call that needs it answers ErrNotSupported (or false, or does nothing, as each function says).
package privfile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
)

// platform is what this package needs from the operating system, filled by that platform's
// file.
type platform struct {
	tryLock      func(fd uintptr) (bool, error)
	lockShared   func(fd uintptr) error
	ownerUID     func(os.FileInfo) (int, bool)
	openNoFollow func(path string, flag int, perm os.FileMode) (*os.File, error)
	openFIFO     func(path string) (int, error)
	hungup       func(fd int) bool
	waitHangup   func(ctx context.Context, fd int) error
	closeFD      func(fd int)
}

// sys is this platform's implementation; nil where none exists.
var sys *platform

// ErrNotSupported is what every call answers off Linux.
var ErrNotSupported = errors.New("the broker's private files are not supported on this platform; tmux_run needs Linux")

// Supported reports whether this platform has the private files (Linux).
func Supported() bool { return sys != nil }

// TryLock takes an exclusive lock on f (flock) without waiting, and reports whether it got it:
// false means another open file holds it. The lock lasts until f is closed, or until the process
// holding it exits, however it exits.
func TryLock(f *os.File) (bool, error) {
	if sys == nil {
		return false, ErrNotSupported
	}
	return sys.tryLock(f.Fd())
}

// LockShared takes a shared lock on f (flock), waiting while an exclusive one is held. Like
// TryLock's, it lasts until f is closed or its process exits.
func LockShared(f *os.File) error {
	if sys == nil {
		return ErrNotSupported
	}
	return sys.lockShared(f.Fd())
}

// OwnedByUs reports whether fi's owner is this process's user; false where owners cannot be
// read.
func OwnedByUs(fi os.FileInfo) bool {
	if sys == nil {
		return false
	}
	uid, ok := sys.ownerUID(fi)
	return ok && uid == os.Getuid()
}

// TrustedAncestors reports whether no one but this user and root can rename or replace dir:
// every directory above it, up to /, is a real directory (no symlink), owned by root or this
// user, and writable by neither group nor others unless sticky (as /tmp is: there only an
// entry's owner and the directory's may rename it). dir must be absolute.
func TrustedAncestors(dir string) bool {
	if sys == nil || !filepath.IsAbs(dir) {
		return false
	}
	for d := filepath.Dir(filepath.Clean(dir)); ; d = filepath.Dir(d) {
		fi, err := os.Lstat(d)
		if err != nil || !fi.IsDir() || (fi.Mode().Perm()&0o022 != 0 && fi.Mode()&os.ModeSticky == 0) {
			return false
		}
		if uid, ok := sys.ownerUID(fi); !ok || (uid != 0 && uid != os.Getuid()) {
			return false
		}
		if d == "/" {
			return true
		}
	}
}

// PrivateBase is where this user's private directories go: $XDG_RUNTIME_DIR when it is an
// absolute path to a directory of this user that no one else may enter (0700) and no one else
// can rename or replace (TrustedAncestors), else the temporary directory.
func PrivateBase() string {
	if x := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(x) {
		if fi, err := os.Lstat(x); err == nil && fi.IsDir() && fi.Mode().Perm()&0o077 == 0 && OwnedByUs(fi) && TrustedAncestors(x) {
			return x
		}
	}
	return os.TempDir()
}

// OpenNoFollow is os.OpenFile that refuses a symlink as the last element of path
// (O_NOFOLLOW) and closes the file on exec.
func OpenNoFollow(path string, flag int, perm os.FileMode) (*os.File, error) {
	if sys == nil {
		return nil, ErrNotSupported
	}
	return sys.openNoFollow(path, flag, perm)
}

// OpenFIFO makes a FIFO at path (0600) and opens its read end, non-blocking and close-on-exec,
// so a writer can open it at once. WaitHangup returns when every writer that opened it has
// closed it, and Hungup tells without waiting. CloseFD closes it.
func OpenFIFO(path string) (int, error) {
	if sys == nil {
		return -1, ErrNotSupported
	}
	return sys.openFIFO(path)
}

// Hungup reports, without waiting, whether fd (the read end of a FIFO) has seen all its
// writers close after at least one had it open.
func Hungup(fd int) bool { return sys != nil && sys.hungup(fd) }

// WaitHangup returns nil once fd (the read end of a FIFO from OpenFIFO) hangs up, or ctx's error
// once ctx is done, whichever comes first. Bytes written to the FIFO meanwhile are read and
// dropped: they mean a writer still holds it.
func WaitHangup(ctx context.Context, fd int) error {
	if sys == nil {
		return ErrNotSupported
	}
	return sys.waitHangup(ctx, fd)
}

// CloseFD closes a FIFO from OpenFIFO.
func CloseFD(fd int) {
	if sys != nil {
		sys.closeFD(fd)
	}
}
