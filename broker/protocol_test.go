package broker

import (
	"regexp"
	"slices"
	"testing"

	"github.com/libtmux/libtmux-mcp/shellsetup"
)

// TestSetupSpeaksTheProtocolTable checks that setup.zsh sends and matches exactly the words of
// the protocol table, and names exactly its FAIL and ERR reasons.
func TestSetupSpeaksTheProtocolTable(t *testing.T) {
	src := shellsetup.Template()
	words := func(re string) []string {
		var out []string
		for _, m := range regexp.MustCompile(re).FindAllStringSubmatch(src, -1) {
			if !slices.Contains(out, m[1]) {
				out = append(out, m[1])
			}
		}
		slices.Sort(out)
		return out
	}
	sorted := func(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }
	// Every line the shell sends goes through _libtmux_mcp_send or syswrite.
	if got, want := words(`(?:_libtmux_mcp_send|syswrite -o \$\w+) ['"]?([A-Z]+)\b`), sorted(ShellWords); !slices.Equal(got, want) {
		t.Errorf("setup.zsh sends %q; the table says %q", got, want)
	}
	// Every line it reads is matched as [[ $var == WORD\ ... ]] (or !=).
	if got, want := words(`\$\w+ [!=]= ([A-Z]+)\\ `), sorted(BrokerWords); !slices.Equal(got, want) {
		t.Errorf("setup.zsh matches %q; the table says %q", got, want)
	}
	if got, want := words(`(?:FAIL \$\w+|ERR) ([a-z-]+)`), sorted(ShellReasons); !slices.Equal(got, want) {
		t.Errorf("setup.zsh gives the reasons %q; the table says %q", got, want)
	}
}
