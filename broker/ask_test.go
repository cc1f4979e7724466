package broker

import (
	"bufio"
	"context"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/libtmux/libtmux-mcp/enroll"
)

// unixPair is a connected pair of Unix stream sockets: the broker's end and the shell's.
func unixPair(t *testing.T) (brokerEnd, shellEnd *net.UnixConn) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	var conns [2]*net.UnixConn
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "socketpair")
		c, err := net.FileConn(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = c.(*net.UnixConn)
		t.Cleanup(func() { c.Close() })
	}
	return conns[0], conns[1]
}

// A prompt's connection that the shell had closed (preexec: a command started, and here ended
// at once) before the broker read its end is no refusal: the RUN could not be written, so
// nothing was sent, and the run asks the next prompt. Before, the run answered not_at_prompt
// with the next prompt already drawn (CI, TestTmuxRunRespawnedPaneWithSurvivingShell on 3.4,
// a run right after a typed command ended).
func TestAskMovesPastAPromptTheShellClosed(t *testing.T) {
	// The enrolled "shell" is a process with no terminal, so it never runs a foreground job.
	proc := exec.Command("sleep", "60")
	proc.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := proc.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proc.Process.Kill(); proc.Wait() })
	b := &Broker{cfg: Config{Log: slog.New(slog.DiscardHandler)}, runs: map[string]*run{}}
	b.cfg.Limits = b.cfg.Limits.withDefaults()
	sh := &shell{e: &enroll.Enrollment{Pane: "%1", PID: proc.Process.Pid}, attached: make(chan struct{}), live: -1, done: make(chan struct{})}

	// The first prompt's connection: closed on the shell's side, its end not yet read here.
	closed, closedShell := unixPair(t)
	closedShell.Close()
	sh.attach(newPrompt(closed, bufio.NewReader(closed)), 1)

	// The next prompt attaches once the broker has forgotten the first (not before: the run
	// must meet the closed one first), and its shell answers BUSY.
	next, nextShell := unixPair(t)
	answered := make(chan string, 1)
	returned := make(chan struct{})
	go func() {
		defer close(answered)
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) { // polling: nothing signals a detach
			if p, _ := sh.promptOrWait(); p == nil {
				break
			}
			select {
			case <-returned:
				answered <- "nothing: the run ended with the closed prompt still current"
				return
			default:
			}
			if time.Now().After(deadline) {
				answered <- "nothing: the closed prompt was never forgotten"
				return
			}
		}
		p := newPrompt(next, bufio.NewReader(next))
		go b.readPrompt(sh, p)
		sh.attach(p, 2)
		line, err := bufio.NewReader(nextShell).ReadString('\n')
		if err != nil {
			answered <- "reading the RUN: " + err.Error()
			return
		}
		id := strings.TrimPrefix(strings.TrimSpace(line), WordHelper+" ")
		if _, err := nextShell.Write([]byte(WordBusy + " " + id + "\n")); err != nil {
			answered <- "a RUN, but answering BUSY failed: " + err.Error()
			return
		}
		answered <- line
	}()

	_, _, _, r := b.askPrompt(context.Background(), sh, "run-1")
	close(returned)
	got := <-answered
	if got != WordHelper+" run-1\n" {
		t.Fatalf("the next prompt got %s; want the run asked there (HELPER run-1); the run answered %+v", got, r)
	}
	if r == nil || r.code != CodeShellBusy {
		t.Fatalf("refusal %+v; want the next prompt's answer, %s", r, CodeShellBusy)
	}
}
