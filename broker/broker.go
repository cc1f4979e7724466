package broker

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/libtmux/libtmux-mcp/broker/peercred"
	"github.com/libtmux/libtmux-mcp/broker/privfile"
	"github.com/libtmux/libtmux-mcp/enroll"
	"github.com/libtmux/libtmux-mcp/internal/panerecord"
	"github.com/libtmux/libtmux-mcp/tmux"
)

// Config is what a Broker needs; New fills what it leaves zero.
type Config struct {
	Client   *tmux.Client
	Server   tmux.ServerInfo  // the server the enrollments belong to
	Registry *enroll.Registry // required: the invitations shells are accepted against
	Limits
	Log *slog.Logger
	// Peer reads a connection's credentials; peercred.FromConn by default.
	Peer func(*net.UnixConn) (peercred.Peer, error)
}

// Limits bound how long the broker waits, as the operator may set them;
// zero values are the defaults (filled by Limits.withDefaults, in New).
type Limits struct {
	ShellAnswer time.Duration // how long a shell has to answer RUN; DefaultShellAnswer when 0
	RunTimeout  time.Duration // ceiling of one run; DefaultRunTimeout when 0
	// BackgroundTimeout is the ceiling of one background run; DefaultBackgroundTimeout when 0.
	BackgroundTimeout time.Duration
	// MaxBackground is how many background runs may be in flight; DefaultMaxBackground when 0.
	MaxBackground int
	// BackgroundOutput is how many bytes of each stream a background run keeps;
	// DefaultBackgroundOutput when 0.
	BackgroundOutput int
}

func (l Limits) withDefaults() Limits {
	if l.ShellAnswer <= 0 {
		l.ShellAnswer = DefaultShellAnswer
	}
	if l.RunTimeout <= 0 {
		l.RunTimeout = DefaultRunTimeout
	}
	if l.BackgroundTimeout <= 0 {
		l.BackgroundTimeout = DefaultBackgroundTimeout
	}
	if l.MaxBackground <= 0 {
		l.MaxBackground = DefaultMaxBackground
	}
	if l.BackgroundOutput <= 0 {
		l.BackgroundOutput = DefaultBackgroundOutput
	}
	return l
}

// Listener is the broker's socket, in a private 0700 directory of its own.
type Listener struct {
	dir, sock string
	ln        *net.UnixListener
	lock      *os.File // dir/lock, locked while this process lives
	once      sync.Once
	err       error
}

// dirPrefix names every broker directory; lockName is the file in it whose lock says that a
// live process owns it.
const (
	dirPrefix = "libtmux-mcp-broker-"
	lockName  = "lock"
)

// Listen makes a private 0700 directory and listens on a socket in it. Setup files can be
// written with its Path (or in its Dir) before the broker exists; Close removes the directory.
//
// The directory is made under $XDG_RUNTIME_DIR when that is a private directory of this user,
// else under the temporary directory. First, broker directories there that a process of this
// user left behind when it died are removed (see sweep).
func Listen() (*Listener, error) {
	base := privfile.PrivateBase()
	sweep(base)
	dir, err := os.MkdirTemp(base, dirPrefix)
	if err != nil {
		return nil, fmt.Errorf("tmux_run: make the broker directory: %w", err)
	}
	fail := func(err error) (*Listener, error) {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("tmux_run: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fail(err)
	}
	// The lock is taken before its file has its name, so a sweep never finds the name unlocked
	// while this process lives.
	lock, err := privfile.OpenNoFollow(filepath.Join(dir, lockName+".new"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fail(err)
	}
	if ok, err := privfile.TryLock(lock); !ok {
		lock.Close()
		if err == nil {
			err = errors.New("the broker directory's new lock is held by another process")
		}
		return fail(err)
	}
	if err := os.Rename(lock.Name(), filepath.Join(dir, lockName)); err != nil {
		lock.Close()
		return fail(err)
	}
	sock := filepath.Join(dir, "broker.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		lock.Close()
		return fail(fmt.Errorf("listen on the broker socket: %w", err))
	}
	ln.SetUnlinkOnClose(true)
	// Every accepted connection reports each write's process from its first byte on.
	if err := peercred.PassCred(ln); err != nil {
		ln.Close()
		lock.Close()
		return fail(err)
	}
	return &Listener{dir: dir, sock: sock, ln: ln, lock: lock}, nil
}

// sweep removes the broker directories in base that a process of this user left when it died
// (SIGKILL leaves no time to remove them). A directory is removed only when all of these hold:
// its name starts with dirPrefix; it is a real directory (not a symlink), owned by this user,
// mode 0700; it holds a lock file (made by Listen); and no process holds that file's lock, which
// the kernel releases when its owner exits. Anything else, another user's above all, is left
// alone.
func sweep(base string) {
	entries, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), dirPrefix) {
			continue
		}
		dir := filepath.Join(base, e.Name())
		fi, err := os.Lstat(dir)
		if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 || !privfile.OwnedByUs(fi) {
			continue
		}
		lock, err := privfile.OpenNoFollow(filepath.Join(dir, lockName), os.O_RDONLY, 0)
		if err != nil {
			continue
		}
		if lfi, err := lock.Stat(); err == nil && lfi.Mode().IsRegular() && privfile.OwnedByUs(lfi) {
			if ok, _ := privfile.TryLock(lock); ok {
				os.RemoveAll(dir)
			}
		}
		lock.Close()
	}
}

