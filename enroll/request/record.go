package request

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/libtmux/libtmux-mcp/broker/privfile"
)

// RecordName and SocketName are the files this package keeps in a broker directory.
const (
	RecordName = "server.json"
	SocketName = "request.sock"
)

// maxRecord bounds the record a command reads.
const maxRecord = 16 << 10

// Record is what a server with tmux_run says about itself, for libtmux-mcp enroll to find it.
type Record struct {
	PID        int       `json:"pid"`
	Client     string    `json:"client,omitempty"` // the MCP client's name from initialize, once known
	Started    time.Time `json:"started"`
	TmuxSocket string    `json:"tmux_socket"` // the tmux server it serves
	TmuxPID    int       `json:"tmux_pid"`
	Socket     string    `json:"socket"` // the request socket
	Version    string    `json:"version"`
}

// WriteRecord writes rec as dir/server.json, mode 0600, created exclusively (never following a
// symlink); a record already there is replaced by renaming a new file over it, so a reader sees
// the old record or the new one, never a part. dir is the broker's private directory.
func WriteRecord(dir string, rec Record) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, RecordName+".new")
	f, err := privfile.OpenNoFollow(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("tmux_run: write the server record: %w", err)
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, RecordName))
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("tmux_run: write the server record: %w", err)
	}
	return nil
}

// ReadRecord reads dir/server.json: a regular file of this user, mode 0600, not a symlink.
func ReadRecord(dir string) (Record, error) {
	f, err := privfile.OpenNoFollow(filepath.Join(dir, RecordName), os.O_RDONLY, 0)
	if err != nil {
		return Record{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Record{}, err
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 || !privfile.OwnedByUs(fi) {
		return Record{}, errors.New("not a private file of this user")
	}
	b, err := io.ReadAll(io.LimitReader(f, maxRecord))
	if err != nil {
		return Record{}, err
	}
	var rec Record
	if err := json.Unmarshal(b, &rec); err != nil {
		return Record{}, err
	}
	return rec, nil
}
