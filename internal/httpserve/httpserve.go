// Package httpserve serves an MCP server over Streamable HTTP, for local
// clients only: it listens on loopback addresses and nothing else, every
// request must carry the bearer token, and a request whose Host or Origin
// names anything but a loopback host is refused (DNS-rebinding protection,
// on top of go-sdk's own Host check).
//
// It answers as the stdio transport does: every request body is checked by
// package frame before go-sdk reads it (size, ids, envelope) and refused
// with the same JSON-RPC errors, as are unknown methods and notifications
// sent with an id. A call refused for its arguments (Options.Screen) is
// answered with the tool's own error, its params never handed to go-sdk;
// go-sdk still checks the request first, as it checks every POST (a ping
// with the call's id goes in its place), and refuses it the same way; that
// ping also counts as the session's activity. It bounds what clients hold:
// idle sessions are closed, live ones capped, requests must arrive within
// ReadTimeout, and at shutdown the calls in flight are answered before
// connections close.
//
// It does not do TLS, OAuth or remote access: a token that leaks gives the
// tmux surface to any local process that reads it, so it is printed only to
// the operator's stderr.
package httpserve

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/frame"
	"github.com/libtmux/libtmux-mcp/internal/loopback"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Path is where the MCP endpoint is served.
const Path = "/mcp"

// shutdownGrace bounds how long the calls in flight may take to answer
// when the server stops; then connections are closed.
const shutdownGrace = 5 * time.Second

// Listen checks addr with loopback.CheckAddr and listens on it; localhost listens
// on 127.0.0.1.
func Listen(addr string) (net.Listener, error) {
	if err := loopback.CheckAddr(addr); err != nil {
		return nil, err
	}
	host, port, _ := net.SplitHostPort(addr)
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") {
		addr = net.JoinHostPort("127.0.0.1", port)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return ln, nil
}

// NewToken returns a fresh random token: 32 hex digits (128 bits).
func NewToken() string {
	b := make([]byte, 16)
	rand.Read(b) // never fails (crypto/rand panics rather than return an error)
	return hex.EncodeToString(b)
}

// Limits of the HTTP transport.
const (
	// DefaultSessionIdle is how long a session may go without a request
	// before it is closed (Options.SessionIdle).
	DefaultSessionIdle = 10 * time.Minute
	// DefaultMaxSessions caps the live sessions (Options.MaxSessions).
	DefaultMaxSessions = 32
	// ReadTimeout bounds the arrival of a request, headers and body; a
	// connection that sends part of a body and stalls is closed.
	ReadTimeout = 30 * time.Second
	// IdleTimeout closes a kept-alive connection without a request.
	IdleTimeout = 2 * time.Minute
)

// Limits bound what HTTP clients can hold, as the operator may set them;
// zero values are the defaults.
type Limits struct {
	MaxFrame    int           // bytes of one request body; frame.DefaultMax when 0
	SessionIdle time.Duration // DefaultSessionIdle when 0
	MaxSessions int           // DefaultMaxSessions when 0
}

// Options are what Serve and Handler need beside the server and the token;
// the zero value works, and withDefaults is the one place it is filled.
type Options struct {
	Limits
	ReadTimeout time.Duration // ReadTimeout when 0
	// StopHandlers is called first at shutdown, so the calls in flight
	// answer (a wait answers cancelled) before connections close.
	StopHandlers func()
	// Screen answers the calls refused for their arguments before go-sdk
	// reads them (see frame.Screen), once go-sdk has taken their headers
	// and session; none when nil.
	Screen *frame.Screen
	Logger *slog.Logger // none when nil
}

func (o Options) withDefaults() Options {
	if o.MaxFrame <= 0 {
		o.MaxFrame = frame.DefaultMax
	}
	if o.SessionIdle <= 0 {
		o.SessionIdle = DefaultSessionIdle
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = ReadTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.StopHandlers == nil {
		o.StopHandlers = func() {}
	}
	return o
}

// Handler serves srv at Path behind the loopback and token checks and the
// frame checks.
func Handler(srv *mcp.Server, token string, opt Options) http.Handler {
	h, _ := handler(srv, token, opt.withDefaults())
	return h
}

func handler(srv *mcp.Server, token string, opt Options) (http.Handler, *frames) {
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Logger: opt.Logger, SessionTimeout: opt.SessionIdle, MaxRequestBodyBytes: int64(opt.MaxFrame)})
	f := &frames{next: mcpHandler, srv: srv, max: opt.MaxFrame, maxSessions: opt.MaxSessions, idle: opt.SessionIdle,
		readTimeout: opt.ReadTimeout, log: opt.Logger, screen: opt.Screen, changed: make(chan struct{})}
	mux := http.NewServeMux()
	mux.Handle(Path, f)
	return guard(mux, token), f
}

// guard refuses, in order: a Host or Origin that is not loopback (403),
// then a missing or wrong bearer token (401).
func guard(next http.Handler, token string) http.Handler {
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopbackHostPort(r.Host) {
			http.Error(w, fmt.Sprintf("forbidden: Host %q is not a loopback address", r.Host), http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" {
			u, err := url.Parse(o)
			if err != nil || !loopbackHostPort(u.Host) {
				http.Error(w, fmt.Sprintf("forbidden: Origin %q is not a loopback address", o), http.StatusForbidden)
				return
			}
		}
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="libtmux-mcp"`)
			http.Error(w, "unauthorized: send Authorization: Bearer <token>; the token is on libtmux-mcp's stderr or in LIBTMUX_MCP_HTTP_TOKEN", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// loopbackHostPort is loopback.Host for a Host header, with or without a
// port.
func loopbackHostPort(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	return host != "" && loopback.Host(host)
}

// Serve serves srv on ln until ctx ends, then stops: the handlers in
// flight are told to stop (opt.StopHandlers) and their answers written,
// the sessions are closed, then the connections. It returns ctx.Err() and
// closes ln.
func Serve(ctx context.Context, ln net.Listener, token string, srv *mcp.Server, opt Options) error {
	opt = opt.withDefaults()
	h, f := handler(srv, token, opt)
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: min(10*time.Second, opt.ReadTimeout),
		ReadTimeout:       opt.ReadTimeout,
		IdleTimeout:       IdleTimeout,
		// No BaseContext from ctx: a request's context must outlive
		// SIGTERM until its answer is written.
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve HTTP on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	grace, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	opt.StopHandlers()
	f.awaitCalls(grace.Done())
	for ss := range srv.Sessions() {
		ss.Close() // ends the sessions' open streams
	}
	if err := hs.Shutdown(grace); err != nil {
		hs.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return ctx.Err()
}