// LiveDirs returns the broker directories of this user's live processes, wherever Listen may
// have made them ($XDG_RUNTIME_DIR, the temporary directory, /tmp): real directories owned by
// this user, mode 0700, whose lock file a live process holds. libtmux-mcp enroll finds its
// servers there.
func LiveDirs() []string {
	var dirs []string
	seen := map[string]bool{}
	for _, base := range []string{privfile.PrivateBase(), os.TempDir(), "/tmp"} {
		if seen[base] {
			continue
		}
		seen[base] = true
		entries, err := os.ReadDir(base)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), dirPrefix) {
				continue
			}
			dir := filepath.Join(base, e.Name())
			if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 || !privfile.OwnedByUs(fi) {
				continue
			}
			lock, err := privfile.OpenNoFollow(filepath.Join(dir, lockName), os.O_RDONLY, 0)
			if err != nil {
				continue
			}
			if ok, err := privfile.TryLock(lock); !ok && err == nil {
				dirs = append(dirs, dir) // held: its process lives
			}
			lock.Close()
		}
	}
	return dirs
}

// Path is the socket setup files connect to.
func (l *Listener) Path() string { return l.sock }

// Dir is the listener's private directory (0700, removed by Close).
func (l *Listener) Dir() string { return l.dir }

// Close stops listening and removes the directory with everything in it.
func (l *Listener) Close() error {
	l.once.Do(func() {
		if err := l.ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			l.err = err // closed already is what Broker.Close and Serve's end do first
		}
		if err := os.RemoveAll(l.dir); err != nil && l.err == nil {
			l.err = err
		}
		l.lock.Close()
	})
	return l.err
}

// Broker serves enrolled shells and their helpers.
type Broker struct {
	cfg    Config
	l      *Listener
	sock   string
	ln     *net.UnixListener
	uid    int
	bootID string
	server tmux.ServerInfo // the server the enrollments belong to
	// serverSock is the server's socket as it was at creation; nil disables the fast path.
	serverSock os.FileInfo
	// claims is the server's pane claims, shared with every libtmux-mcp process (a foreground
	// run holds its pane's); nil when they cannot be kept (the run's pane is then held in this
	// broker only).
	claims *panerecord.Set

	stamps stamper

	markMu sync.Mutex // serializes mark
	mu     sync.Mutex
	shells map[string]*shell // by pane
	// shellSet is closed, and replaced, each time hello puts a shell in shells (awaitShell).
	shellSet chan struct{}
	runs     map[string]*run        // by run id, while waiting for the shell's STATE (and SPAWN)
	busy     map[string]bool        // panes with a run in flight
	history  map[string][]RunRecord // by pane: the last MaxHistory runs
	wg       sync.WaitGroup         // connection goroutines
	runWG    sync.WaitGroup         // runs in flight
	closed   bool

	background map[string]*Background // by handle: background runs in flight and kept after
	bgRunning  int                    // background runs in flight, or being started
	bgWG       sync.WaitGroup         // background runs' followers
	// keepFinished is how long a finished background run is kept: KeepFinished (tests shorten it).
	keepFinished time.Duration
	onForget     func(handle string) // tests: called once a run's files are removed
}

