package integration

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
	"golang.org/x/sys/unix"
)

// forgerEnv, set in the environment of this test binary, makes it the credential forger of
// TestTmuxRunRootForgedCredentials instead of running tests (see TestMain): a process started
// by a command substitution of a redrawn prompt, which inherited the prompt's connection.
const forgerEnv = "LIBTMUX_MCP_TEST_FORGER"

// Forger modes: what the forger sends once it has read a request on the inherited connection.
const (
	// forgeOnPrompt answers on the inherited connection alone, as the shell answered before
	// its directory and environment moved to a connection of their own: GO <run_id> <n> and
	// the payload.
	forgeOnPrompt = "prompt"
	// forgeOwnConnection answers as the shell answers now: GO <run_id> on the inherited
	// connection, and STATE on a connection the forger opens to the broker's socket (found
	// with getpeername on the inherited one), its write too with credentials naming the shell.
	forgeOwnConnection = "own-connection"
	// forgeOwnConnectionPlain is forgeOwnConnection with the STATE written under the forger's
	// own credentials, so that only the connection's owner gives it away.
	forgeOwnConnectionPlain = "own-connection-plain"
)

// asForger runs this test binary as the forger when forgerEnv is set (from TestMain), and
// reports its exit status.
func asForger() (int, bool) {
	mode := os.Getenv(forgerEnv)
	if mode == "" {
		return 0, false
	}
	return forgerMain(mode), true
}

// forgedState is the directory and environment the forger offers: a script run with them
// prints yes-from-root.
var forgedState = "/tmp\x00FORGED=yes-from-root"

// forgerMain is the forger: os.Args are the inherited connection's fd, the enrolled shell's
// pid, its enrollment id and a path prefix for the marks it leaves (mark.fd once started,
// mark.read once it read a request, mark.sent once the kernel accepted every forged write,
// mark.err with what failed). Every write carries SCM_CREDENTIALS naming the shell's pid, which
// only root may forge. It handles one request and exits; it gives up after 60 s.
func forgerMain(mode string) int {
	if len(os.Args) != 5 {
		return 2
	}
	fd, _ := strconv.Atoi(os.Args[1])
	shell, _ := strconv.Atoi(os.Args[2])
	eid, mark := os.Args[3], os.Args[4]
	fail := func(err error) int {
		os.WriteFile(mark+".err", []byte(err.Error()), 0o600)
		return 1
	}
	conn, err := net.FileConn(os.NewFile(uintptr(fd), "inherited"))
	if err != nil {
		return fail(err)
	}
	uc := conn.(*net.UnixConn)
	os.WriteFile(mark+".fd", nil, 0o600)
	uc.SetReadDeadline(time.Now().Add(60 * time.Second))
	line, err := bufio.NewReader(uc).ReadString('\n')
	if err != nil {
		return fail(err)
	}
	os.WriteFile(mark+".read", []byte(line), 0o600)
	f := strings.Fields(line)
	if len(f) != 2 {
		return fail(fmt.Errorf("request %q", line))
	}
	id := f[1]
	cred := unix.UnixCredentials(&unix.Ucred{Pid: int32(shell), Uid: uint32(os.Getuid()), Gid: uint32(os.Getgid())})
	send := func(c *net.UnixConn, b string) error {
		n, _, err := c.WriteMsgUnix([]byte(b), cred, nil)
		if err == nil && n != len(b) {
			err = fmt.Errorf("short write: %d of %d bytes", n, len(b))
		}
		return err
	}
	switch mode {
	case forgeOnPrompt:
		if err := send(uc, fmt.Sprintf("GO %s %d\n%s", id, len(forgedState), forgedState)); err != nil {
			return fail(err)
		}
	case forgeOwnConnection, forgeOwnConnectionPlain:
		sa, err := unix.Getpeername(fd)
		if err != nil {
			return fail(err)
		}
		sock, ok := sa.(*unix.SockaddrUnix)
		if !ok {
			return fail(fmt.Errorf("peer %T", sa))
		}
		own, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: sock.Name, Net: "unix"})
		if err != nil {
			return fail(err)
		}
		defer own.Close()
		state := fmt.Sprintf("STATE %s %s %d\n%s", eid, id, len(forgedState), forgedState)
		if mode == forgeOwnConnectionPlain {
			_, err = own.Write([]byte(state))
		} else {
			err = send(own, state)
		}
		if err != nil {
			return fail(err)
		}
		if err := send(uc, "GO "+id+"\n"); err != nil {
			return fail(err)
		}
	default:
		return fail(fmt.Errorf("mode %q", mode))
	}
	os.WriteFile(mark+".sent", nil, 0o600)
	// Hold both connections a while: the broker must not take a closed connection for proof.
	time.Sleep(5 * time.Second) // the forger's own lifetime, not a synchronization
	return 0
}

