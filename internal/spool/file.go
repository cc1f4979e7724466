package spool

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// DefaultBound is the most bytes of one stream a File keeps when Create is given 0: 16 MiB.
const DefaultBound int64 = 16 << 20

// File is one stream's file. Write and Read may be called from different goroutines.
//
// The file holds the head at [0, head) and the tail ring at [head,
// head+ring): stream byte s >= head lives at head + (s-head)%ring. Until
// the ring wraps, the file holds the stream exactly.
type File struct {
	path string
	file *os.File
	head int64 // bytes of the head region: bound/2
	ring int64 // bytes of the tail ring: bound - bound/2, at least 1

	// writeAt is file.WriteAt; a test puts a full disk in its place.
	writeAt func(p []byte, off int64) (int, error)

	mu      sync.Mutex
	total   int64 // bytes the stream has had, kept or dropped
	headLen int64 // stream bytes [0, headLen) are in the head region
	// Stream bytes [ringFrom, ringTo) are in the ring; ringTo-ringFrom <= ring.
	ringFrom, ringTo int64
	err              error // the first write error; nothing is kept after it
	removed          bool
}

// Create makes the file at path exclusively: mode 0600, O_CREATE|O_EXCL|O_NOFOLLOW|O_CLOEXEC|O_RDWR
// (a file or symlink already there is an error, nothing is followed). bound <= 0 means DefaultBound;
// the head is bound/2 bytes, the tail ring bound-bound/2 bytes. The file's directory is the caller's
// (a private 0700 directory).
func Create(path string, bound int64) (*File, error) {
	if bound <= 0 {
		bound = DefaultBound
	}
	flags := os.O_RDWR | os.O_CREATE | os.O_EXCL | unix.O_NOFOLLOW | unix.O_CLOEXEC
	file, err := os.OpenFile(path, flags, 0o600)
	if err != nil {
		return nil, fmt.Errorf("spool: create: %w", err)
	}
	// The umask may have taken bits away; the mode is 0600 whatever it is.
	if err := file.Chmod(0o600); err != nil {
		file.Close()
		os.Remove(path)
		return nil, fmt.Errorf("spool: create: %w", err)
	}
	head := bound / 2
	return &File{
		path:     path,
		file:     file,
		head:     head,
		ring:     bound - head,
		writeAt:  file.WriteAt,
		ringFrom: head,
		ringTo:   head,
	}, nil
}

// Write appends p to the stream. It never returns a short count without an error. Past the bound,
// the bytes go into the tail ring (overwriting the oldest tail bytes), and the ones pushed out are
// counted as dropped. A write error (a full disk) is returned and remembered: later Writes still
// count their bytes in Total but keep nothing, and Read reports the error (Part.Err).
//
// While the File is not removed, n is len(p): every byte counts in Total,
// kept or not. The Write that meets the error returns it with len(p);
// later Writes return len(p) and no error.
func (f *File) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.removed {
		return 0, f.removedError()
	}
	pos := f.total
	f.total += int64(len(p))
	if f.err != nil {
		return len(p), nil
	}
	if err := f.keep(p, pos); err != nil {
		f.err = fmt.Errorf("spool: keeping stream bytes [%d, %d): %w; later bytes are counted, not kept", pos, f.total, err)
		return len(p), f.err
	}
	return len(p), nil
}

// keep writes p, the stream's bytes from pos on, where they belong: what
// falls before head into the head region, the rest into the ring. Only
// the last ring bytes of a write longer than the ring are written. On an
// error the bookkeeping names exactly the bytes that were written.
func (f *File) keep(p []byte, pos int64) error {
	if pos < f.head {
		n := min(int64(len(p)), f.head-pos)
		w, err := f.writeAt(p[:n], pos)
		f.headLen = pos + int64(w)
		if err != nil {
			return err
		}
		p, pos = p[n:], pos+n
	}
	if len(p) == 0 {
		return nil
	}
	if skip := int64(len(p)) - f.ring; skip > 0 {
		p, pos = p[skip:], pos+skip
	}
	if pos != f.ringTo {
		// The bytes before pos went unwritten: what the ring held is no
		// longer next to the new bytes, and they overwrite all of it.
		f.ringFrom, f.ringTo = pos, pos
	}
	for len(p) > 0 {
		slot := (pos - f.head) % f.ring
		n := min(int64(len(p)), f.ring-slot)
		w, err := f.writeAt(p[:n], f.head+slot)
		f.ringTo += int64(w)
		f.ringFrom = max(f.ringFrom, f.ringTo-f.ring)
		if err != nil {
			return err
		}
		p, pos = p[n:], pos+n
	}
	return nil
}

// Total is the number of bytes the stream has had (kept or dropped).
func (f *File) Total() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.total
}

// Remove closes the file and removes it. Safe to call twice; Read and Write after Remove return
// an error.
func (f *File) Remove() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.removed {
		return nil
	}
	f.removed = true
	errClose := f.file.Close()
	errRemove := os.Remove(f.path)
	if errors.Is(errRemove, fs.ErrNotExist) {
		errRemove = nil
	}
	return errors.Join(errClose, errRemove)
}

func (f *File) removedError() error {
	return fmt.Errorf("spool: %s was removed", f.path)
}
