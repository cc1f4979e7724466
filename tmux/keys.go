package tmux

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// namedKeys maps the lower-case spelling of every key name ParseKey
// accepts to tmux's own.
var namedKeys = func() map[string]string {
	m := map[string]string{}
	for _, k := range strings.Fields("Enter Escape Tab BTab Space BSpace Up Down Left Right Home End " +
		"PageUp PageDown PgUp PgDn PPage NPage Insert Delete IC DC") {
		m[strings.ToLower(k)] = k
	}
	for i := 1; i <= 12; i++ {
		m[fmt.Sprintf("f%d", i)] = fmt.Sprintf("F%d", i)
	}
	return m
}()

// ParseKey checks one key name against the grammar
//
//	key  = mods base
//	mods = any of "C-", "M-", "S-", each at most once
//	base = a named key (Enter, F5…) | one printable character
//
// (with a modifier, the character must be ASCII) and returns it as tmux
// spells it, ready to be one send-keys argument. Words are refused: "C-c"
// sent as literal text is three characters, and "hello" as a key is an
// error rather than five keys.
func ParseKey(k string) (string, error) {
	rest, mods := k, ""
	for len(rest) > 2 && rest[1] == '-' {
		m := strings.ToUpper(rest[:1])
		if !strings.Contains("CMS", m) || strings.Contains(mods, m+"-") {
			break
		}
		mods += m + "-"
		rest = rest[2:]
	}
	if name, ok := namedKeys[strings.ToLower(rest)]; ok {
		return mods + name, nil
	}
	if r, n := utf8.DecodeRuneInString(rest); n == len(rest) && r != utf8.RuneError && unicode.IsPrint(r) &&
		(mods == "" || r < utf8.RuneSelf) {
		return Arg(mods + rest), nil
	}
	return "", fmt.Errorf("%q is not a key name (like Enter, C-c, Escape, Up, F5, M-x or one character)", k)
}
