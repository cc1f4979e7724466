package request

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/libtmux/libtmux-mcp/broker"
	"github.com/libtmux/libtmux-mcp/internal/panerecord"
	"github.com/libtmux/libtmux-mcp/tmux"
)

// IsCommand reports whether args (os.Args[1:]) name one of this package's commands.
func IsCommand(args []string) bool {
	return len(args) > 0 && (args[0] == "enroll" || args[0] == "status")
}

// Env is what the commands read of their environment.
type Env struct {
	TMUX, Pane string    // $TMUX and $TMUX_PANE
	Stdout     io.Writer // zsh code for eval (enroll), the report (status)
	Stderr     io.Writer // everything said to the person
	// StdoutFD is stdout's descriptor: enroll refuses a terminal (its code is for eval).
	StdoutFD uintptr
	// Dirs lists the live broker directories; broker.LiveDirs when nil.
	Dirs func() []string
}

// Main runs `libtmux-mcp enroll [--server PID]` or `libtmux-mcp status` (args is os.Args[1:])
// and returns the exit status: 0 done, 1 refused or failed, 2 a usage error or a choice to make.
func Main(args []string, env Env) int {
	if env.Dirs == nil {
		env.Dirs = broker.LiveDirs
	}
	cmd := args[0]
	fs := flag.NewFlagSet("libtmux-mcp "+cmd, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	server := fs.Int("server", 0, "the `PID` of the libtmux-mcp server to ask, when several serve this tmux server")
	fs.Usage = func() {
		if cmd == "enroll" {
			fmt.Fprintln(env.Stderr, "usage: eval \"$(libtmux-mcp enroll [--server PID])\"\n\nTyped at a zsh prompt in a tmux pane, lends that pane to the tmux_run tool of the\nlibtmux-mcp server that serves its tmux server. Withdraw with libtmux_mcp_unenroll.")
		} else {
			fmt.Fprintln(env.Stderr, "usage: libtmux-mcp status [--server PID]\n\nPrints the libtmux-mcp servers with tmux_run that serve this tmux server, their invited\nand enrolled panes, and each enrolled pane's recent runs.")
		}
		fs.PrintDefaults()
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "libtmux-mcp %s: unexpected argument %q; it takes only --server PID\n", cmd, fs.Arg(0))
		return 2
	}
	if cmd == "status" {
		return status(env, *server)
	}
	return enrollPane(env, *server)
}

// fail says msg to the person, and for enroll prints `false` for eval, so the eval fails too.
func fail(env Env, cmd string, code int, format string, args ...any) int {
	fmt.Fprintf(env.Stderr, "libtmux-mcp %s: %s\n", cmd, fmt.Sprintf(format, args...))
	if cmd == "enroll" {
		fmt.Fprintln(env.Stdout, "false")
	}
	return code
}

// enrollPane asks the server that serves this pane's tmux server for an invitation and prints
// the zsh code that sources it.
func enrollPane(env Env, pid int) int {
	const cmd = "enroll"
	if sys == nil {
		return fail(env, cmd, 1, "tmux_run needs Linux; this system cannot lend a pane to it")
	}
	if sys.isTerminal(env.StdoutFD) {
		fmt.Fprintln(env.Stderr, `libtmux-mcp enroll: its output is zsh code for eval; type: eval "$(libtmux-mcp enroll)"`)
		return 2
	}
	if env.TMUX == "" || env.Pane == "" {
		return fail(env, cmd, 1, "not inside tmux ($TMUX or $TMUX_PANE is unset); type it in a zsh pane of the tmux server libtmux-mcp serves")
	}
	rec, code := pick(env, cmd, pid)
	if code >= 0 {
		return code
	}
	a, err := ask(rec.Socket, message{V: 1, Op: opEnroll, Pane: env.Pane, TMUX: env.TMUX})
	if err != nil {
		return fail(env, cmd, 1, "ask the server (pid %d): %v", rec.PID, err)
	}
	if !a.OK {
		return fail(env, cmd, 1, "%s", a.Message)
	}
	fmt.Fprint(env.Stdout, evalCode(a.File))
	return 0
}

// evalCode is what enroll prints for eval: one POSIX `if`, so a shell that is not zsh never
// reaches `source` (bash would run the lines after a failed `return`, and cannot read the zsh
// file).
func evalCode(file string) string {
	return fmt.Sprintf("if [ -n \"${ZSH_VERSION-}\" ]; then builtin source %s; else echo %s >&2; false; fi\n",
		quote(file), quote(`libtmux-mcp enroll: this shell is not zsh; tmux_run enrolls only zsh: start zsh in this pane (exec zsh) and run eval "$(libtmux-mcp enroll)" again`))
}

// candidates are the records of the live servers, and of those, the ones serving $TMUX's server.
func candidates(env Env) (all, here []Record) {
	ce, inTmux := tmux.ParseTMUX(env.TMUX)
	for _, dir := range env.Dirs() {
		rec, err := ReadRecord(dir)
		if err != nil || rec.Socket == "" {
			continue
		}
		all = append(all, rec)
		if inTmux && ce.Names(tmux.ServerInfo{PID: rec.TmuxPID, SocketPath: rec.TmuxSocket}) {
			here = append(here, rec)
		}
	}
	return all, here
}

