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
	"github.com/libtmux/libtmux-mcp/enroll"
	"github.com/libtmux/libtmux-mcp/tmux"
)

// Config is what a Broker needs.
type Config struct {
	Client      *tmux.Client
	Server      tmux.ServerInfo // the server the enrollments belong to
	Registry    *enroll.Registry
	ShellAnswer time.Duration // how long a shell has to answer RUN
	RunTimeout  time.Duration // ceiling of one run
	Log         *slog.Logger
	// Peer reads a connection's credentials; peercred.FromConn by default.
	Peer func(*net.UnixConn) (peercred.Peer, error)
}

// Broker serves enrolled shells and their helpers.
type Broker struct {
	cfg    Config
	dir    string
	sock   string
	ln     *net.UnixListener
	uid    int
	bootID string
	server tmux.ServerInfo // the server the enrollments belong to

	mu     sync.Mutex
	shells map[string]*shell // by pane
	runs   map[string]*run   // by run id, while waiting for SPAWN
	busy   map[string]bool   // panes with a run in flight
	wg     sync.WaitGroup    // connection goroutines
	runWG  sync.WaitGroup    // runs in flight
	closed bool
}

// New makes a private 0700 directory holding the broker's socket and
// listens on it. Serve accepts; Close removes everything New made.
func New(ctx context.Context, cfg Config) (*Broker, error) {
	if cfg.Peer == nil {
		cfg.Peer = peercred.FromConn
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	boot, err := peercred.BootID()
	if err != nil {
		return nil, fmt.Errorf("tmux_run: %w", err)
	}
	dir, err := os.MkdirTemp("", "libtmux-mcp-broker-")
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	sock := filepath.Join(dir, "broker.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("listen on the broker socket: %w", err)
	}
	ln.SetUnlinkOnClose(true)
	return &Broker{
		cfg: cfg, dir: dir, sock: sock, ln: ln, uid: os.Getuid(), bootID: boot, server: cfg.Server,
		shells: map[string]*shell{}, runs: map[string]*run{}, busy: map[string]bool{},
	}, nil
}

// SetRegistry gives the broker the invitations it accepts shells against;
// it is set once, before Serve.
func (b *Broker) SetRegistry(r *enroll.Registry) { b.cfg.Registry = r }

// SocketPath is the socket setup files connect to.
func (b *Broker) SocketPath() string { return b.sock }

// Serve accepts connections until ctx ends or Close is called.
func (b *Broker) Serve(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { b.ln.Close() })
	defer stop()
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
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			b.handle(conn)
		}()
	}
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
	err := b.ln.Close()
	b.runWG.Wait()
	for _, sh := range shells {
		sh.close()
	}
	b.wg.Wait()
	os.RemoveAll(b.dir)
	return err
}

// handle reads the first line of a connection whose peer passed the
// credential check and routes it.
func (b *Broker) handle(conn *net.UnixConn) {
	peer, err := b.cfg.Peer(conn)
	if err != nil {
		b.cfg.Log.Warn("broker peer credentials", slog.Any("err", err))
		conn.Close()
		return
	}
	if int(peer.UID) != b.uid {
		peer.Close()
		fmt.Fprintf(conn, "NO %s\n", enroll.ReasonWrongUID)
		conn.Close()
		return
	}
	r := bufio.NewReaderSize(conn, 4096)
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := readLine(r)
	conn.SetReadDeadline(time.Time{})
	if err != nil {
		peer.Close()
		conn.Close()
		return
	}
	// $TMUX, the last HELLO field, holds a socket path that may contain
	// spaces, so HELLO splits into at most six fields.
	f := strings.SplitN(line, " ", 6)
	switch {
	case len(f) == 6 && f[0] == "HELLO" && f[1] == "1":
		b.hello(conn, r, peer, f)
	case len(f) == 5 && f[0] == "HELLO" && f[1] == "1":
		b.hello(conn, r, peer, append(f, "")) // $TMUX empty
	case len(f) == 3 && f[0] == "SPAWN":
		b.spawn(conn, r, peer, f[1], f[2])
	default:
		peer.Close()
		fmt.Fprintf(conn, "ERR bad-request\n")
		conn.Close()
	}
}

// hello enrolls a shell or refuses it with one word.
func (b *Broker) hello(conn *net.UnixConn, r *bufio.Reader, peer peercred.Peer, f []string) {
	shellPID, _ := strconv.Atoi(f[3])
	gen := peercred.ProcessGeneration(b.bootID, peer.PID, peer.StartTime)
	e, reason := b.cfg.Registry.Accept(enroll.Hello{
		Token: f[2], ShellPID: shellPID, Pane: f[4], TMUX: f[5], PeerPID: peer.PID, ProcessGeneration: gen,
	}, enroll.Checks{SameServer: b.sameServer, PanePID: b.panePID})
	if e == nil {
		peer.Close()
		fmt.Fprintf(conn, "NO %s\n", reason)
		conn.Close()
		b.cfg.Log.Info("tmux_run enrollment refused", slog.String("pane", f[4]), slog.String("reason", reason))
		return
	}
	sh := &shell{e: e, conn: conn, r: r, peer: peer, replies: make(chan string, 8), done: make(chan struct{})}
	b.mu.Lock()
	old := b.shells[e.Pane]
	b.shells[e.Pane] = sh
	b.mu.Unlock()
	if old != nil {
		old.close()
	}
	if _, err := fmt.Fprintf(conn, "OK %s\n", e.ID); err != nil {
		b.lose(sh, "cannot answer the shell")
		return
	}
	b.cfg.Log.Info("tmux_run pane enrolled", slog.String("pane", e.Pane), slog.Int("pid", peer.PID))
	b.wg.Add(2)
	go func() { defer b.wg.Done(); b.readShell(sh) }()
	go func() { defer b.wg.Done(); b.watchShell(sh) }()
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
