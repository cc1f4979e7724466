package config

import (
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/libtmux/libtmux-mcp/enroll"
	"github.com/libtmux/libtmux-mcp/internal/loopback"
	"github.com/libtmux/libtmux-mcp/tmux"
)

// Version is this program's version, printed by --version and in the
// startup line.
var Version = "0.1.0-dev"

// ErrHelp is returned by Load for --help or -h.
var ErrHelp = flag.ErrHelp

// ErrVersion is returned by Load for --version.
var ErrVersion = errors.New("version requested")

//go:embed usage.txt
var usageText string

// Usage is the --help text: every flag and variable, one line each.
func Usage() string { return usageText }

// runToolName is the opt-in tool that runs scripts in enrolled panes.
const runToolName = "tmux_run"

// helperBinaryName is the helper binary tmux_run needs.
const helperBinaryName = "libtmux-mcp-helper"

// Seams for tests: where the helper is looked for by default.
var (
	osExecutable = os.Executable
	execLookPath = exec.LookPath
)

// setting is one value as the operator gave it: from a flag or a variable.
type setting struct {
	from string // "--socket" or "LIBTMUX_SOCKET_PATH", for messages
	text string
}

// rawFlags holds the raw flag values; every check happens after parsing so
// that each message is ours.
type rawFlags struct {
	single  map[string][]string // single-valued flags, every occurrence
	multi   map[string][]string // repeatable flags
	version bool
}

// singleValueFlags and repeatFlags are the flags that take a value.
var (
	singleValueFlags = []string{"socket", "socket-name", "tmux-config", "tmux-bin", "toolsets",
		"enrollment-timeout", "run-timeout", "background-timeout", "helper", "log-level", "http"}
	repeatFlags = []string{"enable-tool", "exclude-tool", "enroll-pane"}
)

func newConfigFlagSet(f *rawFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("libtmux-mcp", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	f.single = map[string][]string{}
	f.multi = map[string][]string{}
	for _, name := range singleValueFlags {
		fs.Func(name, "", func(s string) error { f.single[name] = append(f.single[name], s); return nil })
	}
	for _, name := range repeatFlags {
		fs.Func(name, "", func(s string) error { f.multi[name] = append(f.multi[name], s); return nil })
	}
	fs.BoolVar(&f.version, "version", false, "")
	return fs
}

// configLoader resolves one configuration.
type configLoader struct {
	f     rawFlags
	env   func(string) (string, bool)
	names Names
}

// pick returns the flag's value if given, else the variable's (envName may
// be empty for flag-only settings).
func (l *configLoader) pick(flagName, envName string) (setting, bool) {
	if vs := l.f.single[flagName]; len(vs) > 0 {
		return setting{"--" + flagName, vs[0]}, true
	}
	if envName != "" {
		if s, ok := l.env(envName); ok {
			return setting{envName, s}, true
		}
	}
	return setting{}, false
}

// Names are the tool and toolset names a configuration may use.
type Names struct {
	Tools    []string // every tool, opt-in ones included, sorted
	Toolsets []string
}

// Load resolves the configuration from command-line arguments
// (without the program name) and the environment. It contacts nothing: every
// refusal happens before tmux is started. It returns ErrHelp for --help and
// ErrVersion for --version; every other error is one line naming the bad
// value and how to fix it.
func Load(args []string, lookupEnv func(string) (string, bool), names Names) (Config, error) {
	l := &configLoader{env: lookupEnv, names: names}
	fs := newConfigFlagSet(&l.f)
	if err := checkFlags(fs, args); err != nil {
		return Config{}, err
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return Config{}, ErrHelp
		}
		return Config{}, fmt.Errorf("%s; run libtmux-mcp --help for the flags", strconv.Quote(err.Error()))
	}
	if l.f.version {
		return Config{}, ErrVersion
	}
	if rest := fs.Args(); len(rest) > 0 {
		return Config{}, fmt.Errorf("unexpected argument %q; libtmux-mcp takes only flags (run libtmux-mcp --help)", rest[0])
	}
	for _, name := range singleValueFlags {
		if n := len(l.f.single[name]); n > 1 {
			return Config{}, fmt.Errorf("--%s given %d times; give it once", name, n)
		}
	}
	if err := l.retired(); err != nil {
		return Config{}, err
	}

	cfg := Config{Version: Version}
	steps := []func(*Config) error{
		l.route, l.tools, l.enrollment, l.limits, l.logLevel, l.http,
	}
	for _, step := range steps {
		if err := step(&cfg); err != nil {
			return Config{}, err
		}
	}
	cfg.CallerTMUX, _ = l.env("TMUX")
	cfg.CallerPane, _ = l.env("TMUX_PANE")
	return cfg, nil
}

