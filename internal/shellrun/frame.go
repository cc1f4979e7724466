package shellrun

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/libtmux/libtmux-mcp/tmux"
)

// frame is one framed command: the line typed, its markers and its private
// completion channel.
type frame struct {
	line    string
	begin   string // the line printed before the command's output
	end     string // the status line's prefix; the status follows it
	channel string
	nonce   string
}

// StatusOption is the pane option where a frame's exit trap stores
// "<nonce>:<status>" for the server to read (process path only).
const StatusOption = "@libtmux_mcp_status"

// storedStatus reads the status the frame's exit trap stored (the waiter's
// output: the option's value); nil when the value is another run's or not
// a status.
func (f frame) storedStatus(value string) *int {
	rest, found := strings.CutPrefix(strings.TrimSpace(value), f.nonce+":")
	if !found {
		return nil
	}
	n, err := strconv.Atoi(rest)
	if err != nil {
		return nil
	}
	return &n
}

// newFrame frames command for a POSIX shell. The markers are printed from
// two pieces, so the typed line (and so its echo, however it wraps) never
// contains a marker: only the printed lines can equal one. The command runs
// in an inner subshell of an outer subshell whose exit trap prints the
// status and signals the channel; exit, cd and export stay inside.
func newFrame(exe, socket, pane, command, shell string) (frame, error) {
	for _, v := range []struct{ what, value string }{{"tmux program", exe}, {"socket path", socket}} {
		if strings.ContainsAny(v.value, "'\"\\$`!") {
			return frame{}, fmt.Errorf("the %s %q contains a quote, backslash, $, ` or !, which the command frame cannot carry; use a plainer path", v.what, v.value)
		}
		if err := tmux.CheckPrintable(v.what, v.value); err != nil {
			return frame{}, err
		}
	}
	nonce, quoted, printf, err := frameParts(command, shell)
	if err != nil {
		return frame{}, err
	}
	if !tmux.ValidPaneID(pane) {
		return frame{}, fmt.Errorf("pane id %q is not of the form %%N", pane)
	}
	f := frame{begin: nonce + "-s", end: nonce + "-e:", channel: "ltmcp-" + nonce, nonce: nonce}
	// A leading space keeps the line out of histories that ignore such
	// lines (HIST_IGNORE_SPACE, HISTCONTROL=ignorespace). The exit trap
	// stores the status in the pane's option and signals, in one tmux call.
	f.line = " ( \\trap 'st=$?; " + printf + " \"\\n%s%s\\n\" " + nonce + " \"-e:$st\"; \"" + exe + "\" -S \"" + socket + "\" set-option -p -t " + pane + " " + StatusOption + " \"" + nonce + ":$st\" \\; wait-for -S " + f.channel + "; \\exit 0' 0; " +
		printf + " '%s%s\\n' " + nonce + " -s; ( " + subshellSetup(shell) + "\\eval " + quoted + " ) )"
	return f, nil
}

// quoteCommand quotes command as one shell word: single quotes for text
// without control characters, else $'…' with octal escapes (bash, zsh and
// ksh; a tab typed into an editor would trigger completion).
func quoteCommand(command, shell string) (string, error) {
	plain := true
	for i := 0; i < len(command); i++ {
		if c := command[i]; c < 0x20 || c == 0x7f {
			plain = false
		}
	}
	if plain {
		return "'" + strings.ReplaceAll(command, "'", `'\''`) + "'", nil
	}
	if shell == "sh" || shell == "dash" {
		return "", fmt.Errorf("command contains control characters (newline, tab…), which %s cannot take in one line; join the lines with ; or run a script file", shell)
	}
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(command); i++ {
		c := command[i]
		switch {
		case c == '\'' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c == 0x7f:
			b.WriteString("\\" + fmt.Sprintf("%03o", c))
		default:
			b.WriteByte(c)
		}
	}
	b.WriteString("'")
	return b.String(), nil
}

// isBegin reports whether line is the frame's begin line. The marker ends
// the line but need not start it: a shell without a line editor (sh, dash)
// reads a line typed while it finished its last command from the
// terminal's buffer, where the terminal echoed it at once, and draws its
// prompt after that echo, on the row where the marker is printed next
// ("$ lt…-s"). The typed line never contains the marker, so only the
// frame's printf can end a line with it.
func (f frame) isBegin(line string) bool { return strings.HasSuffix(line, f.begin) }

