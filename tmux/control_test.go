package tmux_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
	"github.com/libtmux/libtmux-mcp/tmux"
)

// attach starts a server with one session and a control client on it.
func attach(t testing.TB) (*tmuxtest.Server, *tmux.Control, string) {
	t.Helper()
	s := tmuxtest.Start(t)
	pane := s.NewSession("ctl", "sh")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cc, err := s.Client.Control(ctx, "=ctl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return s, cc, pane
}

func ctx10(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// next returns the first event that ok accepts, failing the test after 10 s
// or when the channel closes.
func next(t *testing.T, ch <-chan tmux.Event, ok func(tmux.Event) bool) tmux.Event {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev, open := <-ch:
			if !open {
				t.Fatal("event channel closed before the expected event")
			}
			if ok(ev) {
				return ev
			}
		case <-deadline:
			t.Fatal("no expected event within 10 s")
		}
	}
}

func TestControlCommand(t *testing.T) {
	s, cc, pane := attach(t)
	ctx := ctx10(t)
	sid := strings.TrimSpace(s.Run("display-message", "-p", "-t", pane, "#{session_id}"))
	if cc.Session() != sid {
		t.Errorf("Session() = %q; want %q", cc.Session(), sid)
	}
	out, err := cc.Command(ctx, "display-message", "-p", "-t", pane, "#{pane_id} and spaces")
	if err != nil {
		t.Fatal(err)
	}
	if want := pane + " and spaces\n"; out != want {
		t.Errorf("got %q; want %q", out, want)
	}
	// The control client is visible to tmux as such.
	clients := s.Run("list-clients", "-F", "#{client_control_mode} #{session_id}")
	if !strings.Contains(clients, "1 "+sid) {
		t.Errorf("list-clients shows %q; want a control client on %s", clients, sid)
	}
}

func TestControlCommandError(t *testing.T) {
	_, cc, _ := attach(t)
	ctx := ctx10(t)
	_, err := cc.Command(ctx, "has-session", "-t", "=nosuch")
	var te *tmux.Error
	if !errors.As(err, &te) {
		t.Fatalf("got %v (%T); want a *tmux.Error", err, err)
	}
	if !strings.Contains(te.Stderr, "can't find session") {
		t.Errorf("Stderr = %q; want tmux's message", te.Stderr)
	}
	if errors.Is(err, tmux.ErrNoServer) {
		t.Errorf("%v matches ErrNoServer; the server is up", err)
	}
	// The connection is still in step after an error.
	if out, err := cc.Command(ctx, "display-message", "-p", "after"); err != nil || out != "after\n" {
		t.Errorf("after an error: got %q, %v; want \"after\\n\"", out, err)
	}
}

func TestControlIfShellAnswersAsOneCommand(t *testing.T) {
	_, cc, pane := attach(t)
	ctx := ctx10(t)
	for _, tc := range []struct {
		why, cond, want string
		wantErr         bool
	}{
		{"the true branch runs two commands", "#{==:1,1}", "OK-n\n", false},
		{"the false branch", "#{==:1,0}", "NO-n\n", false},
	} {
		out, err := cc.Command(ctx, "if-shell", "-F", "-t", pane, tc.cond,
			"set -p @lt_run r1 ; display -p OK-n", "display -p NO-n")
		if err != nil || out != tc.want {
			t.Errorf("%s: got %q, %v; want %q", tc.why, out, err, tc.want)
		}
	}
	// A failing command queued by if-shell is this command's error, and the
	// next command still gets its own answer.
	_, err := cc.Command(ctx, "if-shell", "-F", "1", "display -p first ; has-session -t =nosuch")
	var te *tmux.Error
	if !errors.As(err, &te) || !strings.Contains(te.Stderr, "can't find session") {
		t.Errorf("got %v; want the queued command's error", err)
	}
	if out, err := cc.Command(ctx, "display-message", "-p", "next"); err != nil || out != "next\n" {
		t.Errorf("got %q, %v; want \"next\\n\"", out, err)
	}
}