// checkFlags reads args as package flag will, and refuses what it would
// refuse, in our words: an unknown flag, a flag without its value, bad
// syntax, a value given to --version. Parse then meets only good flags.
func checkFlags(fs *flag.FlagSet, args []string) error {
	const help = "run libtmux-mcp --help for the flags"
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(a) < 2 || a[0] != '-' {
			return nil // the first argument that is not a flag ends them
		}
		if a == "--" {
			return nil
		}
		name := strings.TrimPrefix(a[1:], "-")
		if name == "" || name[0] == '-' || name[0] == '=' {
			return fmt.Errorf("bad flag syntax %q; %s", a, help)
		}
		name, value, hasValue := strings.Cut(name, "=")
		if name == "h" || name == "help" {
			return nil // Parse answers ErrHelp
		}
		f := fs.Lookup(name)
		switch {
		case f == nil:
			return fmt.Errorf("unknown flag %q; %s", "--"+name, help)
		case name == "version" && hasValue && value != "true" && value != "false":
			return fmt.Errorf("--version takes no value; %s", help)
		case name != "version" && !hasValue && i+1 >= len(args):
			return fmt.Errorf("flag %q needs a value; %s", "--"+name, help)
		case name != "version" && !hasValue:
			i++ // its value
		}
	}
	return nil
}

// retired stops startup when a retired variable is present at all.
func (l *configLoader) retired() error {
	if v, ok := l.env("LIBTMUX_SAFETY"); ok {
		mapping := map[string]string{
			"readonly":    "inspect",
			"mutating":    "inspect,manage,execute",
			"destructive": "inspect,manage,execute,teardown",
		}
		if ts, known := mapping[v]; known {
			return fmt.Errorf("LIBTMUX_SAFETY is retired; replace LIBTMUX_SAFETY=%s with LIBTMUX_TOOLSETS=%s", v, ts)
		}
		return errors.New("LIBTMUX_SAFETY is retired; unset it and set LIBTMUX_TOOLSETS instead " +
			"(readonly -> inspect, mutating -> inspect,manage,execute, destructive -> inspect,manage,execute,teardown)")
	}
	if _, ok := l.env("LIBTMUX_MCP_TOOLS"); ok {
		return errors.New("LIBTMUX_MCP_TOOLS is retired; unset it and set LIBTMUX_TOOLSETS= (empty) " +
			"with LIBTMUX_TOOLS=<the same comma list> to expose exactly those tools")
	}
	if _, ok := l.env("LIBTMUX_SOCKET_NAME"); ok {
		return errors.New("LIBTMUX_SOCKET_NAME is retired; rename it to LIBTMUX_SOCKET")
	}
	return nil
}

// route resolves the tmux executable, socket and config.
func (l *configLoader) route(cfg *Config) error {
	path, hasPath := l.pick("socket", "LIBTMUX_SOCKET_PATH")
	name, hasName := l.pick("socket-name", "LIBTMUX_SOCKET")
	if hasPath && hasName {
		return fmt.Errorf("both %s and %s are set; choose one socket (unset the other)", path.from, name.from)
	}
	fields := []struct {
		flag, env string
		dst       *string
		probe     func(string) tmux.Route
	}{
		{"socket", "LIBTMUX_SOCKET_PATH", &cfg.Route.SocketPath, func(s string) tmux.Route { return tmux.Route{SocketPath: s} }},
		{"socket-name", "LIBTMUX_SOCKET", &cfg.Route.SocketName, func(s string) tmux.Route { return tmux.Route{SocketName: s} }},
		{"tmux-config", "LIBTMUX_TMUX_CONFIG", &cfg.Route.Config, func(s string) tmux.Route { return tmux.Route{Config: s} }},
		{"tmux-bin", "LIBTMUX_TMUX_BIN", &cfg.Route.Bin, func(s string) tmux.Route { return tmux.Route{Bin: s} }},
	}
	for _, fd := range fields {
		v, ok := l.pick(fd.flag, fd.env)
		if !ok {
			continue
		}
		if v.text == "" {
			return fmt.Errorf("%s is set but empty; give a value or unset it", v.from)
		}
		if err := fd.probe(v.text).Validate(); err != nil {
			return fmt.Errorf("%s: %w", v.from, err)
		}
		*fd.dst = v.text
	}
	return cfg.Route.Validate()
}

