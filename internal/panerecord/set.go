package panerecord

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/libtmux/libtmux-mcp/broker/privfile"
)

// Set is the records of the panes of one tmux server.
type Set struct {
	dir    string // the records directory
	server string // the prefix of this server's record files
}

// Opener opens one tmux server's Set on first use (a server's identity may be known only
// later than the code that will use its records).
type Opener struct {
	once sync.Once
	set  *Set
	err  error
}

// Open returns the Set For(socket, serverPID) made on the first call, and its error; later
// calls return the same.
func (o *Opener) Open(socket string, serverPID int) (*Set, error) {
	o.once.Do(func() { o.set, o.err = For(socket, serverPID) })
	return o.set, o.err
}

// dirName is the records directory's name, made per user.
func dirName() string { return "libtmux-mcp-panes-" + strconv.Itoa(os.Getuid()) }

// For returns the records of the tmux server on socket whose process is
// serverPID, making this user's records directory if it is missing. An
// existing one must be a real directory of this user that no one else may
// enter; anything else is refused. It first removes the records of servers
// that are gone (sweep), then marks this server's (writeMarker).
func For(socket string, serverPID int) (*Set, error) {
	if !privfile.Supported() {
		return nil, privfile.ErrNotSupported
	}
	dir := filepath.Join(privfile.PrivateBase(), dirName())
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("make the pane records directory: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, fmt.Errorf("the pane records directory: %w", err)
	}
	if !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 || !privfile.OwnedByUs(fi) {
		return nil, fmt.Errorf("%s is not a private directory of this user (a real directory, mode 0700, owned by uid %d): pane claims and input records are kept by this process alone; remove it if it is not yours", dir, os.Getuid())
	}
	sweep(dir)
	sum := sha256.Sum256([]byte(socket + "\x00" + strconv.Itoa(serverPID)))
	s := &Set{dir: dir, server: hex.EncodeToString(sum[:8])}
	if err := writeMarker(filepath.Join(dir, s.server+"."+serverKind), socket, serverPID); err != nil {
		return nil, fmt.Errorf("mark the tmux server's pane records: %w", err)
	}
	return s, nil
}

// path is pane's (%N) record file of a kind (its extension: claim, input).
func (s *Set) path(pane, kind string) string {
	return filepath.Join(s.dir, s.server+"-"+strings.TrimPrefix(pane, "%")+"."+kind)
}
