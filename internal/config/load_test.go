package config

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/libtmux/libtmux-mcp/mcpserver"
	"github.com/libtmux/libtmux-mcp/tmux"
)

// testNames are the server's own tool and toolset names.
var testNames = Names{Tools: mcpserver.ToolNames(), Toolsets: mcpserver.Toolsets}

// fakeEnv is a lookupEnv over a map.
func fakeEnv(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// noDefaultHelper makes the default helper search find nothing, so no test
// depends on what is installed on the machine.
func noDefaultHelper(t *testing.T) {
	t.Helper()
	exe, look := osExecutable, execLookPath
	t.Cleanup(func() { osExecutable, execLookPath = exe, look })
	osExecutable = func() (string, error) { return "", errors.New("no executable in tests") }
	execLookPath = func(string) (string, error) { return "", errors.New("not on PATH in tests") }
}

// writeHelper creates an executable stand-in for the helper binary.
func writeHelper(t *testing.T, dir string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, helperBinaryName)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), mode); err != nil {
		t.Fatal(err)
	}
	return p
}

// defaults is the configuration with nothing given: every limit zero,
// which each component reads as its own default.
func defaults() Config {
	return Config{Version: Version, LogLevel: slog.LevelWarn}
}

func TestLoad(t *testing.T) {
	noDefaultHelper(t)
	dir := t.TempDir()
	helper := writeHelper(t, dir, 0o755)
	notExec := filepath.Join(dir, "not-exec")
	if err := os.WriteFile(notExec, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	run := []string{"--enable-tool", "tmux_run", "--helper", helper}
	nine := append([]string(nil), run...)
	for i := range 9 {
		nine = append(nine, "--enroll-pane", fmt.Sprintf("%%%d=/tmp/e%d", i, i))
	}

	tests := []struct {
		name   string
		why    string
		args   []string
		env    map[string]string
		want   func(*Config) // applied to defaults()
		errIs  error
		errHas []string // substrings of the one-line error
	}{
		// Accepted configurations.
		{name: "nothing", why: "no flags and no variables give the documented defaults",
			want: func(*Config) {}},
		{name: "socket flag", why: "--socket selects a socket path",
			args: []string{"--socket", "/tmp/s"}, want: func(c *Config) { c.Route.SocketPath = "/tmp/s" }},
		{name: "single dash", why: "the flag package accepts one dash too",
			args: []string{"-socket=/tmp/s"}, want: func(c *Config) { c.Route.SocketPath = "/tmp/s" }},
		{name: "socket variable", why: "LIBTMUX_SOCKET_PATH selects a socket path",
			env: map[string]string{"LIBTMUX_SOCKET_PATH": "/tmp/s"}, want: func(c *Config) { c.Route.SocketPath = "/tmp/s" }},
		{name: "socket flag wins", why: "a flag wins over its variable",
			args: []string{"--socket", "/tmp/a"}, env: map[string]string{"LIBTMUX_SOCKET_PATH": "/tmp/b"},
			want: func(c *Config) { c.Route.SocketPath = "/tmp/a" }},
		{name: "socket name flag", why: "--socket-name selects a name under tmux's directory",
			args: []string{"--socket-name", "work"}, want: func(c *Config) { c.Route.SocketName = "work" }},
		{name: "socket name variable", why: "LIBTMUX_SOCKET is the socket name's variable",
			env: map[string]string{"LIBTMUX_SOCKET": "work"}, want: func(c *Config) { c.Route.SocketName = "work" }},
		{name: "config and bin", why: "--tmux-config and --tmux-bin fill the route",
			args: []string{"--tmux-config", "/etc/t.conf", "--tmux-bin", "/opt/tmux"},
			want: func(c *Config) { c.Route.Config, c.Route.Bin = "/etc/t.conf", "/opt/tmux" }},
		{name: "config and bin variables", why: "their variables fill the route too",
			env:  map[string]string{"LIBTMUX_TMUX_CONFIG": "/etc/t.conf", "LIBTMUX_TMUX_BIN": "tmux3"},
			want: func(c *Config) { c.Route.Config, c.Route.Bin = "/etc/t.conf", "tmux3" }},
		{name: "toolsets empty", why: "set but empty selects no toolset, which is not the default",
			env: map[string]string{"LIBTMUX_TOOLSETS": ""}, want: func(c *Config) { c.Toolsets = []string{} }},
		{name: "toolsets flag empty", why: "--toolsets= also selects none",
			args: []string{"--toolsets="}, want: func(c *Config) { c.Toolsets = []string{} }},
		{name: "toolsets list", why: "a comma list with spaces is trimmed",
			args: []string{"--toolsets", "inspect, manage"}, want: func(c *Config) { c.Toolsets = []string{"inspect", "manage"} }},
		{name: "toolsets flag wins", why: "a flag wins over its variable",
			args: []string{"--toolsets", "teardown"}, env: map[string]string{"LIBTMUX_TOOLSETS": "bogus"},
			want: func(c *Config) { c.Toolsets = []string{"teardown"} }},
		{name: "enable tools", why: "--enable-tool repeats and takes comma lists; the variable is ignored when the flag is given",
			args: []string{"--enable-tool", "capture_pane", "--enable-tool", "list_panes,list_windows"},
			env:  map[string]string{"LIBTMUX_TOOLS": "bogus"},
			want: func(c *Config) { c.EnableTools = []string{"capture_pane", "list_panes", "list_windows"} }},
		{name: "enable tools variable", why: "LIBTMUX_TOOLS is a comma list",
			env: map[string]string{"LIBTMUX_TOOLS": "capture_pane,list_panes"}, want: func(c *Config) { c.EnableTools = []string{"capture_pane", "list_panes"} }},
		{name: "exclude tools", why: "--exclude-tool and LIBTMUX_EXCLUDE_TOOLS name removals; the flag wins",
			args: []string{"--exclude-tool", "capture_pane"}, env: map[string]string{"LIBTMUX_EXCLUDE_TOOLS": "list_panes"},
			want: func(c *Config) { c.ExcludeTools = []string{"capture_pane"} }},
		{name: "exclude tools variable", why: "LIBTMUX_EXCLUDE_TOOLS alone",
			env: map[string]string{"LIBTMUX_EXCLUDE_TOOLS": "list_panes"}, want: func(c *Config) { c.ExcludeTools = []string{"list_panes"} }},
		{name: "tmux_run", why: "tmux_run with an invited pane and a helper; a relative FILE is made absolute",
			args: append(append([]string(nil), run...), "--enroll-pane", "%3=/tmp/e3", "--enroll-pane", "%12=rel/e12"),
			want: func(c *Config) {
				c.EnableTools = []string{"tmux_run"}
				c.Helper = helper
				c.EnrollPanes = []EnrollPane{{"%3", "/tmp/e3"}, {"%12", filepath.Join(cwd, "rel/e12")}}
			}},
		{name: "tmux_run without FILE", why: "a pane alone puts its invitation in the broker's private directory",
			args: append(append([]string(nil), run...), "--enroll-pane", "%3", "--enroll-pane", "%4=/tmp/e4"),
			want: func(c *Config) {
				c.EnableTools = []string{"tmux_run"}
				c.Helper = helper
				c.EnrollPanes = []EnrollPane{{"%3", ""}, {"%4", "/tmp/e4"}}
			}},
		{name: "tmux_run without pane", why: "no pane invited at start: a person enrolls one later with libtmux-mcp enroll",
			args: append([]string(nil), run...),
			want: func(c *Config) {
				c.EnableTools, c.Helper = []string{"tmux_run"}, helper
			}},
		{name: "tmux_run variable", why: "LIBTMUX_TOOLS may enable tmux_run, LIBTMUX_MCP_HELPER names the helper",
			args: []string{"--enroll-pane", "%1=/tmp/e1"},
			env:  map[string]string{"LIBTMUX_TOOLS": "tmux_run", "LIBTMUX_MCP_HELPER": helper},
			want: func(c *Config) {
				c.EnableTools = []string{"tmux_run"}
				c.Helper = helper
				c.EnrollPanes = []EnrollPane{{"%1", "/tmp/e1"}}
			}},
		{name: "timeouts", why: "durations at their ceiling are accepted",
			args: append(append([]string(nil), run...), "--enroll-pane", "%1=/tmp/e1", "--enrollment-timeout", "300s", "--run-timeout", "5m"),
			env:  map[string]string{"LIBTMUX_MCP_RUN_TIMEOUT": "1s"},
			want: func(c *Config) {
				c.EnableTools, c.Helper = []string{"tmux_run"}, helper
				c.EnrollPanes = []EnrollPane{{"%1", "/tmp/e1"}}
				c.EnrollTimeout, c.Broker.RunTimeout = 300*time.Second, 5*time.Minute
			}},
		{name: "background settings", why: "tmux_run_start's time limit, cap and kept output are settings",
			args: []string{"--enable-tool", "tmux_run_start", "--helper", helper, "--background-timeout", "3h"},
			env:  map[string]string{"LIBTMUX_MCP_MAX_BACKGROUND_RUNS": "2", "LIBTMUX_MCP_BACKGROUND_OUTPUT_BYTES": "4096"},
			want: func(c *Config) {
				c.EnableTools, c.Helper = []string{"tmux_run_start"}, helper
				c.Broker.BackgroundTimeout, c.Broker.MaxBackground, c.Broker.BackgroundOutput = 3*time.Hour, 2, 4096
			}},
		{name: "background cap over the ceiling", why: "at most 64 background runs",
			env: map[string]string{"LIBTMUX_MCP_MAX_BACKGROUND_RUNS": "65"}, errHas: []string{"LIBTMUX_MCP_MAX_BACKGROUND_RUNS", "at most 64"}},
		{name: "background timeout not a duration", why: "LIBTMUX_MCP_BACKGROUND_TIMEOUT is a Go duration",
			env: map[string]string{"LIBTMUX_MCP_BACKGROUND_TIMEOUT": "later"}, errHas: []string{"LIBTMUX_MCP_BACKGROUND_TIMEOUT", `"later"`}},
		{name: "run timeout variable", why: "LIBTMUX_MCP_RUN_TIMEOUT is a Go duration",
			env: map[string]string{"LIBTMUX_MCP_RUN_TIMEOUT": "90s"}, want: func(c *Config) { c.Broker.RunTimeout = 90 * time.Second }},
		{name: "variables only", why: "every variable-only setting at a legal value",
			env: map[string]string{
				"LIBTMUX_MCP_WAIT_MAX_MS": "120000", "LIBTMUX_MCP_COMMAND_TIMEOUT_MS": "5000",
				"LIBTMUX_MCP_MAX_RESULT_LINES": "50", "LIBTMUX_MCP_LIVE": "0",
				"LIBTMUX_MCP_ATTENDED": "watched", "LIBTMUX_MCP_SHELL_ANSWER_MS": "20000",
				"LIBTMUX_MCP_MAX_FRAME_BYTES": "65536", "LIBTMUX_MCP_MAX_BLOCKING": "300",
				"LIBTMUX_MCP_HTTP_SESSION_IDLE_MS": "60000", "LIBTMUX_MCP_HTTP_MAX_SESSIONS": "4",
			},
			want: func(c *Config) {
				c.Server.WaitMax, c.CommandTimeout, c.Server.MaxResultLines = 120*time.Second, 5*time.Second, 50
				c.Server.NoLive, c.Server.Attended, c.Broker.ShellAnswer = true, "watched", 20*time.Second
				c.Transport.MaxFrame, c.Server.MaxBlocking, c.Transport.SessionIdle, c.Transport.MaxSessions = 65536, 300, time.Minute, 4
			}},
		{name: "frame over the ceiling", why: "LIBTMUX_MCP_MAX_FRAME_BYTES is at most 64 MiB",
			env: map[string]string{"LIBTMUX_MCP_MAX_FRAME_BYTES": "67108865"}, errHas: []string{"LIBTMUX_MCP_MAX_FRAME_BYTES", "too large"}},
		{name: "frame too small", why: "a frame under 4096 bytes could not carry initialize",
			env: map[string]string{"LIBTMUX_MCP_MAX_FRAME_BYTES": "100"}, errHas: []string{"LIBTMUX_MCP_MAX_FRAME_BYTES", "at least 4096"}},
		{name: "live one", why: "LIBTMUX_MCP_LIVE=1 allows control mode",
			env: map[string]string{"LIBTMUX_MCP_LIVE": "1"}, want: func(c *Config) {}},
		{name: "attended ignore", why: "ignore is a mode",
			env: map[string]string{"LIBTMUX_MCP_ATTENDED": "ignore"}, want: func(c *Config) { c.Server.Attended = "ignore" }},
		{name: "log level", why: "--log-level wins over LIBTMUX_MCP_LOG",
			args: []string{"--log-level", "debug"}, env: map[string]string{"LIBTMUX_MCP_LOG": "error"},
			want: func(c *Config) { c.LogLevel = slog.LevelDebug }},
		{name: "log level variable", why: "LIBTMUX_MCP_LOG alone, case-insensitive",
			env: map[string]string{"LIBTMUX_MCP_LOG": "WARN"}, want: func(c *Config) { c.LogLevel = slog.LevelWarn }},
		{name: "caller", why: "TMUX and TMUX_PANE are copied as they are",
			env:  map[string]string{"TMUX": "/tmp/tmux-1/default,123,0", "TMUX_PANE": "%7"},
			want: func(c *Config) { c.CallerTMUX, c.CallerPane = "/tmp/tmux-1/default,123,0", "%7" }},
		{name: "http token alone", why: "the token means nothing without --http and is not an error",
			env: map[string]string{"LIBTMUX_MCP_HTTP_TOKEN": "secret"}, want: func(c *Config) {}},
		{name: "double dash", why: "-- ends the flags; nothing follows",
			args: []string{"--"}, want: func(c *Config) {}},

		// Help and version.
		{name: "help", why: "--help asks for the usage", args: []string{"--help"}, errIs: ErrHelp},
		{name: "h", why: "-h asks for the usage", args: []string{"-h"}, errIs: ErrHelp},
		{name: "version", why: "--version asks for the version", args: []string{"--version"}, errIs: ErrVersion},

		// Flags themselves.
		{name: "unknown flag", why: "an unknown flag stops startup",
			args: []string{"--nope"}, errHas: []string{`"--nope"`, "--help"}},
		{name: "missing value", why: "a flag without its value",
			args: []string{"--socket"}, errHas: []string{`"--socket"`, "needs a value"}},
		{name: "bad bool", why: "--version takes no value",
			args: []string{"--version=maybe"}, errHas: []string{"--version"}},
		{name: "bad syntax", why: "three dashes",
			args: []string{"---x"}, errHas: []string{`"---x"`}},
		{name: "positional", why: "the program takes no arguments",
			args: []string{"serve"}, errHas: []string{`"serve"`, "only flags"}},
		{name: "positional after flags", why: "an argument after the flags",
			args: []string{"--socket-name", "x", "extra"}, errHas: []string{`"extra"`}},
		{name: "flag twice", why: "a single-valued flag given twice is refused, not silently replaced",
			args: []string{"--socket", "/a", "--socket", "/b"}, errHas: []string{"--socket", "2 times"}},
		{name: "http", why: "--http on a loopback address serves HTTP",
			args: []string{"--http", "127.0.0.1:0"}, want: func(c *Config) { c.HTTPAddr = "127.0.0.1:0" }},
		{name: "http token", why: "LIBTMUX_MCP_HTTP_TOKEN is the token when serving HTTP",
			args: []string{"--http", "[::1]:8765"}, env: map[string]string{"LIBTMUX_MCP_HTTP_TOKEN": "0123456789abcdef"},
			want: func(c *Config) { c.HTTPAddr, c.HTTPToken = "[::1]:8765", "0123456789abcdef" }},
		{name: "http short token", why: "a guessable token is refused",
			args: []string{"--http", "127.0.0.1:0"}, env: map[string]string{"LIBTMUX_MCP_HTTP_TOKEN": "secret"},
			errHas: []string{"LIBTMUX_MCP_HTTP_TOKEN", "16"}},
		{name: "http not loopback", why: "the tools reach terminals: only loopback may serve",
			args: []string{"--http", "0.0.0.0:8765"}, errHas: []string{"--http", `"0.0.0.0"`, "loopback"}},
		{name: "http no port", why: "an address needs a port",
			args: []string{"--http", "127.0.0.1"}, errHas: []string{"--http", "HOST:PORT"}},

		// Route.
		{name: "both socket flags", why: "two socket selectors",
			args: []string{"--socket", "/tmp/s", "--socket-name", "x"}, errHas: []string{"--socket", "--socket-name", "choose one"}},
		{name: "both socket variables", why: "two socket selectors from the environment",
			env: map[string]string{"LIBTMUX_SOCKET_PATH": "/tmp/s", "LIBTMUX_SOCKET": "x"}, errHas: []string{"LIBTMUX_SOCKET_PATH", "LIBTMUX_SOCKET "}},
		{name: "socket flag and name variable", why: "a flag and the other selector's variable",
			args: []string{"--socket", "/tmp/s"}, env: map[string]string{"LIBTMUX_SOCKET": "x"}, errHas: []string{"--socket", "LIBTMUX_SOCKET"}},
		{name: "relative socket", why: "a relative socket path depends on the cwd",
			args: []string{"--socket", "sock"}, errHas: []string{"--socket", `"sock"`, "absolute"}},
		{name: "empty socket variable", why: "set but empty is refused",
			env: map[string]string{"LIBTMUX_SOCKET_PATH": ""}, errHas: []string{"LIBTMUX_SOCKET_PATH", "empty"}},
		{name: "socket control char", why: "a control character in a path",
			env: map[string]string{"LIBTMUX_SOCKET_PATH": "/tmp/a\x01b"}, errHas: []string{"LIBTMUX_SOCKET_PATH", `\x01`, "0x01"}},
		{name: "socket name DEL", why: "DEL in a name",
			args: []string{"--socket-name", "a\x7fb"}, errHas: []string{"--socket-name", "0x7f"}},
		{name: "relative config", why: "the tmux config must be absolute",
			env: map[string]string{"LIBTMUX_TMUX_CONFIG": "t.conf"}, errHas: []string{"LIBTMUX_TMUX_CONFIG", `"t.conf"`, "absolute"}},
		{name: "empty config", why: "set but empty config",
			env: map[string]string{"LIBTMUX_TMUX_CONFIG": ""}, errHas: []string{"LIBTMUX_TMUX_CONFIG", "empty"}},
		{name: "bin newline", why: "a newline in the tmux executable",
			args: []string{"--tmux-bin", "tmux\n"}, errHas: []string{"--tmux-bin", "0x0a"}},

		// Retired variables.
		{name: "safety", why: "LIBTMUX_SAFETY is retired; the message maps the value",
			env: map[string]string{"LIBTMUX_SAFETY": "readonly"}, errHas: []string{"LIBTMUX_SAFETY", "LIBTMUX_TOOLSETS=inspect"}},
		{name: "safety destructive", why: "destructive maps to all four",
			env: map[string]string{"LIBTMUX_SAFETY": "destructive"}, errHas: []string{"LIBTMUX_TOOLSETS=inspect,manage,execute,teardown"}},
		{name: "safety empty", why: "mere presence stops startup, with the whole mapping",
			env: map[string]string{"LIBTMUX_SAFETY": ""}, errHas: []string{"LIBTMUX_SAFETY", "readonly -> inspect", "mutating -> inspect,manage,execute"}},
		{name: "mcp tools", why: "LIBTMUX_MCP_TOOLS is retired",
			env: map[string]string{"LIBTMUX_MCP_TOOLS": "x"}, errHas: []string{"LIBTMUX_MCP_TOOLS", "LIBTMUX_TOOLSETS=", "LIBTMUX_TOOLS="}},
		{name: "socket name retired", why: "LIBTMUX_SOCKET_NAME is retired",
			env: map[string]string{"LIBTMUX_SOCKET_NAME": "x"}, errHas: []string{"LIBTMUX_SOCKET_NAME", "LIBTMUX_SOCKET"}},

		// Tool selection.
		{name: "unknown toolset", why: "an unknown toolset lists the valid ones",
			args: []string{"--toolsets", "inspect,admin"}, errHas: []string{`"admin"`, "inspect", "manage", "execute", "teardown"}},
		{name: "empty toolset entry", why: "a doubled comma",
			env: map[string]string{"LIBTMUX_TOOLSETS": "inspect,,manage"}, errHas: []string{"LIBTMUX_TOOLSETS", `"inspect,,manage"`, "empty entry"}},
		{name: "trailing comma", why: "a trailing comma is an empty entry",
			args: []string{"--toolsets", "inspect,"}, errHas: []string{"--toolsets", "empty entry"}},
		{name: "unknown tool", why: "an unknown tool names the valid ones",
			args: []string{"--enable-tool", "rm_rf"}, errHas: []string{`"rm_rf"`, "capture_pane", "tmux_run"}},
		{name: "unknown tool variable", why: "LIBTMUX_TOOLS is checked too",
			env: map[string]string{"LIBTMUX_TOOLS": "capture_pane,nope"}, errHas: []string{"LIBTMUX_TOOLS", `"nope"`}},
		{name: "unknown excluded tool", why: "exclusions are checked too",
			env: map[string]string{"LIBTMUX_EXCLUDE_TOOLS": "nope"}, errHas: []string{"LIBTMUX_EXCLUDE_TOOLS", `"nope"`}},
		{name: "empty tool entry", why: "an empty entry in a tool list",
			args: []string{"--exclude-tool", ",capture_pane"}, errHas: []string{"--exclude-tool", "empty entry"}},

		// tmux_run rules.
		{name: "pane without tmux_run", why: "an invitation nobody can use",
			args: []string{"--enroll-pane", "%1=/tmp/x"}, errHas: []string{"--enroll-pane", "--enable-tool tmux_run"}},
		{name: "tmux_run excluded", why: "both enabled and excluded",
			args:   append(append([]string(nil), run...), "--enroll-pane", "%1=/tmp/x", "--exclude-tool", "tmux_run"),
			errHas: []string{"tmux_run", "enabled and excluded"}},
		{name: "nine panes", why: "at most 8 panes",
			args: nine, errHas: []string{"9", "at most 8"}},
		{name: "pane no equals, not an id", why: "the form is %ID or %ID=FILE",
			args: append(append([]string(nil), run...), "--enroll-pane", "1"), errHas: []string{`"1"`, "pane id"}},
		{name: "pane not an id", why: "the pane must be an id, not an index",
			args: append(append([]string(nil), run...), "--enroll-pane", "3=/tmp/x"), errHas: []string{`"3"`, "pane id"}},
		{name: "pane letters", why: "%x is not a pane id",
			args: append(append([]string(nil), run...), "--enroll-pane", "%x=/tmp/x"), errHas: []string{`"%x"`}},
		{name: "pane no file", why: "FILE is required",
			args: append(append([]string(nil), run...), "--enroll-pane", "%1="), errHas: []string{`"%1="`, "no FILE"}},
		{name: "pane file control", why: "a control character in FILE",
			args: append(append([]string(nil), run...), "--enroll-pane", "%1=/tmp/a\x1bb"), errHas: []string{"--enroll-pane", "0x1b"}},
		{name: "pane twice", why: "one invitation per pane",
			args: append(append([]string(nil), run...), "--enroll-pane", "%1=/tmp/a", "--enroll-pane", "%1=/tmp/b"), errHas: []string{"%1", "twice"}},
		{name: "file twice", why: "two panes cannot share a FILE",
			args: append(append([]string(nil), run...), "--enroll-pane", "%1=/tmp/a", "--enroll-pane", "%2=/tmp/a"), errHas: []string{`"/tmp/a"`, "%1", "%2"}},
		{name: "enrollment timeout ceiling", why: "at most 300s",
			args: []string{"--enrollment-timeout", "301s"}, errHas: []string{"--enrollment-timeout", `"301s"`, "5m0s"}},
		{name: "enrollment timeout zero", why: "must be positive",
			args: []string{"--enrollment-timeout", "0s"}, errHas: []string{"--enrollment-timeout", "positive"}},
		{name: "enrollment timeout syntax", why: "a bare number is not a Go duration",
			args: []string{"--enrollment-timeout", "60"}, errHas: []string{`"60"`, "Go duration"}},
		{name: "run timeout negative", why: "must be positive",
			args: []string{"--run-timeout", "-1s"}, errHas: []string{"--run-timeout", `"-1s"`}},
		{name: "bad run timeout variable", why: "the variable is checked the same way",
			env: map[string]string{"LIBTMUX_MCP_RUN_TIMEOUT": "soon"}, errHas: []string{"LIBTMUX_MCP_RUN_TIMEOUT", `"soon"`}},
		{name: "helper relative", why: "the helper's path goes into the setup file and must be absolute",
			args: []string{"--enable-tool", "tmux_run", "--enroll-pane", "%1=/tmp/x", "--helper", "bin/helper"}, errHas: []string{"--helper", `"bin/helper"`, "absolute"}},
		{name: "helper missing", why: "a named helper that does not exist",
			args: []string{"--enable-tool", "tmux_run", "--enroll-pane", "%1=/tmp/x", "--helper", filepath.Join(dir, "none")}, errHas: []string{"--helper", "no such file", "go install"}},
		{name: "helper not executable", why: "a named helper without an execute bit",
			env: map[string]string{"LIBTMUX_TOOLS": "tmux_run", "LIBTMUX_MCP_HELPER": notExec}, args: []string{"--enroll-pane", "%1=/tmp/x"}, errHas: []string{"LIBTMUX_MCP_HELPER", "not executable"}},
		{name: "helper not found", why: "no helper beside the binary or on PATH",
			args: []string{"--enable-tool", "tmux_run", "--enroll-pane", "%1=/tmp/x"}, errHas: []string{"libtmux-mcp-helper", "go install github.com/libtmux/libtmux-mcp/cmd/...", "--helper"}},

		// Variable-only settings.
		{name: "wait ceiling", why: "over 120000 stops startup",
			env: map[string]string{"LIBTMUX_MCP_WAIT_MAX_MS": "120001"}, errHas: []string{"LIBTMUX_MCP_WAIT_MAX_MS", "120001", "120000"}},
		{name: "wait zero", why: "must be positive",
			env: map[string]string{"LIBTMUX_MCP_WAIT_MAX_MS": "0"}, errHas: []string{"LIBTMUX_MCP_WAIT_MAX_MS", `"0"`}},
		{name: "wait spaces", why: "not a whole number",
			env: map[string]string{"LIBTMUX_MCP_WAIT_MAX_MS": " 5"}, errHas: []string{`" 5"`}},
		{name: "command timeout", why: "a negative number",
			env: map[string]string{"LIBTMUX_MCP_COMMAND_TIMEOUT_MS": "-5"}, errHas: []string{"LIBTMUX_MCP_COMMAND_TIMEOUT_MS", `"-5"`}},
		{name: "command timeout overflow", why: "milliseconds that overflow a duration",
			env: map[string]string{"LIBTMUX_MCP_COMMAND_TIMEOUT_MS": "9223372036854775807"}, errHas: []string{"too large"}},
		{name: "result lines", why: "not a number",
			env: map[string]string{"LIBTMUX_MCP_MAX_RESULT_LINES": "many"}, errHas: []string{"LIBTMUX_MCP_MAX_RESULT_LINES", `"many"`}},
		{name: "shell answer", why: "zero is not positive",
			env: map[string]string{"LIBTMUX_MCP_SHELL_ANSWER_MS": "0"}, errHas: []string{"LIBTMUX_MCP_SHELL_ANSWER_MS"}},
		{name: "live other", why: "only 0 and 1",
			env: map[string]string{"LIBTMUX_MCP_LIVE": "yes"}, errHas: []string{"LIBTMUX_MCP_LIVE", `"yes"`}},
		{name: "live empty", why: "set but empty is neither 0 nor 1",
			env: map[string]string{"LIBTMUX_MCP_LIVE": ""}, errHas: []string{"LIBTMUX_MCP_LIVE", `""`}},
		{name: "attended other", why: "only the three modes",
			env: map[string]string{"LIBTMUX_MCP_ATTENDED": "always"}, errHas: []string{"LIBTMUX_MCP_ATTENDED", `"always"`, "typing"}},
		{name: "bad log level", why: "an unknown level",
			args: []string{"--log-level", "verbose"}, errHas: []string{"--log-level", `"verbose"`, "debug"}},
		{name: "bad log level variable", why: "an unknown level from the variable",
			env: map[string]string{"LIBTMUX_MCP_LOG": "trace"}, errHas: []string{"LIBTMUX_MCP_LOG", `"trace"`}},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		if seen[tt.name] {
			t.Fatalf("duplicate case name %q", tt.name)
		}
		seen[tt.name] = true
		t.Run(tt.name, func(t *testing.T) {
			got, err := Load(tt.args, fakeEnv(tt.env), testNames)
			switch {
			case tt.want != nil:
				if err != nil {
					t.Fatalf("%s: Load(%q) = error %q; want success", tt.why, tt.args, err)
				}
				want := defaults()
				tt.want(&want)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s: Load(%q) mismatch (-want +got):\n%s", tt.why, tt.args, diff)
				}
			case tt.errIs != nil:
				if !errors.Is(err, tt.errIs) {
					t.Fatalf("%s: Load(%q) = %v; want %v", tt.why, tt.args, err, tt.errIs)
				}
			default:
				if err == nil {
					t.Fatalf("%s: Load(%q) succeeded; want an error mentioning %q", tt.why, tt.args, tt.errHas)
				}
				msg := err.Error()
				checkOneLine(t, msg)
				for _, s := range tt.errHas {
					if !strings.Contains(msg, s) {
						t.Errorf("%s: error %q; want it to mention %q", tt.why, msg, s)
					}
				}
			}
		})
	}
}