// splitCommaList splits a comma list; an empty whole is an empty list, an empty
// entry is an error.
func splitCommaList(v setting) ([]string, error) {
	out := []string{}
	if strings.TrimSpace(v.text) == "" {
		return out, nil
	}
	for _, e := range strings.Split(v.text, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			return nil, fmt.Errorf("%s %q has an empty entry; remove the extra comma", v.from, v.text)
		}
		out = append(out, e)
	}
	return out, nil
}

// toolList is the named tools from a repeatable flag, or else from its
// variable; nil when neither is given.
func (l *configLoader) toolList(flagName, envName string) ([]string, error) {
	var vs []setting
	if occ := l.f.multi[flagName]; len(occ) > 0 {
		for _, s := range occ {
			vs = append(vs, setting{"--" + flagName, s})
		}
	} else if s, ok := l.env(envName); ok {
		vs = append(vs, setting{envName, s})
	}
	var out []string
	for _, v := range vs {
		names, err := splitCommaList(v)
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			if !slices.Contains(l.names.Tools, n) {
				return nil, fmt.Errorf("%s names unknown tool %q; the tools are %s", v.from, n, strings.Join(l.names.Tools, ", "))
			}
		}
		out = append(out, names...)
	}
	return out, nil
}

// tools resolves toolsets, inclusions and exclusions.
func (l *configLoader) tools(cfg *Config) error {
	if v, ok := l.pick("toolsets", "LIBTMUX_TOOLSETS"); ok {
		sets, err := splitCommaList(v)
		if err != nil {
			return err
		}
		for _, s := range sets {
			if !slices.Contains(l.names.Toolsets, s) {
				return fmt.Errorf("%s names unknown toolset %q; the toolsets are %s (empty for none)", v.from, s, strings.Join(l.names.Toolsets, ", "))
			}
		}
		cfg.Toolsets = sets
	}
	var err error
	if cfg.EnableTools, err = l.toolList("enable-tool", "LIBTMUX_TOOLS"); err != nil {
		return err
	}
	if cfg.ExcludeTools, err = l.toolList("exclude-tool", "LIBTMUX_EXCLUDE_TOOLS"); err != nil {
		return err
	}
	return nil
}

// enrollment resolves the tmux_run settings and enforces its rules.
func (l *configLoader) enrollment(cfg *Config) error {
	seenPane := map[string]bool{}
	seenFile := map[string]string{}
	for _, s := range l.f.multi["enroll-pane"] {
		pane, file, ok := strings.Cut(s, "=")
		switch {
		case !ok && tmux.ValidPaneID(pane):
			// No FILE: the invitation goes in the broker's private directory.
			if seenPane[pane] {
				return fmt.Errorf("--enroll-pane names pane %s twice; give each pane once", pane)
			}
			seenPane[pane] = true
			cfg.EnrollPanes = append(cfg.EnrollPanes, EnrollPane{Pane: pane})
			continue
		case !tmux.ValidPaneID(pane):
			return fmt.Errorf("--enroll-pane %q: %q is not a pane id; write it like %%3 (tmux display -p '#{pane_id}' in the pane shows it)", s, pane)
		case file == "":
			return fmt.Errorf("--enroll-pane %q has no FILE; name a file to create, like %s=/tmp/enroll.zsh", s, pane)
		}
		if err := tmux.CheckPrintable("--enroll-pane file", file); err != nil {
			return err
		}
		abs, err := filepath.Abs(file)
		if err != nil {
			return fmt.Errorf("--enroll-pane %q: cannot make %q absolute: %v; give an absolute path", s, file, err)
		}
		if seenPane[pane] {
			return fmt.Errorf("--enroll-pane names pane %s twice; give each pane once", pane)
		}
		if other, dup := seenFile[abs]; dup {
			return fmt.Errorf("--enroll-pane gives file %q to both %s and %s; give each pane its own file", abs, other, pane)
		}
		seenPane[pane], seenFile[abs] = true, pane
		cfg.EnrollPanes = append(cfg.EnrollPanes, EnrollPane{Pane: pane, File: abs})
	}
	if n := len(cfg.EnrollPanes); n > enroll.MaxPanes {
		return fmt.Errorf("%d panes given with --enroll-pane; at most %d can be enrolled, so drop %d", n, enroll.MaxPanes, n-enroll.MaxPanes)
	}

	// tmux_run_start needs the broker and the helper as tmux_run does.
	enabled := slices.Contains(cfg.EnableTools, runToolName) || slices.Contains(cfg.EnableTools, runToolName+"_start")
	switch {
	case slices.Contains(cfg.EnableTools, runToolName) && slices.Contains(cfg.ExcludeTools, runToolName):
		return errors.New("tmux_run is both enabled and excluded; remove it from --exclude-tool/LIBTMUX_EXCLUDE_TOOLS or from --enable-tool/LIBTMUX_TOOLS")
	case !enabled && len(cfg.EnrollPanes) > 0:
		return errors.New("--enroll-pane needs tmux_run; add --enable-tool tmux_run")
	}

	if v, ok := l.pick("enrollment-timeout", ""); ok {
		d, err := positiveDuration(v)
		if err != nil {
			return err
		}
		if d > MaxEnrollTimeout {
			return fmt.Errorf("%s %q is over the ceiling; give at most %s", v.from, v.text, MaxEnrollTimeout)
		}
		cfg.EnrollTimeout = d
	}
	if v, ok := l.pick("run-timeout", "LIBTMUX_MCP_RUN_TIMEOUT"); ok {
		d, err := positiveDuration(v)
		if err != nil {
			return err
		}
		cfg.Broker.RunTimeout = d
	}
	if v, ok := l.pick("background-timeout", "LIBTMUX_MCP_BACKGROUND_TIMEOUT"); ok {
		d, err := positiveDuration(v)
		if err != nil {
			return err
		}
		cfg.Broker.BackgroundTimeout = d
	}
	if enabled {
		h, err := l.helper()
		if err != nil {
			return err
		}
		cfg.Helper = h
	}
	return nil
}

