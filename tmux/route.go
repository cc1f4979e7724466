package tmux

import (
	"errors"
	"fmt"
	"path/filepath"
)

// DefaultSocketName is the socket used when no socket is configured.
const DefaultSocketName = "libtmux-mcp"

// Route selects a tmux server: the executable and exactly one socket
// selector. An empty route selects DefaultSocketName with "tmux" from PATH.
type Route struct {
	Bin        string // tmux executable; "tmux" (from PATH) when empty
	SocketPath string // absolute socket path (tmux -S)
	SocketName string // socket name under tmux's directory (tmux -L)
	Config     string // absolute config file for a server this route starts
}

// Validate reports the first problem with the route: both socket selectors,
// a relative path, or a control character in any value.
func (r Route) Validate() error {
	if r.SocketPath != "" && r.SocketName != "" {
		return errors.New("both a socket path and a socket name are set; choose one (--socket or --socket-name)")
	}
	for _, v := range []struct{ what, value string }{
		{"tmux executable", r.Bin},
		{"socket path", r.SocketPath},
		{"socket name", r.SocketName},
		{"tmux config", r.Config},
	} {
		if err := CheckPrintable(v.what, v.value); err != nil {
			return err
		}
	}
	if r.SocketPath != "" && !filepath.IsAbs(r.SocketPath) {
		return fmt.Errorf("socket path %q is relative; give an absolute path", r.SocketPath)
	}
	if r.Config != "" && !filepath.IsAbs(r.Config) {
		return fmt.Errorf("tmux config %q is relative; give an absolute path", r.Config)
	}
	return nil
}

// CheckPrintable refuses ASCII control characters and DEL in value, naming
// what the value is for.
func CheckPrintable(what, value string) error {
	for i := 0; i < len(value); i++ {
		if c := value[i]; c < 0x20 || c == 0x7f {
			return fmt.Errorf("%s %q contains control character 0x%02x at byte %d; remove it", what, value, c, i)
		}
	}
	return nil
}

// bin is the executable to run.
func (r Route) bin() string {
	if r.Bin == "" {
		return "tmux"
	}
	return r.Bin
}

// socketArgs are the global flags that pin the socket.
func (r Route) socketArgs() []string {
	switch {
	case r.SocketPath != "":
		return []string{"-S", r.SocketPath}
	case r.SocketName != "":
		return []string{"-L", r.SocketName}
	default:
		return []string{"-L", DefaultSocketName}
	}
}

// Explicit reports whether the operator chose the socket.
func (r Route) Explicit() bool { return r.SocketPath != "" || r.SocketName != "" }

// MayStartMinimal reports whether a server this route starts runs the
// shipped minimal configuration: only on the default socket with no
// configuration given. On any other route no provenance is Full, so what
// Ensure will find cannot change the default toolsets.
func (r Route) MayStartMinimal() bool { return r.Config == "" && !r.Explicit() }

// Socket describes the selected socket for people: the path, or the name.
func (r Route) Socket() string {
	switch {
	case r.SocketPath != "":
		return r.SocketPath
	case r.SocketName != "":
		return r.SocketName
	default:
		return DefaultSocketName
	}
}