// New makes a broker that serves on ln, which it then owns: Close closes it. cfg.Registry is
// required. Serve accepts.
func New(ln *Listener, cfg Config) (*Broker, error) {
	if cfg.Registry == nil {
		return nil, errors.New("tmux_run: broker.New needs a registry")
	}
	if cfg.Peer == nil {
		cfg.Peer = peercred.FromConn
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	cfg.Limits = cfg.Limits.withDefaults()
	boot, err := peercred.BootID()
	if err != nil {
		return nil, fmt.Errorf("tmux_run: %w", err)
	}
	b := &Broker{
		cfg: cfg, l: ln, sock: ln.sock, ln: ln.ln, uid: os.Getuid(), bootID: boot, server: cfg.Server,
		shells: map[string]*shell{}, shellSet: make(chan struct{}), runs: map[string]*run{}, busy: map[string]bool{},
		history: map[string][]RunRecord{}, background: map[string]*Background{}, keepFinished: KeepFinished,
	}
	if cfg.Server.SocketPath != "" {
		b.serverSock, _ = os.Stat(cfg.Server.SocketPath)
		if b.claims, err = panerecord.For(cfg.Server.SocketPath, cfg.Server.PID); err != nil {
			cfg.Log.Warn("tmux_run: pane claims are kept by this process alone", "err", err)
		}
	}
	b.stamps.init()
	return b, nil
}

// Serve accepts connections until ctx ends or Close is called.
func (b *Broker) Serve(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { b.ln.Close() })
	defer stop()
	if !b.track(func() { b.stampLoop(ctx) }) {
		return nil // closed before it served
	}
	// Connections are numbered in the order they were accepted, which is the order the
	// shells connected in (the listener's queue is first in, first out).
	var accepted uint64
	for {
		conn, err := b.ln.AcceptUnix()
		if err != nil {
			if ctx.Err() != nil || b.isClosed() {
				return ctx.Err()
			}
			if _, serr := os.Stat(b.sock); serr != nil {
				b.cfg.Log.Error("tmux_run broker socket is gone; enrolled shells cannot start runs", slog.String("socket", b.sock), slog.Any("err", serr))
				return fmt.Errorf("broker socket %s is gone: %w", b.sock, serr)
			}
			b.cfg.Log.Warn("broker accept", slog.Any("err", err))
			continue
		}
		if _, serr := os.Stat(b.sock); serr != nil {
			b.cfg.Log.Error("tmux_run broker socket was removed; new runs will answer spawn_failed", slog.String("socket", b.sock))
		}
		accepted++
		n := accepted
		if !b.track(func() { b.handle(conn, n) }) {
			conn.Close() // accepted as Close began
		}
	}
}

// track runs fn in a goroutine that Close waits for, and reports true; once Close has begun it
// runs nothing and reports false. The check and the count are one step under b.mu, which Close
// takes to mark the broker closed before it waits: a goroutine is either counted before that
// wait or never started (Serve's own goroutine is not counted, so without this its count could
// race with the wait).
func (b *Broker) track(fn func()) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		fn()
	}()
	return true
}

func (b *Broker) isClosed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.closed
}

// Close stops accepting, closes every shell connection and removes the
// broker's directory. Runs in flight see their helper connection close and
// stop their scripts.
func (b *Broker) Close() error {
	b.mu.Lock()
	b.closed = true
	shells := b.shells
	b.shells = map[string]*shell{}
	b.mu.Unlock()
	var err error
	if cerr := b.ln.Close(); cerr != nil && !errors.Is(cerr, net.ErrClosed) {
		err = cerr // Serve closes it when its context ends
	}
	b.runWG.Wait()
	b.stopBackground()
	for _, sh := range shells {
		sh.close()
	}
	for pane := range shells {
		b.mark(pane)
	}
	b.stopStamps()
	b.wg.Wait()
	if cerr := b.l.Close(); err == nil {
		err = cerr
	}
	return err
}