// positiveDuration parses a positive Go duration.
func positiveDuration(v setting) (time.Duration, error) {
	d, err := time.ParseDuration(v.text)
	if err != nil {
		return 0, fmt.Errorf("%s %q is not a Go duration; write it like 90s or 2m", v.from, v.text)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%s %q is not positive; give a duration above zero, like 90s", v.from, v.text)
	}
	return d, nil
}

// helper finds the helper binary: as named, else beside this executable,
// else on PATH.
func (l *configLoader) helper() (string, error) {
	if v, ok := l.pick("helper", "LIBTMUX_MCP_HELPER"); ok {
		if err := tmux.CheckPrintable(v.from, v.text); err != nil {
			return "", err
		}
		if !filepath.IsAbs(v.text) {
			return "", fmt.Errorf("%s %q is not an absolute path; give the helper's absolute path", v.from, v.text)
		}
		if err := checkHelperFile(v.text); err != nil {
			return "", fmt.Errorf("%s %q: %v; install it with: go install github.com/libtmux/libtmux-mcp/cmd/...", v.from, v.text, err)
		}
		return v.text, nil
	}
	if exe, err := osExecutable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), helperBinaryName)
		if checkHelperFile(p) == nil {
			return p, nil
		}
	}
	if p, err := execLookPath(helperBinaryName); err == nil {
		if abs, err := filepath.Abs(p); err == nil && tmux.CheckPrintable("helper", abs) == nil {
			return abs, nil
		}
	}
	return "", errors.New("tmux_run needs the helper binary " + helperBinaryName +
		"; install it with: go install github.com/libtmux/libtmux-mcp/cmd/... (or name it with --helper)")
}

// checkHelperFile reports why path is not an executable regular file.
func checkHelperFile(path string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return errors.New("no such file")
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		return errors.New("not a regular file")
	case fi.Mode().Perm()&0o111 == 0:
		return errors.New("not executable")
	}
	return nil
}

