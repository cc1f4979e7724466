package spool

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
	"testing"
)

// fullDisk lets left more bytes through to the file, then fails as a full
// disk does, after writing what fits.
type fullDisk struct {
	file *os.File
	left int
}

func (d *fullDisk) WriteAt(p []byte, off int64) (int, error) {
	if len(p) <= d.left {
		d.left -= len(p)
		return d.file.WriteAt(p, off)
	}
	n, err := d.file.WriteAt(p[:d.left], off)
	d.left = 0
	if err != nil {
		return n, err
	}
	return n, &fs.PathError{Op: "write", Path: d.file.Name(), Err: syscall.ENOSPC}
}

func TestWriteError(t *testing.T) {
	t.Parallel()
	const alphabet = "abcdefghijklmnopqrst"
	for _, tc := range []struct {
		why        string
		fits       int  // bytes the disk takes
		oneByOne   bool // else one Write of the whole stream
		head, tail string
		dropped    int64
	}{
		{"full inside the head", 3, false, "abc", "", 17},
		{"full inside the ring's first round: head and ring are one run", 7, true, "abcdefg", "", 13},
		{"full after the ring wrapped", 15, true, "abcde", "klmno", 10},
		{"full inside a write longer than the ring", 7, false, "abcde", "pq", 13},
	} {
		f := newFile(t, 10)
		f.writeAt = (&fullDisk{file: f.file, left: tc.fits}).WriteAt
		var werr error
		pieces := [][]byte{[]byte(alphabet)}
		if tc.oneByOne {
			pieces = pieces[:0]
			for i := range len(alphabet) {
				pieces = append(pieces, []byte{alphabet[i]})
			}
		}
		for _, p := range pieces {
			n, err := f.Write(p)
			if n != len(p) {
				t.Fatalf("%s: Write(%q) = %d; want %d, every byte counted", tc.why, p, n, len(p))
			}
			if err != nil && werr != nil {
				t.Fatalf("%s: Write(%q) after the error: %v; want the error returned once", tc.why, p, err)
			}
			if err != nil {
				werr = err
			}
		}
		if !errors.Is(werr, syscall.ENOSPC) {
			t.Fatalf("%s: the Writes returned %v; want one ENOSPC", tc.why, werr)
		}
		// Later writes are counted and not kept.
		write(t, f, []byte("uvwxyz"))
		got := read(t, f, 0, 100)
		samePart(t, tc.why, got, Part{Head: []byte(tc.head), Tail: []byte(tc.tail), Dropped: tc.dropped + 6, Next: 26})
		if got.Err != werr {
			t.Errorf("%s: Part.Err %v; want the Write's error %v", tc.why, got.Err, werr)
		}
		if f.Total() != 26 {
			t.Errorf("%s: Total %d; want 26", tc.why, f.Total())
		}
	}
}