func TestControlQuotingRoundTrip(t *testing.T) {
	s, cc, _ := attach(t)
	ctx := ctx10(t)
	file := filepath.Join(s.Dir, "buf")
	for _, v := range []string{
		"plain", "two words", `"double"`, "it's", "''", `back\slash`, "#{pane_id}", "a;b ; c",
		"$HOME", "~", "%if", "%3", "{ x }", "tab\there", "new\nline", "\x1b[31m", "héllo ✓", "-t",
		"trailing\\",
	} {
		if _, err := cc.Command(ctx, "set-buffer", "-b", "q", "--", v); err != nil {
			t.Errorf("set-buffer %q: %v", v, err)
			continue
		}
		if _, err := cc.Command(ctx, "save-buffer", "-b", "q", file); err != nil {
			t.Errorf("save-buffer after %q: %v", v, err)
			continue
		}
		got, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != v {
			t.Errorf("buffer holds %q; want %q", got, v)
		}
	}
	if _, err := cc.Command(ctx, "display-message", "-p", "a\x00b"); err == nil {
		t.Error("a NUL byte was accepted; want an error")
	}
}

func TestControlConcurrentCommands(t *testing.T) {
	_, cc, _ := attach(t)
	ctx := ctx10(t)
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			want := fmt.Sprintf("n%d", i)
			out, err := cc.Command(ctx, "display-message", "-p", want)
			if err != nil || out != want+"\n" {
				errs <- fmt.Errorf("command %d: got %q, %v; want %q", i, out, err, want)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestControlOutputIsUnescaped(t *testing.T) {
	_, cc, pane := attach(t)
	ctx := ctx10(t)
	events, stop := cc.Subscribe(256)
	defer stop()
	if _, err := cc.Command(ctx, "send-keys", "-t", pane, `printf "a\tb\001\n"`, "Enter"); err != nil {
		t.Fatal(err)
	}
	// The echo shows the typed backslashes; only printf's output has the
	// raw tab and \001, and the terminal turns its newline into \r\n.
	var seen []byte
	want := []byte("a\tb\x01\r\n")
	next(t, events, func(ev tmux.Event) bool {
		if ev.Kind == tmux.EventOutput && ev.Pane == pane {
			seen = append(seen, ev.Data...)
		}
		return bytes.Contains(seen, want)
	})
}

// ControlWithOutput's function gets the output a pane printed as soon as
// it saw the control client in list-clients, which is before the client's
// attach is answered.
func TestControlWithOutputFromTheFirstByte(t *testing.T) {
	s := tmuxtest.Start(t)
	pane := s.NewSession("ctl", "sh", "-c", `until tmux list-clients -F '#{client_control_mode}' | grep -q 1; do sleep 0.01; done; echo first-byte-marker; exec sleep 3600`)
	var mu sync.Mutex
	var tapped []byte
	got := make(chan struct{})
	cc, err := s.Client.ControlWithOutput(ctx10(t), "=ctl", func(p string, data []byte) {
		mu.Lock()
		defer mu.Unlock()
		if p == pane && !bytes.Contains(tapped, []byte("first-byte-marker\r\n")) {
			tapped = append(tapped, data...)
			if bytes.Contains(tapped, []byte("first-byte-marker\r\n")) {
				close(got)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	select {
	case <-got:
	case <-time.After(10 * time.Second):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("the output function got %q in 10 s; want the marker the pane printed once the client was listed", tapped)
	}
}

// SubscribeNotices leaves out the panes' output, and only that: the
// output goes to OnOutput, the window's notifications to the channel, in
// order behind it.
func TestControlSubscribeNotices(t *testing.T) {
	s, cc, pane := attach(t)
	ctx := ctx10(t)
	var mu sync.Mutex
	var tapped []byte
	cc.OnOutput(func(p string, data []byte) {
		if p == pane {
			mu.Lock()
			tapped = append(tapped, data...)
			mu.Unlock()
		}
	})
	notices, stop := cc.SubscribeNotices(256)
	defer stop()
	all, stopAll := cc.Subscribe(256)
	if _, err := cc.Command(ctx, "send-keys", "-t", pane, "echo notices-marker", "Enter"); err != nil {
		t.Fatal(err)
	}
	var seen []byte
	next(t, all, func(ev tmux.Event) bool {
		if ev.Kind == tmux.EventOutput && ev.Pane == pane {
			seen = append(seen, ev.Data...)
		}
		return bytes.Contains(seen, []byte("notices-marker\r\n"))
	})
	stopAll() // the reader keeps feeding OnOutput with no output subscriber left
	if _, err := cc.Command(ctx, "send-keys", "-t", pane, "echo after-stop", "Enter"); err != nil {
		t.Fatal(err)
	}
	win := strings.TrimSpace(s.Run("new-window", "-d", "-t", "=ctl:", "-P", "-F", "#{window_id}", "sh"))
	next(t, notices, func(ev tmux.Event) bool {
		if ev.Kind == tmux.EventOutput || ev.Kind == tmux.EventExtendedOutput {
			t.Fatalf("SubscribeNotices sent the output of %s", ev.Pane)
		}
		return ev.Kind == tmux.EventWindowAdd && ev.Window == win
	})
	tmuxtest.Eventually(t, 10*time.Second, "the output reaching OnOutput", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return bytes.Contains(tapped, []byte("notices-marker\r\n")) && bytes.Contains(tapped, []byte("after-stop\r\n"))
	}, func() string { mu.Lock(); defer mu.Unlock(); return fmt.Sprintf("OnOutput got %q", tapped) })
}

func TestControlWindowCloseAndExit(t *testing.T) {
	s, cc, _ := attach(t)
	events, stop := cc.Subscribe(256)
	defer stop()
	win := strings.TrimSpace(s.Run("new-window", "-d", "-t", "=ctl:", "-P", "-F", "#{window_id}", "sh"))
	next(t, events, func(ev tmux.Event) bool { return ev.Kind == tmux.EventWindowAdd && ev.Window == win })
	s.Run("kill-window", "-t", win)
	// tmux 3.3a says unlinked-window-close when the killed window is no
	// longer in the client's session by the time it reports it, which is
	// the case for kill-window; window-close when it still is.
	next(t, events, func(ev tmux.Event) bool {
		return (ev.Kind == tmux.EventWindowClose || ev.Kind == tmux.EventUnlinkedWindowClose) && ev.Window == win
	})

	s.Run("kill-session", "-t", cc.Session())
	next(t, events, func(ev tmux.Event) bool { return ev.Kind == tmux.EventExit })
	select {
	case <-cc.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Done not closed after the session was killed")
	}
	err := cc.Err()
	if err == nil || errors.Is(err, tmux.ErrNoServer) || !strings.Contains(err.Error(), "no longer exists") {
		t.Errorf("Err() = %v; want the session gone, the server up", err)
	}
	if _, open := <-events; open {
		t.Error("event channel still open after the connection ended")
	}
}

func TestControlServerKilled(t *testing.T) {
	for _, tc := range []struct {
		why  string
		kill func(s *tmuxtest.Server)
		// tmux shutting down in order may still run a queued command;
		// a killed server runs nothing more.
		pendingMayPass bool
	}{
		{"kill-server", func(s *tmuxtest.Server) { s.Run("kill-server") }, true},
		{"SIGKILL", func(s *tmuxtest.Server) {
			pid, err := strconv.Atoi(strings.TrimSpace(s.Run("display-message", "-p", "#{pid}")))
			if err != nil {
				t.Fatal(err)
			}
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}, false},
	} {
		t.Run(tc.why, func(t *testing.T) {
			s, cc, _ := attach(t)
			ctx := ctx10(t)
			// wait-for holds up the client's command queue, so its command
			// stays pending until the server goes.
			blocked := make(chan error, 1)
			go func() {
				_, err := cc.Command(ctx, "wait-for", "lt-never")
				blocked <- err
			}()
			// A probe that gets no answer was queued behind wait-for: from
			// then on the wait-for command is certainly pending.
			for i := 0; ; i++ {
				pctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
				_, err := cc.Command(pctx, "display-message", "-p", "probe")
				cancel()
				if errors.Is(err, context.DeadlineExceeded) {
					break
				}
				if err != nil || i == 100 {
					t.Fatalf("the queue never blocked behind wait-for: %v", err)
				}
			}
			tc.kill(s)
			select {
			case <-cc.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("Done not closed after the server died")
			}
			if err := cc.Err(); !errors.Is(err, tmux.ErrNoServer) {
				t.Errorf("Err() = %v; want it to match ErrNoServer", err)
			}
			for _, ch := range []chan error{blocked} {
				select {
				case err := <-ch:
					t.Logf("pending command: %v", err)
					if !(tc.pendingMayPass && err == nil) && !errors.Is(err, tmux.ErrNoServer) {
						t.Errorf("pending command: %v; want ErrNoServer", err)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("pending command never returned")
				}
			}
			start := time.Now()
			_, err := cc.Command(ctx, "display-message", "-p", "x")
			if !errors.Is(err, tmux.ErrNoServer) {
				t.Errorf("command after death: %v; want ErrNoServer", err)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("command after death took %v; want it to fail at once", d)
			}
		})
	}
}

// controlChildren lists tmux processes whose parent is this test process.
func controlChildren(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	me := strconv.Itoa(os.Getpid())
	for _, f := range dirs {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // gone meanwhile
		}
		s := string(b)
		comm := s[strings.IndexByte(s, '(')+1 : strings.LastIndexByte(s, ')')]
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) > 1 && fields[1] == me && strings.HasPrefix(comm, "tmux") {
			out = append(out, f+" "+fields[0])
		}
	}
	return out
}

func TestControlCloseLeavesNothing(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	s := tmuxtest.Start(t)
	s.NewSession("ctl", "sh")
	ctx := ctx10(t)
	before := runtime.NumGoroutine()
	cc, err := s.Client.Control(ctx, "=ctl")
	if err != nil {
		t.Fatal(err)
	}
	events, _ := cc.Subscribe(4)
	if _, err := cc.Command(ctx, "display-message", "-p", "x"); err != nil {
		t.Fatal(err)
	}
	if len(controlChildren(t)) == 0 {
		t.Fatal("no tmux child found while attached; the check below would prove nothing")
	}
	if err := cc.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-cc.Done():
	default:
		t.Fatal("Close returned before Done closed")
	}
	if !errors.Is(cc.Err(), tmux.ErrControlClosed) {
		t.Errorf("Err() = %v; want ErrControlClosed", cc.Err())
	}
	if kids := controlChildren(t); len(kids) != 0 {
		t.Errorf("tmux children left after Close: %v", kids)
	}
	for range events {
	}
	if _, err := cc.Command(ctx, "display-message", "-p", "x"); !errors.Is(err, tmux.ErrControlClosed) {
		t.Errorf("command after Close: %v; want ErrControlClosed", err)
	}
	if err := cc.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	tmuxtest.Eventually(t, 5*time.Second, fmt.Sprintf("the goroutines after Close back to the %d before", before), func() bool {
		return runtime.NumGoroutine() <= before
	}, func() string {
		buf := make([]byte, 1<<16)
		return fmt.Sprintf("%d now:\n%s", runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
	})
	if clients := s.Run("list-clients", "-F", "#{client_control_mode}"); strings.Contains(clients, "1") {
		t.Errorf("list-clients still shows a control client: %q", clients)
	}
}

func TestControlSlowSubscriberLosesEventsVisibly(t *testing.T) {
	_, cc, _ := attach(t)
	ctx := ctx10(t)
	events, stop := cc.Subscribe(1)
	defer stop()
	for range 4 {
		if _, err := cc.Command(ctx, "new-window", "-d", "sh"); err != nil {
			t.Fatal(err)
		}
	}
	// The reader publishes in stream order, so the notifications of the
	// windows were handed out before this answer arrived.
	if _, err := cc.Command(ctx, "display-message", "-p", "sync"); err != nil {
		t.Fatal(err)
	}
	var kinds []tmux.EventKind
	lost := 0
	for len(events) > 0 {
		ev := <-events
		kinds = append(kinds, ev.Kind)
		lost += ev.Lost
	}
	if len(kinds) > 2 || len(kinds) == 0 || kinds[len(kinds)-1] != tmux.EventLost || lost == 0 {
		t.Errorf("queued %v (lost %d); want at most one event and then a lost marker", kinds, lost)
	}
	// The reader did not wait for us: commands kept their pace above.
}

func TestControlSubscribeFormat(t *testing.T) {
	_, cc, pane := attach(t)
	ctx := ctx10(t)
	events, stop := cc.Subscribe(256)
	defer stop()
	if err := cc.SubscribeFormat(ctx, "cmd", "%*", "#{pane_id}:#{pane_current_command}"); err != nil {
		t.Fatal(err)
	}
	ev := next(t, events, func(ev tmux.Event) bool {
		return ev.Kind == tmux.EventSubscriptionChanged && ev.Name == "cmd" && ev.Pane == pane
	})
	if !strings.HasPrefix(ev.Value, pane+":") {
		t.Errorf("subscription value %q; want it to start with %s:", ev.Value, pane)
	}
	if err := cc.SubscribeFormat(ctx, "bad:name", "", "x"); err == nil {
		t.Error("a name with ':' was accepted")
	}
	if err := cc.NoOutput(ctx); err != nil {
		t.Error(err)
	}
}

func TestControlAttach(t *testing.T) {
	s := tmuxtest.Start(t)
	first := s.NewSession("ctl", "sh")
	second := strings.TrimSpace(s.Run("split-window", "-d", "-t", first, "-P", "-F", "#{pane_id}", "sh"))
	ctx := ctx10(t)

	// A pane target attaches to its session without selecting the pane.
	cc, err := s.Client.Control(ctx, second)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	if active := strings.TrimSpace(s.Run("display-message", "-p", "-t", "=ctl:", "#{pane_id}")); active != first {
		t.Errorf("active pane is %s after attaching to %s; want %s unchanged", active, second, first)
	}
	if !strings.HasPrefix(cc.Session(), "$") {
		t.Errorf("Session() = %q; want an id", cc.Session())
	}

	for _, tc := range []struct {
		why, target, want string
	}{
		{"a missing session", "=nosuch", "can't find session"},
		{"a missing pane", "%999", "no pane or window %999"},
		{"not a target form", "ctl", "is not a session id"},
		{"a name that would select a window", "=ctl:1", "contains ':'"},
	} {
		_, err := s.Client.Control(ctx, tc.target)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Control(%q) = %v; want an error saying %q", tc.why, tc.target, err, tc.want)
		}
	}
}

func TestControlNoServer(t *testing.T) {
	s := tmuxtest.Start(t)
	s.Run("kill-server")
	_, err := s.Client.Control(ctx10(t), "$0")
	if !errors.Is(err, tmux.ErrNoServer) {
		t.Errorf("Control on a dead server: %v; want ErrNoServer", err)
	}
	// -N: attaching must not have started a server.
	if _, err := s.Client.Run(ctx10(t), "has-session"); !errors.Is(err, tmux.ErrNoServer) {
		t.Errorf("a server runs after a failed attach: %v", err)
	}
}

// TestControlServerDiesWhileAttaching: a server that is going away as the
// client connects (kill-server has answered, the socket is still there)
// makes tmux -C print "%exit server exited unexpectedly" on stdout, exit 1
// and say nothing on stderr. A stand-in tmux answers exactly that, so the
// race the real test above only sometimes hits is tried every time.
func TestControlServerDiesWhileAttaching(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "tmux")
	script := "#!/bin/sh\nprintf '%%exit server exited unexpectedly\\n'\nexit 1\n"
	tmuxtest.WriteExecutable(t, bin, script)
	c, err := tmux.NewClient(tmux.Route{Bin: bin, SocketPath: "/nonexistent/s"}, tmux.DefaultTimeout)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Control(ctx10(t), "$0"); !errors.Is(err, tmux.ErrNoServer) {
		t.Errorf("Control as the server dies: %v; want ErrNoServer", err)
	}
}

func BenchmarkControlRoundTrip(b *testing.B) {
	_, cc, pane := attach(b)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		if _, err := cc.Command(ctx, "display-message", "-p", "-t", pane, "#{pane_id}"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkProcessRoundTrip(b *testing.B) {
	s := tmuxtest.Start(b)
	pane := s.NewSession("ctl", "sh")
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.Client.Run(ctx, "display-message", "-p", "-t", pane, "#{pane_id}"); err != nil {
			b.Fatal(err)
		}
	}
}

func TestControlCloseWithABlockedQueue(t *testing.T) {
	_, cc, _ := attach(t)
	ctx := ctx10(t)
	blocked := make(chan error, 1)
	go func() {
		_, err := cc.Command(ctx, "wait-for", "lt-never")
		blocked <- err
	}()
	// Once a probe goes unanswered, wait-for is certainly pending.
	for i := 0; ; i++ {
		pctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		_, err := cc.Command(pctx, "display-message", "-p", "probe")
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			break
		}
		if err != nil || i == 100 {
			t.Fatalf("the queue never blocked behind wait-for: %v", err)
		}
	}
	start := time.Now()
	cc.Close()
	t.Logf("Close took %v", time.Since(start))
	select {
	case err := <-blocked:
		if !errors.Is(err, tmux.ErrControlClosed) {
			t.Errorf("pending command: %v; want ErrControlClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("pending command never returned")
	}
	if kids := controlChildren(t); len(kids) != 0 {
		t.Errorf("tmux children left after Close: %v", kids)
	}
}

// OnOutput sees every byte a pane prints, in order, and a command list's
// mark sees exactly the output tmux had read before the list ran: a pane
// that prints a numbered line and then waits, answered by the list, is
// marked after that line and before the next.
func TestControlOnOutputAndMark(t *testing.T) {
	s, cc, pane := attach(t)
	ctx := ctx10(t)
	var mu sync.Mutex
	var got []byte
	cc.OnOutput(func(p string, data []byte) {
		if p == pane {
			mu.Lock()
			got = append(got, data...)
			mu.Unlock()
		}
	})
	s.Run("send-keys", "-t", pane, "-l", "seq 1 3000; echo done-$((1+1))")
	s.Run("send-keys", "-t", pane, "Enter")
	s.WaitFor(pane, func(screen string) bool { return strings.Contains(screen, "done-2") })
	var atMark string
	out, err := cc.CommandList(ctx, func(out string) {
		mu.Lock()
		atMark = string(got)
		mu.Unlock()
	}, []string{"display-message", "-p", "-t", pane, "#{pane_id}"}, []string{"capture-pane", "-p", "-t", pane})
	if err != nil || !strings.Contains(out, pane+"\n") || !strings.Contains(out, "done-2") {
		t.Fatalf("CommandList: %q, %v", out, err)
	}
	// The screen showed done-2, so the mark has seen it, and all 3,000.
	// The first line may follow the shell's prompt: the keys can arrive
	// before the prompt is drawn, and the terminal echoes them first.
	for _, want := range []string{"1\r\n2\r\n3\r\n", "\r\n2999\r\n3000\r\n", "done-2"} {
		if !strings.Contains(atMark, want) {
			t.Errorf("at the mark, %d bytes of output without %q; they begin %q and end %q", len(atMark), want, atMark[:min(len(atMark), 200)], atMark[max(len(atMark)-200, 0):])
		}
	}
}
