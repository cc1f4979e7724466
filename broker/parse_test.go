package broker

import (
	"slices"
	"strings"
	"testing"
)

// TestParseReply checks what the broker makes of each line a shell may send on a prompt
// connection. A GO carries nothing but its run id: the shell's state comes on a connection of
// its own (STATE), and a GO shaped as it was when it carried the state is dropped.
func TestParseReply(t *testing.T) {
	for _, c := range []struct {
		line, word, id string
		verdict        int
	}{
		{"GO r1", WordGo, "r1", replyOK},
		{"GO r1 12", WordGo, "r1", replyBadGo},
		{"GO r1 x", WordGo, "r1", replyBadGo},
		{"GO ", WordGo, "", replyBadGo},
		{"GO", WordGo, "", replyBadGo},
		{"BUSY r2", WordBusy, "r2", replyOK},
		{"FAIL r3 spawn", WordFail, "r3", replyOK},
		{"ERR bad-request", WordErr, "bad-request", replyOK},
		{"BUSY", WordBusy, "", replyOK},
		{"HELLO 1 t 1 %1 x", WordHello, "1", replyUnknown},
		{"STATE e r1 3", WordState, "e", replyUnknown},
		{"go r1", "go", "r1", replyUnknown},
		{"", "", "", replyUnknown},
		{" GO r1", "", "GO", replyUnknown},
	} {
		rep, verdict := parseReply(c.line)
		if rep.word != c.word || rep.id != c.id || verdict != c.verdict {
			t.Errorf("parseReply(%q) = word %q id %q verdict %d; want %q %q %d",
				c.line, rep.word, rep.id, verdict, c.word, c.id, c.verdict)
		}
		if !slices.Equal(rep.fields, strings.Split(c.line, " ")) {
			t.Errorf("parseReply(%q).fields = %q", c.line, rep.fields)
		}
	}
}

// TestParseStatePayload checks the split of a STATE payload into the directory and the
// environment.
func TestParseStatePayload(t *testing.T) {
	for _, c := range []struct {
		payload, dir string
		env          []string
	}{
		{"/tmp\x00A=1\x00B=2", "/tmp", []string{"A=1", "B=2"}},
		{"/tmp", "/tmp", nil},
		{"/tmp\x00", "/tmp", nil},
		{"/a b\x00X=\x00", "/a b", []string{"X=", ""}},
		{"\x00", "", nil},
	} {
		dir, env := parseStatePayload([]byte(c.payload))
		if dir != c.dir || !slices.Equal(env, c.env) {
			t.Errorf("parseStatePayload(%q) = %q %q; want %q %q", c.payload, dir, env, c.dir, c.env)
		}
	}
}

// FuzzParseShellLine feeds arbitrary lines and payloads to the parsing of the shell's answers
// and states: it never panics, a GO it accepts is two fields, and a state payload splits back
// into what it was made of.
func FuzzParseShellLine(f *testing.F) {
	for _, s := range []string{"GO r1", "GO r1 12", "GO  ", "BUSY r2", "FAIL r3 connect", "ERR bad-request", "", " ", "STATE e r 9"} {
		f.Add(s, []byte("/tmp\x00A=1\x00B=2"))
	}
	f.Fuzz(func(t *testing.T, line string, payload []byte) {
		rep, verdict := parseReply(line)
		if len(rep.fields) == 0 || rep.word != rep.fields[0] {
			t.Fatalf("parseReply(%q): word %q, fields %q", line, rep.word, rep.fields)
		}
		switch verdict {
		case replyOK:
			if rep.word == WordGo && (len(rep.fields) != 2 || rep.id == "") {
				t.Fatalf("parseReply(%q) accepted a GO of fields %q", line, rep.fields)
			}
		case replyBadGo:
			if rep.word != WordGo {
				t.Fatalf("parseReply(%q): a malformed GO that is %s", line, rep.word)
			}
		case replyUnknown:
		default:
			t.Fatalf("parseReply(%q): verdict %d", line, verdict)
		}
		dir, env := parseStatePayload(payload)
		back := dir
		for _, kv := range env {
			back += "\x00" + kv
		}
		if want := strings.TrimSuffix(string(payload), "\x00"); back != want && back != string(payload) {
			t.Fatalf("parseStatePayload(%q) = %q %q", payload, dir, env)
		}
	})
}
