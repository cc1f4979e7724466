package shellrun

import "testing"

func TestStaysInSubshell(t *testing.T) {
	for _, c := range []struct {
		command string
		want    bool
	}{
		{"seq 1 2000", true},
		{"go test ./... 2>&1 | tail -3", true},
		{"cd /tmp && ls -la; echo $(date) `id -u` \"a ) b\" 'c ) d'", true},
		{"(cd /tmp; ls) && echo $((1+2))", true},
		{"sort < file", true},
		{"a\nb", true},
		{"", false},
		{"   ", false},
		{"echo a ) ; cd / ; ( echo b", false},
		{"echo a )", false},
		{"case x in a) echo;; esac", false},
		{"echo ${v//)/x}", false},
		{"echo 'open", false},
		{`echo "open`, false},
		{"echo `open", false},
		{`echo \`, false},
		{"echo a \\\n", false},
		{"echo hi # ) comment", false},
		{"cat <<EOF\n)\nEOF", false},
		{`echo $'\'' ) rm x ( '`, false}, // $'…' would hide the ) from a plain lexer
		{`echo $"x"`, false},
		{"echo \"$(echo ')')\"", false},
		{"echo \"`x`\"", false},
		{`echo \) \(`, true},
	} {
		if got := staysInSubshell(c.command); got != c.want {
			t.Errorf("staysInSubshell(%q) = %v; want %v", c.command, got, c.want)
		}
	}
}