// handle reads the first line of a connection whose peer passed the
// credential check and routes it; n is its place in the order of accepting.
func (b *Broker) handle(conn *net.UnixConn, n uint64) {
	peer, err := b.cfg.Peer(conn)
	if err != nil {
		b.cfg.Log.Warn("broker peer credentials", slog.Any("err", err))
		conn.Close()
		return
	}
	if int(peer.UID) != b.uid {
		peer.Close()
		fmt.Fprintf(conn, "%s %s\n", WordNo, enroll.ReasonWrongUID)
		conn.Close()
		return
	}
	src := newOnlyFrom(conn, peer.PID)
	r := bufio.NewReaderSize(src, 4096)
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := readLine(r)
	conn.SetReadDeadline(time.Time{})
	if err != nil {
		b.logForeign(err, "")
		peer.Close()
		conn.Close()
		return
	}
	// $TMUX, the last HELLO field, holds a socket path that may contain
	// spaces, so HELLO splits into at most six fields.
	f := strings.SplitN(line, " ", 6)
	switch {
	case len(f) == 6 && f[0] == WordHello && f[1] == "1":
		b.hello(conn, r, peer, f)
	case len(f) == 5 && f[0] == WordHello && f[1] == "1":
		b.hello(conn, r, peer, append(f, "")) // $TMUX empty
	case len(f) == 2 && f[0] == WordAttach:
		b.attach(conn, r, peer, f[1], n)
	case len(f) == 3 && f[0] == WordSpawn:
		b.spawn(conn, r, src, peer, f[1], f[2])
	case len(f) == 4 && f[0] == WordState:
		b.state(conn, r, peer, f[1], f[2], f[3])
	case len(f) == 2 && f[0] == WordBye:
		peer.Close()
		if sh := b.shellByID(f[1]); sh != nil && b.isEnrolledProcess(sh.e, peer) {
			b.lose(sh, "unenrolled")
		}
		conn.Close() // after: the shell waits for this EOF before it closes its liveness FIFO
	default:
		peer.Close()
		fmt.Fprintf(conn, "%s %s\n", WordErr, ErrBadRequest)
		conn.Close()
	}
}

// isEnrolledProcess reports whether peer is the very process enrolled as e: same pid, same
// process generation (so not a later process that reused the pid).
func (b *Broker) isEnrolledProcess(e *enroll.Enrollment, peer peercred.Peer) bool {
	return !e.Lost() && peer.PID == e.PID && peercred.ProcessGeneration(b.bootID, peer.PID, peer.StartTime) == e.ProcessGeneration
}

// hello enrolls a shell or refuses it with one word.
func (b *Broker) hello(conn *net.UnixConn, r *bufio.Reader, peer peercred.Peer, f []string) {
	shellPID, _ := strconv.Atoi(f[3])
	gen := peercred.ProcessGeneration(b.bootID, peer.PID, peer.StartTime)
	// tmux is asked before the registry is locked: list_panes never waits behind tmux.
	facts := enroll.Facts{SameServer: b.sameServer(f[5])}
	if tmux.ValidPaneID(f[4]) {
		facts.PanePID, _ = b.panePID(f[4])
	}
	e, reason := b.cfg.Registry.Accept(enroll.Hello{
		Token: f[2], ShellPID: shellPID, Pane: f[4], TMUX: f[5], PeerPID: peer.PID, ProcessGeneration: gen,
	}, facts)
	if e == nil {
		peer.Close()
		fmt.Fprintf(conn, "%s %s\n", WordNo, reason)
		conn.Close()
		b.cfg.Log.Info("tmux_run enrollment refused", slog.String("pane", f[4]), slog.String("reason", reason))
		return
	}
	sh := &shell{e: e, peer: peer, live: -1, done: make(chan struct{}), attached: make(chan struct{})}
	if st, err := peercred.ReadStat(peer.PID); err == nil {
		sh.image = st.StartStack
		if st.PPID == b.server.PID {
			sh.tty = st.TTY // 0 (no fast path) if the shell is not the server's child
		}
	}
	// The liveness FIFO exists before OK, so the shell can open it at once.
	sh.livePath = filepath.Join(b.l.dir, livePrefix+e.ID)
	if fd, err := privfile.OpenFIFO(sh.livePath); err == nil {
		sh.live = fd
	} else {
		b.cfg.Log.Warn("tmux_run liveness FIFO", slog.Any("err", err))
	}
	b.mu.Lock()
	old := b.shells[e.Pane]
	b.shells[e.Pane] = sh
	close(b.shellSet)
	b.shellSet = make(chan struct{})
	b.mu.Unlock()
	if old != nil {
		b.lose(old, "replaced by a new enrollment")
	}
	b.wg.Add(1)
	go func() { defer b.wg.Done(); b.watchShell(sh) }()
	if sh.live >= 0 {
		b.wg.Add(1)
		go func() { defer b.wg.Done(); b.watchLive(sh) }()
	}
	// The HELLO connection ends with OK: the shell closes it too, before `source FILE` returns,
	// so nothing started on the same command line inherits it. Runs are asked on the
	// connection its next prompt attaches.
	_, err := fmt.Fprintf(conn, "%s %s\n", WordOK, e.ID)
	conn.Close()
	if err != nil {
		b.lose(sh, "cannot answer the shell")
		return
	}
	b.mark(e.Pane)
	b.cfg.Log.Info("tmux_run pane enrolled", slog.String("pane", e.Pane), slog.Int("pid", peer.PID))
}

