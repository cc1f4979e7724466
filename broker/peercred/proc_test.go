package peercred

import "testing"

func TestParseStat(t *testing.T) {
	// A command name with spaces and parentheses: fields are counted after the last ')'.
	line := "1234 (z (sh) x) S 77 1234 1234 34816 1234 4194304 0 0 0 0 5 3 0 0 20 0 1 0 98765 9 9 18446744073709551615"
	got, err := parseStat(line)
	want := Stat{Comm: "z (sh) x", State: 'S', PPID: 77, PGRP: 1234, TTY: 34816, TPGID: 1234, StartTime: 98765}
	if err != nil || got != want {
		t.Errorf("parseStat = %+v, %v; want %+v", got, err, want)
	}
	for _, bad := range []string{"", "1 (x S 1", "1 (x) S 1 2 3", "1 (x) S a 1 1 1 1 0 0 0 0 0 0 0 0 0 0 0 0 0 1"} {
		if _, err := parseStat(bad); err == nil {
			t.Errorf("parseStat(%q) accepted", bad)
		}
	}
}

func TestParseUmask(t *testing.T) {
	for _, tc := range []struct {
		status string
		want   int
		ok     bool
	}{
		{"Name:\tzsh\nUmask:\t0027\nState:\tS (sleeping)\n", 0o27, true},
		{"Umask:\t0000\n", 0, true},
		{"Name:\tzsh\n", 0, false},   // kernels before 4.7
		{"Umask:\t0x12\n", 0, false}, // not octal
	} {
		got, err := parseUmask(tc.status)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseUmask(%q) = %#o, %v; want %#o, ok %v", tc.status, got, err, tc.want, tc.ok)
		}
	}
}