// pick chooses the one server to ask: the only one serving this tmux server, or the one --server
// names. code is -1 when one was chosen, else the exit status (the person was told why).
func pick(env Env, cmd string, pid int) (Record, int) {
	all, here := candidates(env)
	ce, _ := tmux.ParseTMUX(env.TMUX)
	if len(here) == 0 {
		var elsewhere []string
		for _, r := range all {
			elsewhere = append(elsewhere, fmt.Sprintf("%s (pid %d)", r.TmuxSocket, r.PID))
		}
		msg := fmt.Sprintf("no libtmux-mcp server with tmux_run serves this pane's tmux server (%s). Either start the server on this socket (add --socket %s to its arguments, or --socket-name default for tmux's default server), or work in a zsh pane of the tmux server it serves (tmux -L libtmux-mcp attach, for its default socket)", ce.Socket, ce.Socket)
		if len(elsewhere) > 0 {
			msg += "; servers with tmux_run serve: " + strings.Join(elsewhere, ", ")
		}
		return Record{}, fail(env, cmd, 1, "%s", msg)
	}
	if pid != 0 {
		for _, r := range here {
			if r.PID == pid {
				return r, -1
			}
		}
		return Record{}, fail(env, cmd, 2, "no server with pid %d serves this tmux server; the servers are:\n%s", pid, list(here))
	}
	if len(here) > 1 {
		return Record{}, fail(env, cmd, 2, "%d libtmux-mcp servers with tmux_run serve this tmux server; name one with --server PID (eval \"$(libtmux-mcp %s --server PID)\"):\n%s", len(here), cmd, list(here))
	}
	return here[0], -1
}

// list is one line per server.
func list(recs []Record) string {
	var b strings.Builder
	for _, r := range recs {
		b.WriteString("  " + describe(r) + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func describe(r Record) string {
	client := r.Client
	if client == "" {
		client = "unknown client"
	}
	return fmt.Sprintf("pid %d  %s  started %s  tmux %s", r.PID, client, r.Started.Local().Format("2006-01-02 15:04:05"), r.TmuxSocket)
}

// ask sends one request on the socket at path and reads the answer.
func ask(path string, m message) (answer, error) {
	conn, err := net.DialTimeout("unix", path, 5*time.Second)
	if err != nil {
		return answer{}, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(15 * time.Second))
	b, _ := json.Marshal(m)
	if _, err := conn.Write(append(b, '\n')); err != nil {
		return answer{}, err
	}
	line, err := bufio.NewReaderSize(conn, 1<<20).ReadBytes('\n')
	if err != nil {
		return answer{}, fmt.Errorf("no answer: %w", err)
	}
	var a answer
	if err := json.Unmarshal(line, &a); err != nil {
		return answer{}, fmt.Errorf("unreadable answer: %w", err)
	}
	return a, nil
}

// status prints what each server serving this tmux server (every live server outside tmux)
// reports.
func status(env Env, pid int) int {
	printClaim(env)
	all, here := candidates(env)
	if env.TMUX == "" {
		here = all
	}
	if len(here) == 0 {
		fmt.Fprintln(env.Stdout, "no libtmux-mcp server with tmux_run serves this tmux server")
		return 0
	}
	code := 0
	for _, r := range here {
		if pid != 0 && r.PID != pid {
			continue
		}
		a, err := ask(r.Socket, message{V: 1, Op: opStatus})
		if err != nil || !a.OK || a.Status == nil {
			fmt.Fprintf(env.Stderr, "libtmux-mcp status: server pid %d did not answer: %v%s\n", r.PID, err, a.Message)
			code = 1
			continue
		}
		printStatus(env.Stdout, *a.Status)
	}
	return code
}

// printClaim says which libtmux-mcp process, if any, runs a command in this pane ($TMUX_PANE):
// the pane's claim, which every server process takes before it types or runs anything there.
func printClaim(env Env) {
	ce, ok := tmux.ParseTMUX(env.TMUX)
	if !ok || !tmux.ValidPaneID(env.Pane) {
		return
	}
	set, err := panerecord.For(ce.Socket, ce.ServerPID)
	if err != nil {
		fmt.Fprintf(env.Stderr, "libtmux-mcp status: the pane claims cannot be read: %v\n", err)
		return
	}
	if h, held := set.Holder(env.Pane); held {
		fmt.Fprintf(env.Stdout, "pane %s is claimed by %s\n", env.Pane, h)
	} else {
		fmt.Fprintf(env.Stdout, "pane %s: no agent's command runs here\n", env.Pane)
	}
}

func printStatus(w io.Writer, st Status) {
	fmt.Fprintf(w, "server %s\n", describe(st.Server))
	if len(st.Panes) == 0 {
		fmt.Fprintln(w, "  no pane invited or enrolled")
	}
	for _, p := range st.Panes {
		if p.PID != 0 {
			fmt.Fprintf(w, "  pane %s %s (shell pid %d)\n", p.Pane, p.State, p.PID)
		} else {
			fmt.Fprintf(w, "  pane %s %s\n", p.Pane, p.State)
		}
		for _, r := range p.Runs {
			end := "exit " + func() string {
				if r.Exit != nil {
					return strconv.Itoa(*r.Exit)
				}
				return "?"
			}()
			switch {
			case r.Running:
				end = "running"
			case r.Signal != 0:
				end = "signal " + strconv.Itoa(r.Signal)
			case r.Code != "" && r.Exit == nil:
				end = r.Code
			case r.Code != "":
				end += " (" + r.Code + ")"
			}
			digest := r.Digest
			if len(digest) > 12 {
				digest = digest[:12]
			}
			fmt.Fprintf(w, "    %s  %6s  %-12s %s  %s\n", r.Start.Local().Format("15:04:05"),
				(time.Duration(r.DurationMS) * time.Millisecond).Round(time.Millisecond), end, digest, r.FirstLine)
		}
	}
}

// quote makes s one single-quoted word for POSIX shells and zsh alike.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
