package peercred

import (
	"encoding/binary"
	"encoding/hex"
	"regexp"
	"testing"

	"lukechampine.com/blake3"
)

func TestParseStartTime(t *testing.T) {
	tail := " S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 4242 19 20 21"
	for _, tc := range []struct {
		why, stat string
		want      uint64
		ok        bool
	}{
		{"a plain command name", "123 (zsh)" + tail, 4242, true},
		{"a name holding spaces and parentheses: count after the last ')'", "123 (a) b) (c)" + tail, 4242, true},
		{"a name that looks like fields", "123 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 99)" + tail, 4242, true},
		{"an empty name", "7 ()" + tail, 4242, true},
		{"field 22 is the last field present", "1 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 77", 77, true},
		{"the largest start time", "1 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 18446744073709551615 x", 18446744073709551615, true},
		{"no ')' at all", "123 (zsh S 1 2", 0, false},
		{"too few fields after the name", "1 (x) S 1 2", 0, false},
		{"field 22 is not a number", "1 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 -5 19", 0, false},
		{"empty input", "", 0, false},
	} {
		st, err := parseStat(tc.stat)
		if got := st.StartTime; (err == nil) != tc.ok || got != tc.want {
			t.Errorf("%s: parseStat(%q).StartTime = %d, %v; want %d (ok=%v)", tc.why, tc.stat, got, err, tc.want, tc.ok)
		}
	}
}

func TestProcessGeneration(t *testing.T) {
	const boot = "5b9c3d2e-1f4a-4c6b-8d7e-0a1b2c3d4e5f"
	g := ProcessGeneration(boot, 4321, 987654)
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(g) {
		t.Fatalf("ProcessGeneration = %q; want 32 lowercase hex digits", g)
	}
	// The encoding is spelled out here independently, so a change to it is
	// a deliberate change to this test too.
	b := []byte("libtmux-mcp process generation v1\x00")
	b = binary.BigEndian.AppendUint32(b, uint32(len(boot)))
	b = append(b, boot...)
	b = binary.BigEndian.AppendUint64(b, 4321)
	b = binary.BigEndian.AppendUint64(b, 987654)
	sum := blake3.Sum256(b)
	if want := hex.EncodeToString(sum[:16]); g != want {
		t.Errorf("ProcessGeneration = %s; want %s", g, want)
	}
	if g != ProcessGeneration(boot, 4321, 987654) {
		t.Error("ProcessGeneration is not deterministic")
	}
	for _, other := range []struct {
		why   string
		boot  string
		pid   int
		start uint64
	}{
		{"another boot", "5b9c3d2e-1f4a-4c6b-8d7e-0a1b2c3d4e50", 4321, 987654},
		{"another pid", boot, 4322, 987654},
		{"the same pid reused later", boot, 4321, 987655},
	} {
		if ProcessGeneration(other.boot, other.pid, other.start) == g {
			t.Errorf("%s: same generation %s", other.why, g)
		}
	}
}

func TestValidBootID(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{"5b9c3d2e-1f4a-4c6b-8d7e-0a1b2c3d4e5f", true},
		{"5B9C3D2E-1F4A-4C6B-8D7E-0A1B2C3D4E5F", false}, // the kernel writes lowercase
		{"5b9c3d2e1f4a4c6b8d7e0a1b2c3d4e5f", false},
		{"5b9c3d2e-1f4a-4c6b-8d7e-0a1b2c3d4e5", false},
		{"", false},
	} {
		if got := validBootID(tc.s); got != tc.want {
			t.Errorf("validBootID(%q) = %v; want %v", tc.s, got, tc.want)
		}
	}
}
