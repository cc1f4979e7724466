package broker

import (
	"testing"

	"github.com/libtmux/libtmux-mcp/enroll"
)

// TestNewZeroConfigWorks checks that a Config that leaves the deadlines zero gets working
// defaults, not a deadline that has already passed (every run would answer not_at_prompt or
// timed_out at once).
func TestNewZeroConfigWorks(t *testing.T) {
	ln, err := Listen()
	if err != nil {
		t.Fatal(err)
	}
	reg, err := enroll.NewRegistry(nil, nil, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(ln, Config{Registry: reg})
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	defer b.Close()
	if b.cfg.ShellAnswer != DefaultShellAnswer || b.cfg.RunTimeout != DefaultRunTimeout {
		t.Errorf("New(zero Config): ShellAnswer %s, RunTimeout %s; want %s and %s", b.cfg.ShellAnswer, b.cfg.RunTimeout, DefaultShellAnswer, DefaultRunTimeout)
	}
}