// limits resolves the variable-only settings.
func (l *configLoader) limits(cfg *Config) error {
	ms := []struct {
		env string
		dst *time.Duration
		max time.Duration
	}{
		{"LIBTMUX_MCP_WAIT_MAX_MS", &cfg.Server.WaitMax, MaxWaitMax},
		{"LIBTMUX_MCP_COMMAND_TIMEOUT_MS", &cfg.CommandTimeout, 0},
		{"LIBTMUX_MCP_SHELL_ANSWER_MS", &cfg.Broker.ShellAnswer, 0},
		{"LIBTMUX_MCP_HTTP_SESSION_IDLE_MS", &cfg.Transport.SessionIdle, 0},
	}
	for _, m := range ms {
		n, ok, err := l.positive(m.env)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if m.max > 0 && n > m.max.Milliseconds() {
			return fmt.Errorf("%s=%d is over the ceiling; give at most %d", m.env, n, m.max.Milliseconds())
		}
		if n > math.MaxInt64/int64(time.Millisecond) {
			return fmt.Errorf("%s=%d is too large; give a smaller number of milliseconds", m.env, n)
		}
		*m.dst = time.Duration(n) * time.Millisecond
	}
	counts := []struct {
		env      string
		dst      *int
		min, max int64
		unit     string
	}{
		{"LIBTMUX_MCP_MAX_RESULT_LINES", &cfg.Server.MaxResultLines, 1, math.MaxInt32, "line count"},
		{"LIBTMUX_MCP_MAX_FRAME_BYTES", &cfg.Transport.MaxFrame, MinMaxFrame, MaxMaxFrame, "number of bytes"},
		{"LIBTMUX_MCP_MAX_BLOCKING", &cfg.Server.MaxBlocking, 1, 100000, "number of calls"},
		{"LIBTMUX_MCP_HTTP_MAX_SESSIONS", &cfg.Transport.MaxSessions, 1, 100000, "number of sessions"},
		{"LIBTMUX_MCP_MAX_BACKGROUND_RUNS", &cfg.Broker.MaxBackground, 1, 64, "number of runs"},
		{"LIBTMUX_MCP_BACKGROUND_OUTPUT_BYTES", &cfg.Broker.BackgroundOutput, 4096, 1 << 30, "number of bytes"},
	}
	for _, c := range counts {
		n, ok, err := l.positive(c.env)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if n > c.max {
			return fmt.Errorf("%s=%d is too large; give a smaller %s, at most %d", c.env, n, c.unit, c.max)
		}
		if n < c.min {
			return fmt.Errorf("%s=%d is too small; give at least %d", c.env, n, c.min)
		}
		*c.dst = int(n)
	}

	if v, ok := l.env("LIBTMUX_MCP_LIVE"); ok {
		switch v {
		case "0":
			cfg.Server.NoLive = true
		case "1":
			cfg.Server.NoLive = false
		default:
			return fmt.Errorf("LIBTMUX_MCP_LIVE %q is neither 0 nor 1; set 0 to forbid control-mode connections, 1 to allow them", v)
		}
	}
	if v, ok := l.env("LIBTMUX_MCP_ATTENDED"); ok {
		switch v {
		case "typing", "watched", "ignore":
			cfg.Server.Attended = v
		default:
			return fmt.Errorf("LIBTMUX_MCP_ATTENDED %q is not a mode; set typing, watched or ignore", v)
		}
	}
	return nil
}

// positive reads a variable holding a positive integer.
func (l *configLoader) positive(env string) (int64, bool, error) {
	s, ok := l.env(env)
	if !ok {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, false, fmt.Errorf("%s %q is not a positive whole number; give one like 5000, or unset it", env, s)
	}
	return n, true, nil
}

// logLevel resolves the stderr log level.
func (l *configLoader) logLevel(cfg *Config) error {
	v, ok := l.pick("log-level", "LIBTMUX_MCP_LOG")
	if !ok {
		// The startup line is printed, not logged; by default only
		// warnings join it (go-sdk logs every session start at info).
		cfg.LogLevel = slog.LevelWarn
		return nil
	}
	levels := map[string]slog.Level{
		"error": slog.LevelError, "warn": slog.LevelWarn,
		"info": slog.LevelInfo, "debug": slog.LevelDebug,
	}
	lv, known := levels[strings.ToLower(v.text)]
	if !known {
		return fmt.Errorf("%s %q is not a log level; give error, warn, info or debug", v.from, v.text)
	}
	cfg.LogLevel = lv
	return nil
}

// http resolves --http and its token. The address must be loopback; the
// token is read only when serving HTTP.
func (l *configLoader) http(cfg *Config) error {
	v, ok := l.pick("http", "")
	if !ok {
		return nil
	}
	if err := loopback.CheckAddr(v.text); err != nil {
		return fmt.Errorf("--http %q: %w", v.text, err)
	}
	cfg.HTTPAddr = v.text
	if tok, ok := l.env("LIBTMUX_MCP_HTTP_TOKEN"); ok {
		if len(tok) < 16 || strings.IndexFunc(tok, func(r rune) bool { return r <= ' ' || r >= 0x7f }) >= 0 {
			return errors.New("LIBTMUX_MCP_HTTP_TOKEN must be at least 16 printable ASCII characters without spaces; unset it to have one generated")
		}
		cfg.HTTPToken = tok
	}
	return nil
}
