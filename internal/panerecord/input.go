package panerecord

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/libtmux/libtmux-mcp/broker/privfile"
)

// inputKind names input record files.
const inputKind = "input"

// InputBegins records that this process is about to send panes input (keys,
// a paste, a typed command line); the function it returns records that the
// input went (or failed) and must be called once. While input is under way
// a pane's record is locked shared, so InputSince sees it in flight. An
// error means some input is not recorded for other processes (this one
// still knows it). A nil Set records nothing.
func (s *Set) InputBegins(panes ...string) (end func(), err error) {
	var files []*os.File
	if s != nil {
		for _, pane := range panes {
			f, ferr := privfile.OpenNoFollow(s.path(pane, inputKind), os.O_RDWR|os.O_CREATE, 0o600)
			if ferr == nil {
				if ferr = privfile.LockShared(f); ferr != nil {
					f.Close()
				}
			}
			if ferr != nil {
				err = errors.Join(err, ferr)
				continue
			}
			files = append(files, f)
		}
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			now := time.Now()
			for _, f := range files {
				f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
				os.Chtimes(f.Name(), now, now)
				f.Close()
			}
		})
	}, err
}

// InputSince reports whether any process sent pane input at or after t, or
// is sending it now, and which process sent the last (0 when unknown).
func (s *Set) InputSince(pane string, t time.Time) (sent bool, pid int) {
	f, err := privfile.OpenNoFollow(s.path(pane, inputKind), os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return false, 0
	}
	if err != nil {
		return true, 0 // a record that cannot be read cannot clear the pane
	}
	defer f.Close()
	b := make([]byte, 16)
	n, _ := f.ReadAt(b, 0)
	pid, _ = strconv.Atoi(strings.TrimSpace(string(b[:n])))
	if ok, err := privfile.TryLock(f); err != nil || !ok {
		return true, pid // input under way
	}
	fi, err := f.Stat()
	return err != nil || !fi.ModTime().Before(t), pid
}
