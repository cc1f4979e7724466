package broker

import (
	"strings"
	"testing"
	"time"
)

func TestRememberKeepsTheLastRunsOfEachPane(t *testing.T) {
	b := &Broker{history: map[string][]RunRecord{}}
	for i := range MaxHistory + 5 {
		out := Outcome{Receipt: &Receipt{ScriptDigest: "d"}, Completion: &Completion{Status: i}}
		b.remember("%1", time.Now(), []byte("echo "+strings.Repeat("x", i%3)+"\nsecond line"), out)
	}
	b.remember("%1", time.Now(), []byte("never authorized"), Outcome{Code: CodeNotEnrolled})
	h := b.History("%1")
	if len(h) != MaxHistory {
		t.Fatalf("kept %d runs; want %d", len(h), MaxHistory)
	}
	if got := h[0].Completion.Status; got != 5 {
		t.Errorf("oldest kept run has status %d; want 5 (the first 5 forgotten)", got)
	}
	if got := h[len(h)-1]; got.Completion.Status != MaxHistory+4 || strings.Contains(got.FirstLine, "second") {
		t.Errorf("newest run = %+v; want status %d and only the first line", got, MaxHistory+4)
	}
	if got := b.History("%2"); len(got) != 0 {
		t.Errorf("History(%%2) = %v; want none", got)
	}
}

func TestFirstLineIsSafeToPrint(t *testing.T) {
	for _, tc := range []struct{ script, want string }{
		{"make test\nmake lint", "make test"},
		{"printf '\x1b[2J'", "printf '?[2J'"}, // an escape would act on the person's terminal
		{strings.Repeat("é", 100), strings.Repeat("é", 80) + "…"},
		{"", ""},
	} {
		if got := firstLine([]byte(tc.script)); got != tc.want {
			t.Errorf("firstLine(%q) = %q; want %q", tc.script, got, tc.want)
		}
	}
}
