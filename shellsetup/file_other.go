//go:build !unix

package shellsetup

import "errors"

var errNotSupported = errors.New("shellsetup: setup files need a Unix system; tmux_run needs Linux")

// File is a setup file this process created; none can be made here.
type File struct{ path string }

// Create answers an error: private files without symlink following need
// O_NOFOLLOW.
func Create(path string, content []byte) (*File, error) { return nil, errNotSupported }

// Path is where the file was created.
func (f *File) Path() string { return f.path }

// Remove has nothing to remove.
func (f *File) Remove() error { return nil }