// forgerFunction defines, in the person's zsh, forge: when the shell holds a broker connection
// (a prompt redrawn while attached), it starts this test binary as the forger in mode, in the
// background, with that connection, and leaves a mark (mark.tried) either way.
func forgerFunction(mode, mark string) string {
	self, _ := filepath.Abs(os.Args[0])
	return `forge() { : > ` + mark + `.tried; [[ -n ${_libtmux_mcp_fd-} && ! -e ` + mark + `.fd ]] || return 0; ` +
		forgerEnv + `=` + mode + ` ` + self + ` $_libtmux_mcp_fd $$ $_libtmux_mcp_eid ` + mark + ` </dev/null >/dev/null 2>&1 &! }`
}

// As root a process may send SCM_CREDENTIALS naming any pid. A process started by a command
// substitution of a redrawn prompt holds the prompt's connection; the shell itself waits in the
// read builtin, so only the forger reads the request. It answers with credentials naming the
// shell, on the inherited connection alone (forgeOnPrompt), or with a state of its own on a
// connection it opened (forgeOwnConnection, and forgeOwnConnectionPlain without forging that
// write). None may run the script, with the forger's directory and environment or at all, and
// each is logged (issue 30, finding 2: the broker ran it with the forger's working directory
// and LD_PRELOAD; forgeOnPrompt fails so on the code before the STATE connection). Unprivileged, the kernel refuses the forged
// credentials with EPERM: TestTmuxRunForgedAnswerFromPromptSubstitution covers that case.
func TestTmuxRunRootForgedCredentials(t *testing.T) {
	tmuxtest.NotPerRelease(t, "the broker refusing forged peer credentials")
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("only root can forge SCM_CREDENTIALS; unprivileged, TestTmuxRunForgedAnswerFromPromptSubstitution covers the inherited connection")
	}
	for mode, logged := range map[string]string{
		forgeOnPrompt:           "malformed GO; the prompt's connection is dropped",
		forgeOwnConnection:      "refused bytes from a process that is not the enrolled shell",
		forgeOwnConnectionPlain: "refused a run's state from a process that is not the enrolled shell",
	} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			e := enrollPane(t)
			e.stdoutOf(t, "true") // the resident helper exists: an agreement alone would start a run
			mark := filepath.Join(shortTempDir(t), "forger")
			e.typeAndWait(t, forgerFunction(mode, mark))
			e.typeAndWait(t, `setopt prompt_subst; PS1='$(forge)%% '; TMOUT=1; TRAPALRM() { zle reset-prompt }`)
			tmuxtest.WaitFile(t, mark+".fd", func() string {
				return fmt.Sprintf("the pane shows:\n%s\nserver stderr:\n%s", e.ts.Capture(e.pane), e.p.stderr)
			})
			e.leavePromptForRead(t)
			obj := e.run(t, context.Background(), map[string]any{"script": `printf '%s %s' "${FORGED-none}" "$PWD"`})
			if obj["ok"] == true {
				t.Fatalf("a forged answer ran the script: %v", obj["data"])
			}
			errorOf(t, obj, "not_at_prompt", "not_sent")
			if b, err := os.ReadFile(mark + ".err"); err == nil {
				t.Fatalf("the forger failed: %s", b)
			}
			tmuxtest.WaitFile(t, mark+".sent", func() string {
				b, _ := os.ReadFile(mark + ".read")
				return fmt.Sprintf("the forger read %q", b)
			})
			if _, ok := e.p.stderr.line(logged, 10*time.Second); !ok {
				t.Errorf("the forged answer was not logged (%q); stderr:\n%s", logged, e.p.stderr)
			}
		})
	}
}
