package spool

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// newFile creates a File bounded by bound in a test directory, removed
// when the test ends.
func newFile(t testing.TB, bound int64) *File {
	t.Helper()
	f, err := Create(filepath.Join(t.TempDir(), "stdout"), bound)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Remove() })
	return f
}

// write writes each piece to f and fails the test on an error or a
// short count.
func write(t testing.TB, f *File, pieces ...[]byte) {
	t.Helper()
	for _, p := range pieces {
		if n, err := f.Write(p); n != len(p) || err != nil {
			t.Fatalf("Write(%d bytes) = %d, %v; want %d, nil", len(p), n, err, len(p))
		}
	}
}

// read calls f.Read and fails the test on an error or a broken invariant.
func read(t testing.TB, f *File, from int64, budget int) Part {
	t.Helper()
	p, err := f.Read(from, budget)
	if err == nil {
		err = checkInvariant(p, from, budget)
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// checkInvariant checks what holds of every Part: it accounts for every
// byte of [from, Next), within the budget.
func checkInvariant(p Part, from int64, budget int) error {
	if got := int64(len(p.Head)+len(p.Tail)) + p.Dropped; got != p.Next-from {
		return fmt.Errorf("Read(%d, %d): len(Head) %d + len(Tail) %d + Dropped %d = %d; want Next %d - from %d = %d",
			from, budget, len(p.Head), len(p.Tail), p.Dropped, got, p.Next, from, p.Next-from)
	}
	if len(p.Head)+len(p.Tail) > budget {
		return fmt.Errorf("Read(%d, %d): %d bytes of Head and Tail; want at most the budget", from, budget, len(p.Head)+len(p.Tail))
	}
	if p.Dropped < 0 {
		return fmt.Errorf("Read(%d, %d): Dropped %d; want >= 0", from, budget, p.Dropped)
	}
	return nil
}

func samePart(t testing.TB, why string, got, want Part) {
	t.Helper()
	if !bytes.Equal(got.Head, want.Head) || !bytes.Equal(got.Tail, want.Tail) || got.Dropped != want.Dropped || got.Next != want.Next {
		t.Fatalf("%s: got Head %q Tail %q Dropped %d Next %d; want Head %q Tail %q Dropped %d Next %d",
			why, got.Head, got.Tail, got.Dropped, got.Next, want.Head, want.Tail, want.Dropped, want.Next)
	}
}

func TestCreateRefusesWhatIsThere(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("someone else's"), 0o600); err != nil {
		t.Fatal(err)
	}
	toFile := filepath.Join(dir, "link-to-file")
	if err := os.Symlink(file, toFile); err != nil {
		t.Fatal(err)
	}
	nowhere := filepath.Join(dir, "not-yet")
	toNowhere := filepath.Join(dir, "dangling-link")
	if err := os.Symlink(nowhere, toNowhere); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{file, toFile, toNowhere} {
		if f, err := Create(path, 10); !errors.Is(err, fs.ErrExist) {
			if f != nil {
				f.Remove()
			}
			t.Errorf("Create(%s) = %v; want an error that is fs.ErrExist", filepath.Base(path), err)
		}
	}
	if got, _ := os.ReadFile(file); string(got) != "someone else's" {
		t.Errorf("the file behind the link holds %q; want it untouched", got)
	}
	if _, err := os.Lstat(nowhere); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the dangling link's target: %v; want it not created", err)
	}
}

func TestCreateMakesAPrivateFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "stderr")
	f, err := Create(path, 10)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Remove()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v; want a regular file with mode 0600", fi.Mode())
	}
}

func TestRemove(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "stdout")
	f, err := Create(path, 10)
	if err != nil {
		t.Fatal(err)
	}
	write(t, f, []byte("abc"))
	if err := f.Remove(); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after Remove, Lstat: %v; want the file gone", err)
	}
	if err := f.Remove(); err != nil {
		t.Errorf("second Remove: %v; want nil", err)
	}
	if n, err := f.Write([]byte("x")); n != 0 || err == nil {
		t.Errorf("Write after Remove = %d, %v; want 0 and an error", n, err)
	}
	if _, err := f.Read(0, 10); err == nil {
		t.Errorf("Read after Remove: no error; want one")
	}
}

