// Package readbudget bounds what one read returns, by lines and by
// characters (Unicode code points), and counts exactly what it left out.
// It keeps either the newest lines (a tail) or the oldest (a head, for a
// reader that goes on where it stopped). It knows nothing of panes or
// tools: the server and the run_shell_command engine both trim with it.
package readbudget

import "unicode/utf8"

// Budget bounds what a read returns, by lines and by characters (Unicode
// code points).
type Budget struct {
	Lines int
	Chars int
}

// Trimmed is a bounded read: the newest lines that fit, and what was left
// out. DroppedChars counts every character not returned, including those of
// dropped lines; line breaks are not counted.
type Trimmed struct {
	Lines        []string `json:"lines"`
	DroppedLines int      `json:"droppedLines"`
	DroppedChars int      `json:"droppedChars"`
}

// KeepNewest applies b to lines, keeping the newest. A single line longer
// than the character budget keeps its tail.
func (b Budget) KeepNewest(lines []string) Trimmed {
	var t Trimmed
	first := len(lines)
	left := b.Chars
	for first > 0 && len(lines)-first < b.Lines {
		n := utf8.RuneCountInString(lines[first-1])
		if n > left {
			break
		}
		left -= n
		first--
	}
	kept := append([]string{}, lines[first:]...)
	// Characters left but the next older line is too long for them: keep
	// its tail, the part nearest the newer lines.
	if first > 0 && len(kept) < b.Lines && left > 0 {
		line := lines[first-1]
		n := utf8.RuneCountInString(line)
		tail := tailRunes(line, left)
		t.DroppedChars += n - utf8.RuneCountInString(tail)
		kept = append([]string{tail}, kept...)
		first--
	}
	for _, l := range lines[:first] {
		t.DroppedChars += utf8.RuneCountInString(l)
	}
	t.DroppedLines = first
	t.Lines = kept
	return t
}

// tailRunes returns the last n code points of s.
func tailRunes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	i := len(s)
	for count := 0; i > 0 && count < n; count++ {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return s[i:]
}

// KeepOldest applies b to lines, keeping the oldest: the lines a reader
// that goes on from where it stopped reads next. A first line longer than
// the character budget keeps its head (its other characters are counted
// in DroppedChars), so every call makes progress. DroppedLines counts the
// lines left for a later read.
func (b Budget) KeepOldest(lines []string) Trimmed {
	var t Trimmed
	left := b.Chars
	n := 0
	for n < len(lines) && n < b.Lines {
		c := utf8.RuneCountInString(lines[n])
		if c > left {
			break
		}
		left -= c
		n++
	}
	t.Lines = append([]string{}, lines[:n]...)
	if n == 0 && len(lines) > 0 && b.Lines > 0 {
		head := headRunes(lines[0], b.Chars)
		t.DroppedChars = utf8.RuneCountInString(lines[0]) - utf8.RuneCountInString(head)
		t.Lines = []string{head}
		n = 1
	}
	t.DroppedLines = len(lines) - n
	return t
}

// headRunes returns the first n code points of s.
func headRunes(s string, n int) string {
	i := 0
	for count := 0; i < len(s) && count < n; count++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i]
}
