// Package shellsetup writes the zsh setup file a person sources to enroll a
// pane for tmux_run. The file is a real zsh script (setup.zsh, embedded)
// with the broker socket, the helper path, a single-use token and the pane
// filled in. Files are created privately (0600, O_EXCL|O_NOFOLLOW) and
// removed only while they are still the file this process created.
//
// It does not talk to the shell; package broker does.
package shellsetup

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
)

//go:embed setup.zsh
var template string

// Params fill the template.
type Params struct {
	Socket string // absolute path of the broker socket
	Helper string // absolute path of libtmux-mcp-helper
	Token  string // 32 lowercase hex digits
	Pane   string // %3
}

var (
	tokenPattern = regexp.MustCompile(`^[a-f0-9]{32}$`)
	panePattern  = regexp.MustCompile(`^%[0-9]+$`)
)

// Render returns the setup file for p.
func Render(p Params) ([]byte, error) {
	for _, v := range []struct{ what, path string }{{"broker socket", p.Socket}, {"helper", p.Helper}} {
		if !filepath.IsAbs(v.path) {
			return nil, fmt.Errorf("%s path %q is not absolute", v.what, v.path)
		}
		if strings.ContainsFunc(v.path, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return nil, fmt.Errorf("%s path %q contains a control character", v.what, v.path)
		}
	}
	if !tokenPattern.MatchString(p.Token) {
		return nil, errors.New("token must be 32 lowercase hex digits")
	}
	if !panePattern.MatchString(p.Pane) {
		return nil, fmt.Errorf("pane %q is not a pane id like %%3", p.Pane)
	}
	r := strings.NewReplacer("@SOCK@", Quote(p.Socket), "@HELPER@", Quote(p.Helper), "@TOKEN@", p.Token, "@PANE@", p.Pane)
	return []byte(r.Replace(template)), nil
}

// Quote quotes s for zsh: single quotes, with each ' written as '\”.
func Quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// File is a setup file this process created.
type File struct {
	path     string
	dev, ino uint64
}

// Create writes content to a new file at path with mode 0600. An existing
// file, or a symlink (even a dangling one), is refused: the path is never
// followed or overwritten.
func Create(path string, content []byte) (*File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("%s already exists; libtmux-mcp never overwrites a file it did not create (remove it: rm %s)", path, path)
		}
		return nil, fmt.Errorf("create the setup file: %w", err)
	}
	defer f.Close()
	if err := f.Chmod(0o600); err != nil { // whatever the umask
		os.Remove(path)
		return nil, err
	}
	if _, err := f.Write(content); err != nil {
		os.Remove(path)
		return nil, err
	}
	if err := f.Sync(); err != nil {
		os.Remove(path)
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		os.Remove(path)
		return nil, err
	}
	st := fi.Sys().(*syscall.Stat_t)
	return &File{path: path, dev: uint64(st.Dev), ino: uint64(st.Ino)}, nil
}

// Path is where the file was created.
func (f *File) Path() string { return f.path }

// Remove deletes the file if it is still the one Create made. A missing
// file is not an error; a file replaced by someone else is left alone.
func (f *File) Remove() error {
	fi, err := os.Lstat(f.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || uint64(st.Dev) != f.dev || uint64(st.Ino) != f.ino {
		return fmt.Errorf("%s was replaced by another file; left it alone", f.path)
	}
	if err := os.Remove(f.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
