package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/broker"
	"github.com/libtmux/libtmux-mcp/enroll"
	"github.com/libtmux/libtmux-mcp/internal/config"
	"github.com/libtmux/libtmux-mcp/internal/frame"
	"github.com/libtmux/libtmux-mcp/internal/httpserve"
	"github.com/libtmux/libtmux-mcp/mcpserver"
	"github.com/libtmux/libtmux-mcp/tmux"
)

// TestUsageNamesTheComponentsDefaults keeps --help true to the defaults.
// Package config knows none of them (a zero setting is the component's
// default), so the check lives here, where the components are built.
func TestUsageNamesTheComponentsDefaults(t *testing.T) {
	ms := func(d time.Duration) string { return fmt.Sprintf("default %d", d.Milliseconds()) }
	secs := func(d time.Duration) string { return fmt.Sprintf("default %.0fs", d.Seconds()) }
	for _, c := range []struct{ name, want string }{
		{"LIBTMUX_MCP_WAIT_MAX_MS", ms(mcpserver.DefaultWaitMax) + ", at most " + fmt.Sprint(config.MaxWaitMax.Milliseconds())},
		{"LIBTMUX_MCP_COMMAND_TIMEOUT_MS", ms(tmux.DefaultTimeout)},
		{"LIBTMUX_MCP_MAX_RESULT_LINES", fmt.Sprintf("default %d", mcpserver.DefaultMaxResultLines)},
		{"LIBTMUX_MCP_SHELL_ANSWER_MS", ms(broker.DefaultShellAnswer)},
		{"LIBTMUX_MCP_MAX_FRAME_BYTES", fmt.Sprintf("default %d", frame.DefaultMax)},
		{"LIBTMUX_MCP_MAX_BLOCKING", fmt.Sprintf("default %d", mcpserver.DefaultMaxBlocking)},
		{"LIBTMUX_MCP_HTTP_SESSION_IDLE_MS", ms(httpserve.DefaultSessionIdle)},
		{"LIBTMUX_MCP_HTTP_MAX_SESSIONS", fmt.Sprintf("default %d", httpserve.DefaultMaxSessions)},
		{"--enrollment-timeout", secs(enroll.DefaultLifetime) + ", at most " + fmt.Sprintf("%.0fs", config.MaxEnrollTimeout.Seconds())},
		{"--run-timeout", secs(broker.DefaultRunTimeout)},
	} {
		line := usageLine(config.Usage(), c.name)
		if !strings.Contains(line, c.want) {
			t.Errorf("--help line for %s is %q; want it to say %q", c.name, line, c.want)
		}
	}
}

// usageLine is the --help line that starts with name.
func usageLine(usage, name string) string {
	for line := range strings.SplitSeq(usage, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == name {
			return line
		}
	}
	return ""
}