// parse finds the frame's lines in a joined capture: the first begin line,
// the last status line after it, and the lines strictly between. The status
// line is printed after a newline, so a final empty line before it is the
// frame's and is dropped.
func (f frame) parse(lines []string) (out []string, status int, sawBegin, sawEnd bool) {
	begin := -1
	for i, l := range lines {
		if f.isBegin(l) {
			begin = i
			break
		}
	}
	sawBegin = begin >= 0
	endAt := -1
	for i := len(lines) - 1; i > begin; i-- {
		if rest, ok := strings.CutPrefix(lines[i], f.end); ok {
			if n, err := strconv.Atoi(rest); err == nil {
				endAt, status = i, n
				break
			}
		}
	}
	sawEnd = endAt >= 0
	if !sawEnd {
		// Still running (or gone): everything after the begin line, less
		// the blank rows below the cursor.
		out = append([]string{}, lines[begin+1:]...)
		for len(out) > 0 && strings.TrimRight(out[len(out)-1], " ") == "" {
			out = out[:len(out)-1]
		}
		if len(out) == 0 {
			out = nil
		}
		return out, 0, sawBegin, false
	}
	out = lines[begin+1 : endAt]
	if n := len(out); n > 0 && out[n-1] == "" {
		out = out[:n-1]
	}
	return append([]string{}, out...), status, sawBegin, true
}

// newStreamFrame frames command with one subshell: the shell prints the
// begin marker, runs the command in a subshell (exit, exec, cd, export and
// traps stay inside), and prints the subshell's status after it. The
// markers are printed from two pieces, so the typed line (and so its echo)
// never holds one.
//
// When the command cannot leave the subshell (staysInSubshell) and the
// shell reads $'…', eval is given the whole subshell instead: the shell
// then execs the command's last program in the subshell's own process,
// one fork where eval inside the subshell takes two.
//
// zsh and bash print the markers with their echo builtin, which needs
// fewer characters than printf: zsh reads a pasted line one byte at a time,
// a few microseconds a byte.
func newStreamFrame(command, shell string) (frame, error) {
	nonce, quoted, printf, err := frameParts(command, shell)
	if err != nil {
		return frame{}, err
	}
	setup := subshellSetup(shell)
	run := "( " + setup + "\\eval " + quoted + " )"
	if shell != "sh" && shell != "dash" && staysInSubshell(command) {
		sub, err := quoteCommand("( "+setup+command+"\n)", shell)
		if err != nil {
			return frame{}, err
		}
		run = "\\eval " + sub
	}
	f := frame{begin: nonce + "-s", end: nonce + "-e:"}
	// A leading space keeps the line out of histories that ignore such
	// lines (HIST_IGNORE_SPACE, HISTCONTROL=ignorespace).
	switch shell {
	case "zsh", "bash":
		f.line = " builtin echo " + nonce + "''-s;" + run + ";builtin echo $'\\n'" + nonce + "''-e:$?"
	default:
		f.line = " " + printf + " '%s%s\\n' " + nonce + " -s; " + run + "; " +
			printf + " '\\n%s%s%s\\n' " + nonce + " -e: $?"
	}
	return f, nil
}

// subshellSetup is what a frame's subshell runs before the command. zsh
// looks a command up in the process that runs it and, with HASH_DIRS (on by
// default), first reads every PATH directory before the command's into its
// command table; the subshell's table ends with it, so every call paid
// that again (about 1 ms with a /usr/bin of a thousand entries). The
// subshell turns HASH_DIRS off for itself only: the command is still found
// on PATH, and the shell's own options stay as they are.
func subshellSetup(shell string) string {
	if shell == "zsh" {
		return "builtin setopt nohashdirs;"
	}
	return ""
}

// frameParts are what every frame is made of: a fresh nonce for its
// markers, the command quoted for eval, and the shell's own printf (zsh's
// `command` would run the external one: a process more per marker).
func frameParts(command, shell string) (nonce, quoted, printf string, err error) {
	b := make([]byte, 6)
	rand.Read(b)
	nonce = "lt" + hex.EncodeToString(b)
	quoted, err = quoteCommand(command, shell)
	printf = "\\command printf"
	if shell == "zsh" {
		printf = "builtin printf"
	}
	return nonce, quoted, printf, err
}