// checkOneLine asserts an error message is one printable line in Go style.
func checkOneLine(t *testing.T, msg string) {
	t.Helper()
	if err := tmux.CheckPrintable("error", msg); err != nil {
		t.Errorf("error %q is not one printable line", msg)
	}
	if msg == "" || (msg[0] >= 'A' && msg[0] <= 'Z' && !strings.HasPrefix(msg, "LIBTMUX_")) {
		t.Errorf("error %q does not start lowercase", msg)
	}
	if strings.HasSuffix(msg, ".") && !strings.HasSuffix(msg, "/...") {
		t.Errorf("error %q ends with a period", msg)
	}
}

func TestLoadDefaultHelper(t *testing.T) {
	noDefaultHelper(t)
	besideDir, pathDir := t.TempDir(), t.TempDir()
	beside := writeHelper(t, besideDir, 0o755)
	onPath := writeHelper(t, pathDir, 0o755)
	args := []string{"--enable-tool", "tmux_run", "--enroll-pane", "%1=/tmp/x"}

	tests := []struct {
		name, why string
		exe       string // directory of the running executable
		path      string // what LookPath answers, "" for not found
		want      string
	}{
		{"beside", "the helper beside the executable is preferred", besideDir, onPath, beside},
		{"path", "PATH is the fallback when nothing is beside the executable", pathDir + "/nothing-here", onPath, onPath},
		{"none", "neither", t.TempDir(), "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			osExecutable = func() (string, error) { return filepath.Join(tt.exe, "libtmux-mcp"), nil }
			execLookPath = func(string) (string, error) {
				if tt.path == "" {
					return "", errors.New("not found")
				}
				return tt.path, nil
			}
			cfg, err := Load(args, fakeEnv(nil), testNames)
			if tt.want == "" {
				if err == nil || !strings.Contains(err.Error(), "go install") {
					t.Fatalf("%s: got %v; want the install hint", tt.why, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", tt.why, err)
			}
			if cfg.Helper != tt.want {
				t.Errorf("%s: helper %q; want %q", tt.why, cfg.Helper, tt.want)
			}
		})
	}
}

// TestLoadUsage keeps --help in step with the flags and variables.
func TestLoadUsage(t *testing.T) {
	var f rawFlags
	fs := newConfigFlagSet(&f)
	fs.VisitAll(func(fl *flag.Flag) {
		if !strings.Contains(Usage(), "--"+fl.Name+" ") {
			t.Errorf("usage does not mention --%s", fl.Name)
		}
	})
	// Every variable Load reads, seen through a recording lookupEnv.
	read := map[string]bool{}
	record := func(k string) (string, bool) { read[k] = true; return "", false }
	if _, err := Load(nil, record, testNames); err != nil {
		t.Fatal(err)
	}
	for _, extra := range []string{"LIBTMUX_MCP_HELPER", "LIBTMUX_MCP_HTTP_TOKEN"} { // read only when tmux_run or --http is enabled
		read[extra] = true
	}
	for k := range read {
		if k == "TMUX" || k == "TMUX_PANE" {
			continue
		}
		if !strings.Contains(Usage(), k) {
			t.Errorf("usage does not mention %s", k)
		}
	}
	for _, s := range []string{"source FILE", "--enroll-pane %ID[=FILE]", "over stdio (stdout carries\nonly JSON-RPC) or, with --http, over Streamable HTTP"} {
		if !strings.Contains(Usage(), s) {
			t.Errorf("usage does not mention %q", s)
		}
	}
}
