package tmux

import "testing"

func TestParseKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string // want "" for refused
		why      string
	}{
		{"Enter", "Enter", "a named key"},
		{"enter", "Enter", "names are matched without case, sent as tmux spells them"},
		{"C-c", "C-c", "control and a character"},
		{"c-c", "C-c", "modifiers without case"},
		{"C-M-x", "C-M-x", "two modifiers"},
		{"M-Enter", "M-Enter", "a modifier on a named key"},
		{"S-Up", "S-Up", "shift on a named key"},
		{"F12", "F12", "function keys F1 to F12"},
		{"BSpace", "BSpace", "backspace"},
		{"q", "q", "one printable character"},
		{"é", "é", "one non-ASCII printable character"},
		{";", `\;`, "tmux would read a lone ; as the command separator"},
		{"M-;", `M-\;`, "the same with a modifier"},
		{"-", "-", "a dash is a character, and -- comes before the keys"},
		{"C--", "C--", "control and a dash"},
		{"hello", "", "words are text, not keys"},
		{"C-c C-c", "", "one key per entry"},
		{"", "", "empty"},
		{"F13", "", "no F13"},
		{"C-C-c", "", "a modifier twice"},
		{"X-a", "", "no X modifier"},
		{"C-é", "", "a modifier needs an ASCII character"},
		{"\x03", "", "a control character is not a key name"},
		{"^C", "", "caret notation is not accepted; C-c is"},
	} {
		got, err := ParseKey(tc.in)
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("ParseKey(%q) = %q; want a refusal (%s)", tc.in, got, tc.why)
		case tc.want != "" && (err != nil || got != tc.want):
			t.Errorf("ParseKey(%q) = %q, %v; want %q (%s)", tc.in, got, err, tc.want, tc.why)
		}
	}
}