// attach makes a connection the enrolled shell opened for its new prompt the one runs are asked
// on (n: its place in the order of accepting). Anything else is closed, which tells a shell
// whose enrollment ended to forget it.
func (b *Broker) attach(conn *net.UnixConn, r *bufio.Reader, peer peercred.Peer, eid string, n uint64) {
	peer.Close()
	sh := b.shellByID(eid)
	if sh == nil || !b.isEnrolledProcess(sh.e, peer) {
		b.cfg.Log.Info("tmux_run refused a prompt connection: no such live enrollment from this process", slog.Int("pid", peer.PID))
		conn.Close()
		return
	}
	p := newPrompt(conn, r)
	switch sh.attach(p, n) {
	case attachLost:
		conn.Close()
		return
	case attachStale:
		// Connections are handled side by side, so an earlier prompt's ATTACH (a connection
		// the shell has closed since) can be read after the current prompt's. Taking it would
		// close the current one, and the shell, seeing its connection hang up, would end its
		// enrollment.
		b.cfg.Log.Info("tmux_run refused a prompt connection older than the one attached", slog.String("pane", sh.e.Pane))
		conn.Close()
		return
	}
	b.wg.Add(1)
	go func() { defer b.wg.Done(); b.readPrompt(sh, p) }()
}

// logForeign logs err if it says a process other than the one that connected wrote on the
// connection (pane is empty when not yet known).
func (b *Broker) logForeign(err error, pane string) {
	var fe *foreignWriterError
	if errors.As(err, &fe) {
		b.cfg.Log.Warn("tmux_run refused bytes from a process that is not the enrolled shell", slog.String("pane", pane), slog.Int("writer", fe.pid), slog.Int("shell", fe.want))
	}
}

// sameServer reports whether a $TMUX value (socket,pid,session) names the
// server the broker serves.
func (b *Broker) sameServer(tmuxEnv string) bool {
	env, ok := tmux.ParseTMUX(tmuxEnv)
	return ok && env.Names(b.server)
}

// panePID reads #{pane_pid} of pane.
func (b *Broker) panePID(pane string) (int, error) {
	p, _, err := b.pane(context.Background(), pane)
	if err != nil {
		return 0, err
	}
	return p.PID, nil
}

// errNoPane means tmux does not know the pane.
var errNoPane = errors.New("no such pane")

// pane reads one pane and the server's current generation in one call.
func (b *Broker) pane(ctx context.Context, pane string) (tmux.Pane, string, error) {
	snap, err := b.cfg.Client.Snapshot(ctx, tmux.Want{Panes: true, Scope: tmux.PaneScope{PaneID: pane}})
	if err != nil {
		if errors.Is(err, tmux.ErrNotFound) {
			return tmux.Pane{}, "", errNoPane
		}
		return tmux.Pane{}, "", err
	}
	for _, p := range snap.Panes {
		if p.ID == pane {
			return p, snap.Server.Generation, nil
		}
	}
	return tmux.Pane{}, snap.Server.Generation, errNoPane
}

// readLine reads one \n-terminated line of at most 4096 bytes.
func readLine(r *bufio.Reader) (string, error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(string(line), "\n"), nil
}
