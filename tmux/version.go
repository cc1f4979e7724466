package tmux

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Version is a tmux release: 3.3a is {3, 3, 'a'}.
type Version struct {
	Major, Minor int
	Patch        byte // a letter, or 0
	Text         string
}

// MinVersion is the oldest tmux this program supports.
var MinVersion = Version{Major: 3, Minor: 2, Patch: 'a', Text: "3.2a"}

// Less reports whether v is older than w.
func (v Version) Less(w Version) bool {
	if v.Major != w.Major {
		return v.Major < w.Major
	}
	if v.Minor != w.Minor {
		return v.Minor < w.Minor
	}
	return v.Patch < w.Patch
}

var versionPattern = regexp.MustCompile(`([0-9]+)\.([0-9]+)([a-z]?)`)

// ParseVersion reads the output of tmux -V ("tmux 3.3a", "tmux next-3.5",
// "tmux 3.4-rc"). A build without a number ("tmux master") is taken as new.
func ParseVersion(s string) (Version, error) {
	s = strings.TrimSpace(s)
	text := strings.TrimSpace(strings.TrimPrefix(s, "tmux"))
	if text == "master" || strings.HasPrefix(text, "next") && !versionPattern.MatchString(text) {
		return Version{Major: 99, Text: text}, nil
	}
	m := versionPattern.FindStringSubmatch(text)
	if m == nil {
		return Version{}, fmt.Errorf("cannot read a tmux version from %q", s)
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	v := Version{Major: major, Minor: minor, Text: text}
	if m[3] != "" {
		v.Patch = m[3][0]
	}
	return v, nil
}

// DetectVersion runs tmux -V and refuses a version older than MinVersion,
// naming the version found and the one needed. Ensure reads the version
// from the server itself, so this is needed only when it could not.
func (c *Client) DetectVersion(ctx context.Context) (Version, error) {
	out, err := c.run(ctx, c.timeout, []string{"-V"}, nil)
	if err != nil {
		return Version{}, fmt.Errorf("cannot run %s -V: %v (install tmux %s or newer: apt-get install tmux)", c.route.bin(), err, MinVersion.Text)
	}
	return checkVersion(string(out))
}

// checkVersion parses a version and refuses one older than MinVersion.
func checkVersion(s string) (Version, error) {
	v, err := ParseVersion(s)
	if err != nil {
		return Version{}, err
	}
	if v.Less(MinVersion) {
		return v, fmt.Errorf("tmux %s is too old; libtmux-mcp needs tmux %s or newer", v.Text, MinVersion.Text)
	}
	return v, nil
}
