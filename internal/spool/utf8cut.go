package spool

import "unicode/utf8"

// Where Read leaves bytes out, it moves the cut so that no UTF-8 sequence
// is split: a returned piece neither ends in the first bytes of a sequence
// whose rest is left out, nor starts with the last bytes of one whose
// start is left out. The cut moves by at most 3 bytes, into Dropped.

// incompleteEnd is how many bytes at the end of b begin a UTF-8 sequence
// that b does not finish: 0 to 3.
func incompleteEnd(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(b[i]) {
			if utf8.FullRune(b[i:]) {
				return 0
			}
			return len(b) - i
		}
	}
	return 0
}

// strayStart is how many continuation bytes b starts with, when they can
// end a sequence begun before b (1 to 3); else 0.
func strayStart(b []byte) int {
	n := 0
	for n < len(b) && n < utf8.UTFMax && !utf8.RuneStart(b[n]) {
		n++
	}
	if n == utf8.UTFMax {
		return 0 // four continuation bytes end no sequence: not UTF-8
	}
	return n
}
