package broker

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/libtmux/libtmux-mcp/helper/job"
)

// TestParseReply checks what the broker makes of each line a shell may send on a prompt
// connection.
func TestParseReply(t *testing.T) {
	max := strconv.Itoa(job.MaxDir + 1 + job.MaxEnv)
	over := strconv.Itoa(job.MaxDir + 2 + job.MaxEnv)
	for _, c := range []struct {
		line, word, id string
		n, verdict     int
	}{
		{"GO r1 12", WordGo, "r1", 12, replyOK},
		{"GO r1 " + max, WordGo, "r1", job.MaxDir + 1 + job.MaxEnv, replyOK},
		{"GO r1 " + over, WordGo, "r1", 0, replyBadGo},
		{"GO r1 0", WordGo, "r1", 0, replyBadGo},
		{"GO r1 -3", WordGo, "r1", 0, replyBadGo},
		{"GO r1 x", WordGo, "r1", 0, replyBadGo},
		{"GO r1", WordGo, "r1", 0, replyBadGo},
		{"GO r1 1 2", WordGo, "r1", 0, replyBadGo},
		{"GO", WordGo, "", 0, replyBadGo},
		{"BUSY r2", WordBusy, "r2", 0, replyOK},
		{"FAIL r3 spawn", WordFail, "r3", 0, replyOK},
		{"ERR bad-request", WordErr, "bad-request", 0, replyOK},
		{"BUSY", WordBusy, "", 0, replyOK},
		{"HELLO 1 t 1 %1 x", WordHello, "1", 0, replyUnknown},
		{"go r1 3", "go", "r1", 0, replyUnknown},
		{"", "", "", 0, replyUnknown},
		{" GO r1 3", "", "GO", 0, replyUnknown},
	} {
		rep, n, verdict := parseReply(c.line)
		if rep.word != c.word || rep.id != c.id || n != c.n || verdict != c.verdict {
			t.Errorf("parseReply(%q) = word %q id %q n %d verdict %d; want %q %q %d %d",
				c.line, rep.word, rep.id, n, verdict, c.word, c.id, c.n, c.verdict)
		}
		if !slices.Equal(rep.fields, strings.Split(c.line, " ")) {
			t.Errorf("parseReply(%q).fields = %q", c.line, rep.fields)
		}
	}
}

// TestParseGoPayload checks the split of a GO payload into the directory and the environment.
func TestParseGoPayload(t *testing.T) {
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
		dir, env := parseGoPayload([]byte(c.payload))
		if dir != c.dir || !slices.Equal(env, c.env) {
			t.Errorf("parseGoPayload(%q) = %q %q; want %q %q", c.payload, dir, env, c.dir, c.env)
		}
	}
}

// FuzzParseShellLine feeds arbitrary lines and payloads to the parsing of the shell's answers:
// it never panics, a GO it accepts names a payload length in range, and the payload splits
// back into what it was made of.
func FuzzParseShellLine(f *testing.F) {
	for _, s := range []string{"GO r1 12", "GO r1 0", "GO  ", "BUSY r2", "FAIL r3 connect", "ERR bad-request", "", " ", "GO r1 99999999999999999999"} {
		f.Add(s, []byte("/tmp\x00A=1\x00B=2"))
	}
	f.Fuzz(func(t *testing.T, line string, payload []byte) {
		rep, n, verdict := parseReply(line)
		if len(rep.fields) == 0 || rep.word != rep.fields[0] {
			t.Fatalf("parseReply(%q): word %q, fields %q", line, rep.word, rep.fields)
		}
		switch verdict {
		case replyOK:
			if rep.word == WordGo && (n < 1 || n > job.MaxDir+1+job.MaxEnv) {
				t.Fatalf("parseReply(%q) accepted a GO of %d bytes", line, n)
			}
			if rep.word != WordGo && n != 0 {
				t.Fatalf("parseReply(%q): %s with a payload of %d", line, rep.word, n)
			}
		case replyBadGo:
			if rep.word != WordGo {
				t.Fatalf("parseReply(%q): a malformed GO that is %s", line, rep.word)
			}
		case replyUnknown:
		default:
			t.Fatalf("parseReply(%q): verdict %d", line, verdict)
		}
		dir, env := parseGoPayload(payload)
		back := dir
		for _, kv := range env {
			back += "\x00" + kv
		}
		if want := strings.TrimSuffix(string(payload), "\x00"); back != want && back != string(payload) {
			t.Fatalf("parseGoPayload(%q) = %q %q", payload, dir, env)
		}
	})
}
