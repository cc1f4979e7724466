// Package shellsetup makes the zsh setup file a person sources to enroll a
// tmux pane for tmux_run. The file is a real zsh script, setup.zsh,
// embedded here; Render fills in the broker socket, the helper binary, a
// single-use token and the pane. Create writes it privately (0600,
// O_EXCL|O_NOFOLLOW) and File.Remove deletes it only while it is still the
// file Create made.
//
// setup.zsh speaks the shell side of the line protocol described at its
// top (HELLO/OK/NO, ATTACH, RUN/HELPER answered by STATE and GO or by
// BUSY/FAIL, SPAWN,
// BYE); package broker keeps the table of its words and checks this file
// against it. This package never talks to a shell or a broker.
package shellsetup

import (
	_ "embed"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

//go:embed setup.zsh
var template string

// ErrReplaced says the path no longer holds the file Create made, so File.Remove left it alone.
var ErrReplaced = errors.New("replaced by another file")

// Template returns setup.zsh as embedded, its placeholders unfilled (package broker checks it
// against its protocol table).
func Template() string { return template }

// Placeholders in setup.zsh. Socket and helper are replaced by complete
// single-quoted words, so they stand bare in the template.
const (
	placeSocket = "@SOCKET@"
	placeHelper = "@HELPER@"
	placeToken  = "@TOKEN@"
	placePane   = "@PANE@"
)

// maxSocketPath is the longest path a Unix socket address holds on Linux
// (sun_path is 108 bytes with its terminating NUL).
const maxSocketPath = 107

// Params fill the template.
type Params struct {
	Socket string // absolute path of the broker socket
	Helper string // absolute path of the libtmux-mcp-helper binary
	Token  string // 32 lowercase hex digits, single use
	Pane   string // the invited pane, e.g. %3
}

var (
	tokenPattern = regexp.MustCompile(`^[a-f0-9]{32}$`)
	panePattern  = regexp.MustCompile(`^%[0-9]+$`)
)

// Render returns the setup file for p, or an error naming the first
// parameter that cannot be used.
func Render(p Params) ([]byte, error) {
	if err := checkPath("broker socket", p.Socket); err != nil {
		return nil, err
	}
	if len(p.Socket) > maxSocketPath {
		return nil, fmt.Errorf("shellsetup: broker socket path is %d bytes; a Unix socket path holds at most %d", len(p.Socket), maxSocketPath)
	}
	if err := checkPath("helper", p.Helper); err != nil {
		return nil, err
	}
	if !tokenPattern.MatchString(p.Token) {
		return nil, errors.New("shellsetup: the token must be 32 lowercase hex digits")
	}
	if !panePattern.MatchString(p.Pane) {
		return nil, fmt.Errorf("shellsetup: pane %q is not a pane id such as %%3", p.Pane)
	}
	r := strings.NewReplacer(
		placeSocket, quote(p.Socket),
		placeHelper, quote(p.Helper),
		placeToken, p.Token,
		placePane, p.Pane,
	)
	return []byte(r.Replace(template)), nil
}

// checkPath accepts an absolute path of valid UTF-8 without control
// characters (C0, DEL, C1): anything else could not be shown to a person
// or could end a protocol line.
func checkPath(what, p string) error {
	switch {
	case !strings.HasPrefix(p, "/"):
		return fmt.Errorf("shellsetup: %s path %q is not absolute", what, p)
	case !utf8.ValidString(p):
		return fmt.Errorf("shellsetup: %s path %q is not valid UTF-8", what, p)
	case strings.ContainsFunc(p, unicode.IsControl):
		return fmt.Errorf("shellsetup: %s path %q contains a control character", what, p)
	}
	return nil
}

// quote makes s one zsh word that stands for s exactly: single quotes, in
// which nothing is special except the single quote itself. Each quote is
// written as close-quote, backslash-quote, open-quote:
//
//	it's  ->  'it'\''s'
//
// The result does not depend on the rc_quotes option.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellWord is s as a word a person can paste into a shell: bare when it
// holds only characters no shell treats specially, quoted otherwise.
func shellWord(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+,:@%", r)))
	}) {
		return s
	}
	return quote(s)
}
