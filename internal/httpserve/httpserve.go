// Package httpserve serves an MCP server over Streamable HTTP, for local
// clients only: it listens on loopback addresses and nothing else, every
// request must carry the bearer token, and a request whose Host or Origin
// names anything but a loopback host is refused (DNS-rebinding protection,
// on top of go-sdk's own Host check).
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
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Path is where the MCP endpoint is served.
const Path = "/mcp"

// shutdownGrace bounds how long open streams may take to finish when the
// server stops; then connections are closed.
const shutdownGrace = 2 * time.Second

// CheckAddr accepts HOST:PORT where HOST is a loopback IP (127.0.0.0/8,
// ::1) or localhost, and PORT a number (0 picks a free port).
func CheckAddr(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("not HOST:PORT (%v); write it like 127.0.0.1:8765", err)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("port %q is not a number from 0 to 65535; write it like 127.0.0.1:8765", port)
	}
	if !loopbackHost(host) {
		return fmt.Errorf("%q is not a loopback address; only 127.0.0.1, ::1 or localhost can serve HTTP (the tools reach your terminals)", host)
	}
	return nil
}

// loopbackHost reports whether host (no port, brackets allowed) is
// localhost or a loopback IP.
func loopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// Listen checks addr with CheckAddr and listens on it; localhost listens
// on 127.0.0.1.
func Listen(addr string) (net.Listener, error) {
	if err := CheckAddr(addr); err != nil {
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

// Handler serves srv at Path behind the loopback and token checks.
func Handler(srv *mcp.Server, token string, log *slog.Logger) http.Handler {
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Logger: log})
	mux := http.NewServeMux()
	mux.Handle(Path, mcpHandler)
	return guard(mux, token)
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

// loopbackHostPort is loopbackHost for a Host header, with or without a
// port.
func loopbackHostPort(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	return host != "" && loopbackHost(host)
}

// Serve serves srv on ln until ctx ends, then stops accepting, gives open
// streams a short grace and returns ctx.Err(). It closes ln.
func Serve(ctx context.Context, ln net.Listener, token string, srv *mcp.Server, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	hs := &http.Server{
		Handler:           Handler(srv, token, log),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve HTTP on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return ctx.Err()
}
