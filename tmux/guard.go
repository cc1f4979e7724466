package tmux

import (
	"fmt"
	"strconv"
)

// GuardCommand is one tmux command that checks, in a single command-queue
// step, that pane still runs process pid and is alive, and if so sets the
// pane option to value and prints "OK-"+nonce; otherwise it prints
// "NO-"+nonce. A missing pane takes the false branch and tmux exits 0
// either way, so only the nonce line decides. It never uses run-shell,
// which can leave a pane in view-mode.
func GuardCommand(pane string, pid int, option, value, nonce string) ([]string, error) {
	if !ValidPaneID(pane) {
		return nil, fmt.Errorf("pane id %q is not of the form %%N", pane)
	}
	for _, s := range []string{option, value, nonce} {
		if !plainWord(s) {
			return nil, fmt.Errorf("guard word %q must be letters, digits, '-', '_' or '@'", s)
		}
	}
	cond := "#{&&:#{==:#{pane_pid}," + strconv.Itoa(pid) + "},#{!=:#{pane_dead},1}}"
	yes := "set -p -t " + pane + " " + option + " " + value + " ; display -p OK-" + nonce
	no := "display -p NO-" + nonce
	return []string{"if-shell", "-F", "-t", pane, cond, yes, no}, nil
}

// plainWord reports whether s can stand unquoted in a tmux command string.
func plainWord(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '@':
		default:
			return false
		}
	}
	return true
}