func TestReadRefusesBadArguments(t *testing.T) {
	t.Parallel()
	f := newFile(t, 10)
	write(t, f, []byte("abc"))
	for _, tc := range []struct {
		from     int64
		budget   int
		mentions string
	}{
		{-1, 10, "[0, 3]"},
		{4, 10, "[0, 3]"},
		{0, 0, "budget"},
		{0, -5, "budget"},
	} {
		_, err := f.Read(tc.from, tc.budget)
		if err == nil || !strings.Contains(err.Error(), tc.mentions) {
			t.Errorf("Read(%d, %d) = %v; want an error mentioning %q", tc.from, tc.budget, err, tc.mentions)
		}
	}
}

// TestRead pins down with a bound of 10 (a head of 5 bytes, a ring of
// 5) what a reader gets.
func TestRead(t *testing.T) {
	t.Parallel()
	const alphabet = "abcdefghijklmnopqrstuvwxyz"
	for _, tc := range []struct {
		why          string
		stream       string
		from         int64
		budget       int
		head, tail   string
		dropped      int64
		shortOrWhole bool
	}{
		{why: "shorter than the bound", stream: "abc", from: 1, budget: 100, head: "bc"},
		{why: "exactly the bound", stream: "abcdefghij", budget: 100, head: "abcdefghij"},
		{why: "exactly the bound, budget of 4", stream: "abcdefghij", budget: 4, head: "ab", tail: "ij", dropped: 6},
		{why: "exactly the bound, budget of 1: all of it for the tail", stream: "abcdefghij", budget: 1, tail: "j", dropped: 9},
		{why: "one byte past the bound", stream: "abcdefghijk", budget: 100, head: "abcde", tail: "ghijk", dropped: 1},
		{why: "ring wrapped", stream: alphabet, budget: 100, head: "abcde", tail: "vwxyz", dropped: 16},
		{why: "ring wrapped, budget smaller than kept", stream: alphabet, budget: 4, head: "ab", tail: "yz", dropped: 22},
		{why: "ring wrapped, budget of 7: a short head leaves the rest to the tail", stream: alphabet, from: 3, budget: 7, head: "de", tail: "vwxyz", dropped: 16},
		{why: "from inside the head", stream: alphabet, from: 3, budget: 100, head: "de", tail: "vwxyz", dropped: 16},
		{why: "from inside the dropped middle: the tail fits, all in Head", stream: alphabet, from: 10, budget: 100, head: "vwxyz", dropped: 11},
		{why: "from inside the dropped middle, budget smaller than kept", stream: alphabet, from: 10, budget: 3, head: "v", tail: "yz", dropped: 13},
		{why: "from inside the tail", stream: alphabet, from: 23, budget: 100, head: "xyz"},
		{why: "from inside the tail, budget equal to kept", stream: alphabet, from: 23, budget: 3, head: "xyz"},
		{why: "from at Total", stream: alphabet, from: 26, budget: 100},
		{why: "empty stream", stream: "", budget: 1},
	} {
		f := newFile(t, 10)
		for i := range len(tc.stream) {
			write(t, f, []byte{tc.stream[i]})
		}
		got := read(t, f, tc.from, tc.budget)
		samePart(t, tc.why, got, Part{Head: []byte(tc.head), Tail: []byte(tc.tail), Dropped: tc.dropped, Next: int64(len(tc.stream))})
	}
}

// TestReadDoesNotSplitUTF8 pins down the cuts that move: a cut by the
// budget, the head region's end and the ring's start.
func TestReadDoesNotSplitUTF8(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		why        string
		bound      int64
		stream     string
		budget     int
		head, tail string
		dropped    int64
	}{
		{"a budget cut inside 日 and inside 本", 100, "日本日本", 8, "日", "本", 6},
		{"a budget cut between two runes moves nothing", 100, "日本日本", 6, "日", "本", 6},
		{"the head region ends inside é, the ring starts inside 日", 10, "aaaaé------日bbb", 100, "aaaa", "bbb", 11},
		{"a budget too small for any whole rune", 100, "日本日本", 2, "", "", 12},
	} {
		f := newFile(t, tc.bound)
		write(t, f, []byte(tc.stream))
		got := read(t, f, 0, tc.budget)
		samePart(t, tc.why, got, Part{Head: []byte(tc.head), Tail: []byte(tc.tail), Dropped: tc.dropped, Next: int64(len(tc.stream))})
	}
}

