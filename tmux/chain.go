package tmux

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// SnapshotWith reads the snapshot of want and, in the same tmux invocation
// (one queue step, so one moment), runs each of cmds. It returns the
// snapshot and each command's stdout. Every command's output is preceded by
// a marker line carrying a random nonce, so text a pane printed (a capture)
// cannot be taken for the end of one output and the start of the next.
func (c *Client) SnapshotWith(ctx context.Context, want Want, cmds ...[]string) (Snapshot, []string, error) {
	seps := NewSeparators()
	args, err := snapshotArgs(want, seps)
	if err != nil {
		return Snapshot{}, nil, err
	}
	nonce := newNonce()
	for i, cmd := range cmds {
		args = append(args, ";", "display-message", "-p", chainMarker(nonce, i), ";")
		args = append(args, cmd...)
	}
	out, runErr := c.Run(ctx, args...)
	if runErr != nil {
		return Snapshot{}, nil, runErr
	}
	outs := make([]string, len(cmds))
	head := out
	if len(cmds) > 0 {
		first := chainMarker(nonce, 0) + "\n"
		i := strings.Index(out, first)
		if i < 0 {
			return Snapshot{}, nil, fmt.Errorf("tmux output lacks the marker of its first command: %q", out)
		}
		head, out = out[:i], out[i+len(first):]
		for n := range cmds {
			if n == len(cmds)-1 {
				outs[n] = out
				break
			}
			next := chainMarker(nonce, n+1) + "\n"
			j := strings.Index(out, next)
			if j < 0 {
				return Snapshot{}, nil, fmt.Errorf("tmux output lacks the marker of command %d", n+1)
			}
			outs[n], out = out[:j], out[j+len(next):]
		}
	}
	snap, _, err := snapshotResult(head, nil, seps)
	return snap, outs, err
}

// chainMarker is printable text: tmux 3.4 and 3.5a would print a control
// character as an octal escape.
func chainMarker(nonce string, i int) string {
	return "<libtmux-mcp-" + nonce + "-" + strconv.Itoa(i) + ">"
}

// newNonce returns 128 random bits in hex.
func newNonce() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand panics on failure since Go 1.24)
	return hex.EncodeToString(b[:])
}

// Displayed evaluates each of the format variables names for target (a
// pane, window or session id; empty for tmux's default target) with one
// display-message and returns their values in order. Names must be plain
// variable names (lower-case letters, digits and underscores), or a user
// option's (@ and such a name): this builds #{name} itself and never takes
// a format from its caller.
func (c *Client) Displayed(ctx context.Context, target string, names []string) ([]string, error) {
	sep := "<v" + newNonce() + ">"
	var f strings.Builder
	for i, n := range names {
		if !ValidVariableName(strings.TrimPrefix(n, "@")) {
			return nil, fmt.Errorf("%q is not a format variable name", n)
		}
		if i > 0 {
			f.WriteString(sep)
		}
		f.WriteString("#{" + n + "}")
	}
	f.WriteString(sep)
	args := []string{"display-message", "-p"}
	if target != "" {
		if !ValidPaneID(target) && !ValidWindowID(target) && !ValidSessionID(target) {
			return nil, fmt.Errorf("target %q is not a pane, window or session id", target)
		}
		args = append(args, "-t", target)
	}
	out, err := c.Run(ctx, append(args, f.String())...)
	if err != nil {
		return nil, err
	}
	vals := strings.Split(out, sep)
	if len(vals) != len(names)+1 {
		return nil, fmt.Errorf("tmux answered %d values for %d variables", len(vals)-1, len(names))
	}
	return vals[:len(names)], nil
}

// RunThenRead runs cmd and then, in the same tmux invocation (one queue
// step, so nothing happens in between), prints the format variables vars
// (plain names such as window_name) for target. It returns their values.
func (c *Client) RunThenRead(ctx context.Context, cmd []string, target string, vars ...string) ([]string, error) {
	seps := NewSeparators()
	args := append(append([]string{}, cmd...), ";", "display-message", "-p", "-t", target, seps.Format(vars...))
	out, err := c.Run(ctx, args...)
	if err != nil {
		return nil, err
	}
	return seps.Last(out, len(vars))
}

// RunPrinting runs a command that prints the new object it made (-P) with
// the format variables vars, and returns their values.
func (c *Client) RunPrinting(ctx context.Context, cmd []string, vars ...string) ([]string, error) {
	return c.RunPrintingAround(ctx, nil, cmd, nil, vars...)
}

// RunPrintingAround is RunPrinting with the commands before run just ahead
// of cmd and after just behind it, in the same invocation: one queue step,
// so no other client's command runs in between. before and after must
// print nothing. When cmd fails, tmux runs nothing after it.
func (c *Client) RunPrintingAround(ctx context.Context, before, cmd, after []string, vars ...string) ([]string, error) {
	seps := NewSeparators()
	args := make([]string, 0, len(before)+len(cmd)+len(after)+5)
	if len(before) > 0 {
		args = append(append(args, before...), ";")
	}
	args = append(append(args, cmd[0], "-P", "-F", seps.Format(vars...)), cmd[1:]...)
	if len(after) > 0 {
		args = append(append(args, ";"), after...)
	}
	out, err := c.Run(ctx, args...)
	if err != nil {
		return nil, err
	}
	return seps.Last(out, len(vars))
}

// ValidVariableName reports whether s is a plain format variable name such
// as pane_current_path: no braces, modifiers, # or shell commands.
func ValidVariableName(s string) bool {
	if s == "" || len(s) > 64 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

// maxCommandBytes is how much of the command line one tmux invocation
// carries. tmux sends the whole argument vector to the server in one
// message of at most 16 KiB and refuses a longer one ("command too long").
const maxCommandBytes = 12 << 10

// maxCommandArgs is how many arguments one tmux invocation carries: tmux
// 3.7c also refuses ("command too long") a command line of more than about
// 1,000 arguments, however short.
const maxCommandArgs = 800

// Outputs runs each of cmds and returns each one's stdout, in as few tmux
// invocations as the command-line limit allows (one for a short list).
// Commands in one invocation run in one queue step; separate invocations
// do not, so use it where one moment is not required.
func (c *Client) Outputs(ctx context.Context, cmds ...[]string) ([]string, error) {
	var outs []string
	for len(cmds) > 0 {
		n, size, argc := 0, 0, 0
		for n < len(cmds) {
			s := 64 // the marker command and separators
			for _, a := range cmds[n] {
				s += len(a) + 1
			}
			a := len(cmds[n]) + 5 // the marker command and separators
			if n > 0 && (size+s > maxCommandBytes || argc+a > maxCommandArgs) {
				break
			}
			size += s
			argc += a
			n++
		}
		_, part, err := c.SnapshotWith(ctx, Want{}, cmds[:n]...)
		if err != nil {
			return nil, err
		}
		outs = append(outs, part...)
		cmds = cmds[n:]
	}
	return outs, nil
}
