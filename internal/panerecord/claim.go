package panerecord

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/libtmux/libtmux-mcp/broker/privfile"
)

// Holder is who holds a pane's claim.
type Holder struct {
	PID     int       `json:"pid"`
	Since   time.Time `json:"since"`
	Tool    string    `json:"tool"`             // run_shell_command or tmux_run
	Handle  string    `json:"handle,omitempty"` // the run's handle, when it has one
	Command string    `json:"command"`          // the command's first line, shortened
}

// Shown is a claim as tools show it: its holder, and whether that is the
// process showing it.
type Shown struct {
	PID         int    `json:"pid" jsonschema:"the libtmux-mcp process holding the pane"`
	ThisProcess bool   `json:"thisProcess"`
	Since       string `json:"since" jsonschema:"RFC 3339"`
	Tool        string `json:"tool" jsonschema:"run_shell_command or tmux_run"`
	Command     string `json:"command" jsonschema:"first line, shortened"`
	Handle      string `json:"handle,omitempty"`
}

// Shown is h as tools show it.
func (h Holder) Shown() *Shown {
	return &Shown{PID: h.PID, ThisProcess: h.Mine(), Since: h.Since.UTC().Format(time.RFC3339), Tool: h.Tool, Command: h.Command, Handle: h.Handle}
}

// Mine reports whether this process is the holder.
func (h Holder) Mine() bool { return h.PID == os.Getpid() }

// String describes the holder for a refusal or a log line.
func (h Holder) String() string {
	s := fmt.Sprintf("libtmux-mcp process %d (%s", h.PID, h.Tool)
	if h.Command != "" {
		s += " " + strconv.Quote(h.Command)
	}
	s += " for " + time.Since(h.Since).Round(time.Second).String()
	if h.Handle != "" {
		s += ", handle " + h.Handle
	}
	return s + ")"
}

// commandMax bounds the command kept in a claim, in characters.
const commandMax = 80

// FirstLine is command's first line, its control characters dropped,
// shortened to commandMax characters: what a claim records of a command.
func FirstLine(command string) string {
	first, _, more := strings.Cut(command, "\n")
	first = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, first)
	if r := []rune(first); len(r) > commandMax {
		first, more = string(r[:commandMax]), true
	}
	if more {
		first += "…"
	}
	return first
}

// BusyError is the refusal of a claim another process holds.
type BusyError struct {
	Pane   string
	Holder Holder
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("pane %s is claimed by %s", e.Pane, e.Holder)
}

// claimKind names claim files.
const claimKind = "claim"

// Claim is a held claim. Release ends it.
type Claim struct {
	f    *os.File
	path string
	// Gone is the claim a holder that is gone (killed) left on the pane,
	// which this one took over; nil when the pane was free.
	Gone *Holder
}

// takeTries bounds Take's looks at a pane's file that changed hands while
// it looked (released, or taken over from a holder that is gone).
const takeTries = 16

// Take claims pane for h, which gets this process's pid and the time. A
// pane another process holds gives a *BusyError naming it.
//
// The claim is written and locked in a file of its own, then linked to the
// pane's name: a file at that name always says who holds it. A file whose
// lock is free was left by a holder that died; it is replaced while its
// lock is held, so two takers never both replace it.
func (s *Set) Take(pane string, h Holder) (*Claim, error) {
	h.PID, h.Since, h.Command = os.Getpid(), time.Now(), FirstLine(h.Command)
	path := s.path(pane, claimKind)
	fail := func(err error) (*Claim, error) {
		return nil, fmt.Errorf("take the claim of pane %s: %w", pane, err)
	}
	tmp := newName(path)
	f, err := privfile.OpenNoFollow(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fail(err)
	}
	linked := false
	defer func() {
		if !linked {
			os.Remove(tmp)
			f.Close()
		}
	}()
	if ok, err := privfile.TryLock(f); !ok || err != nil {
		if err == nil {
			err = errors.New("a new claim file was locked by another open file")
		}
		return fail(err)
	}
	if err := json.NewEncoder(f).Encode(h); err != nil {
		return fail(err)
	}
	for range takeTries {
		err := os.Link(tmp, path)
		if err == nil {
			linked = true
			os.Remove(tmp)
			return &Claim{f: f, path: path}, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return fail(err)
		}
		held, gone, err := s.look(path)
		switch {
		case err != nil:
			return fail(err)
		case gone == nil && held.PID != 0:
			return nil, &BusyError{Pane: pane, Holder: held}
		case gone == nil:
			// Released, or being taken over, while we looked: a moment's wait lets a taker
			// that was descheduled finish.
			time.Sleep(takeBackoff)
			continue
		}
		// gone's lock is ours: no one else can replace its file now.
		err = os.Rename(tmp, path)
		gone.Close()
		if err != nil {
			return fail(err)
		}
		linked = true
		c := &Claim{f: f, path: path}
		if held.PID != 0 {
			c.Gone = &held
		}
		return c, nil
	}
	return fail(fmt.Errorf("its file changed hands %d times while it was taken; try again", takeTries))
}

// takeBackoff is Take's wait before it looks again at a file that changed hands.
const takeBackoff = 100 * time.Microsecond

// newInfix marks the name of a file not yet linked or renamed to its own: a new claim, a
// new server marker.
const newInfix = ".new-"

// newName is a name beside path for a new file, unique to this process and this call.
func newName(path string) string {
	b := make([]byte, 6)
	rand.Read(b)
	return path + newInfix + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b)
}

// look reads the claim file at path. held is its holder when a live process
// holds its lock (PID 0 when the file went away, or changed hands, while it
// looked). When its lock was free, gone is the file, its lock now held by
// the caller, and held is who left it.
func (s *Set) look(path string) (held Holder, gone *os.File, err error) {
	g, err := privfile.OpenNoFollow(path, os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return Holder{}, nil, nil
	}
	if err != nil {
		return Holder{}, nil, err
	}
	held = readHolder(g)
	ok, err := privfile.TryLock(g)
	if err != nil || !ok {
		g.Close()
		if err == nil && !alive(held.PID) {
			held = Holder{} // a taker holds a dead holder's file for a moment
		}
		return held, nil, err
	}
	if !samePath(g, path) { // released (removed) before we locked it
		g.Close()
		return Holder{}, nil, nil
	}
	return held, g, nil
}

// alive reports whether process pid exists.
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// samePath reports whether f is the file now at path.
func samePath(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Lstat(path)
	return err == nil && os.SameFile(a, b)
}

// readHolder reads the holder recorded in f; PID 0 when it cannot be read.
func readHolder(f *os.File) Holder {
	b, err := io.ReadAll(io.NewSectionReader(f, 0, 4096))
	var h Holder
	if err != nil || json.Unmarshal(b, &h) != nil {
		return Holder{}
	}
	return h
}

// Release ends the claim: the file is removed, then unlocked. Calling it
// again does nothing.
func (c *Claim) Release() {
	if c == nil || c.f == nil {
		return
	}
	os.Remove(c.path)
	c.f.Close()
	c.f = nil
}

// Holder reads who holds pane's claim: ok is false when no live process
// does. It takes no lock, so it never stands in a claimer's way; a holder
// killed a moment ago may still be reported until its pid is reused or its
// file taken over.
func (s *Set) Holder(pane string) (Holder, bool) {
	f, err := privfile.OpenNoFollow(s.path(pane, claimKind), os.O_RDONLY, 0)
	if err != nil {
		return Holder{}, false
	}
	defer f.Close()
	h := readHolder(f)
	if !alive(h.PID) {
		return Holder{}, false
	}
	return h, true
}
