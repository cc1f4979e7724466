package shellrun

import "strings"

// staysInSubshell reports, conservatively, whether command typed between
// "(" and a newline and ")" is parsed as one list inside that subshell:
// every unquoted ")" closes an unquoted "(" of command's own, and nothing
// (a quote, a backslash, a comment, a here-document) is left open that
// could swallow the closing line. False for anything it does not follow;
// the caller then frames the command with eval inside the subshell.
func staysInSubshell(command string) bool {
	if strings.TrimSpace(command) == "" {
		return false // "( )" is a syntax error where "eval ''" is not
	}
	depth := 0
	for i := 0; i < len(command); i++ {
		switch c := command[i]; c {
		case '$':
			if i+1 < len(command) && (command[i+1] == '\'' || command[i+1] == '"') {
				return false // $'…' and $"…" quote by other rules
			}
		case '\\':
			if i+1 >= len(command) || command[i+1] == '\n' {
				return false // a continuation would join the closing line
			}
			i++
		case '\'':
			end := indexFrom(command, i+1, '\'')
			if end < 0 {
				return false
			}
			i = end
		case '"', '`':
			end := closingQuote(command, i+1, c)
			if end < 0 {
				return false
			}
			i = end
		case '(':
			depth++
		case ')':
			if depth--; depth < 0 {
				return false
			}
		case '#':
			return false // a comment, or # in an expansion
		case '<':
			if i+1 < len(command) && command[i+1] == '<' {
				return false // a here-document would swallow the closing line
			}
		}
	}
	return depth == 0
}

// indexFrom is the index of the first c in s at or after from, or -1.
func indexFrom(s string, from int, c byte) int {
	for i := from; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// closingQuote is the index of the quote q that closes a double-quoted or
// backquoted string begun before from, skipping backslash escapes; -1 when
// none does, or when the string holds a command substitution (its own
// parentheses are not followed).
func closingQuote(s string, from int, q byte) int {
	for i := from; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case q:
			return i
		case '$':
			if q == '"' && i+1 < len(s) && s[i+1] == '(' {
				return -1
			}
		case '`':
			return -1 // a backquote inside double quotes
		}
	}
	return -1
}
