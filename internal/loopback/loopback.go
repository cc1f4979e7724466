// Package loopback says whether an address stays on this machine: the one
// check behind --http's refusal at startup (package config) and the HTTP
// transport's listener and Host/Origin checks (package httpserve). It
// imports only the standard library, so the configuration can refuse an
// address without linking the transport.
package loopback

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

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
	if !Host(host) {
		return fmt.Errorf("%q is not a loopback address; only 127.0.0.1, ::1 or localhost can serve HTTP (the tools reach your terminals)", host)
	}
	return nil
}

// Host reports whether host (no port, brackets allowed) is localhost or a
// loopback IP.
func Host(host string) bool {
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