// TestReadKeepsUTF8Whole reads multi-byte text at every rune boundary,
// every budget and many bounds: Head and Tail are always valid UTF-8.
func TestReadKeepsUTF8Whole(t *testing.T) {
	t.Parallel()
	text := []byte(strings.Repeat("é日本a", 7) + strings.Repeat("é", 5) + strings.Repeat("日本", 4))
	for bound := int64(1); bound <= 40; bound++ {
		f := newFile(t, bound)
		// Pieces of 5 bytes split runes between writes, as a pipe does.
		for rest := text; len(rest) > 0; {
			n := min(5, len(rest))
			write(t, f, rest[:n])
			rest = rest[n:]
		}
		for from := 0; from <= len(text); from++ {
			if from < len(text) && !utf8.RuneStart(text[from]) {
				continue
			}
			for budget := 1; budget <= 30; budget++ {
				p := read(t, f, int64(from), budget)
				if !utf8.Valid(p.Head) || !utf8.Valid(p.Tail) {
					t.Fatalf("bound %d, Read(%d, %d): Head %q Tail %q; want valid UTF-8", bound, from, budget, p.Head, p.Tail)
				}
				samePart(t, "against the model", p, model(text, bound, int64(from), budget))
			}
		}
	}
}

func TestDefaultBound(t *testing.T) {
	t.Parallel()
	f := newFile(t, 0)
	stream := bytes.Repeat([]byte("0123456789abcdef"), int(DefaultBound/16))
	stream = append(stream, 'z')
	write(t, f, stream)
	p := read(t, f, 0, int(DefaultBound)+10)
	half := DefaultBound / 2
	samePart(t, "one byte past DefaultBound", p, Part{Head: stream[:half], Tail: stream[half+1:], Dropped: 1, Next: DefaultBound + 1})
}

// TestConcurrentWriteRead has one goroutine write while others read. A
// follower whose budget holds everything, reading each time from the last
// Next, gets the stream exactly; a reader of a small bound with a small
// budget always gets an accounted Part whose Tail is the newest bytes.
func TestConcurrentWriteRead(t *testing.T) {
	t.Parallel()
	var stream []byte
	for i := range 3000 {
		stream = append(stream, bytes.Repeat([]byte{byte('a' + i%26)}, 1+i%17)...)
	}
	whole, small := newFile(t, 1<<20), newFile(t, 64)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(done)
		for rest := stream; len(rest) > 0; {
			n := min(1+len(rest)%37, len(rest))
			for _, f := range []*File{whole, small} {
				if _, err := f.Write(rest[:n]); err != nil {
					t.Errorf("Write: %v", err)
					return
				}
			}
			rest = rest[n:]
		}
	})
	var followed []byte
	wg.Go(func() {
		for next, finished := int64(0), false; !finished || next < int64(len(stream)); {
			select {
			case <-done:
				finished = true
			default:
			}
			p, err := whole.Read(next, 1<<20)
			if err == nil && (len(p.Tail) != 0 || p.Dropped != 0) {
				err = fmt.Errorf("follower Read(%d): Tail %q Dropped %d; want all in Head", next, p.Tail, p.Dropped)
			}
			if err != nil {
				t.Error(err)
				return
			}
			followed = append(followed, p.Head...)
			next = p.Next
		}
	})
	wg.Go(func() {
		for from, finished := int64(0), false; !finished; {
			select {
			case <-done:
				finished = true
			default:
			}
			p, err := small.Read(from, 9)
			if err == nil {
				err = checkInvariant(p, from, 9)
			}
			if err == nil && (!bytes.HasSuffix(stream[:p.Next], p.Tail) || !bytes.Contains(stream[from:p.Next], p.Head)) {
				err = fmt.Errorf("Read(%d, 9) at Next %d: Head %q Tail %q; want bytes of the stream, Tail its newest", from, p.Next, p.Head, p.Tail)
			}
			if err != nil {
				t.Error(err)
				return
			}
			from = p.Next / 2
		}
	})
	wg.Wait()
	if !bytes.Equal(followed, stream) {
		t.Errorf("the follower read %d bytes; want the %d written, in order", len(followed), len(stream))
	}
}
