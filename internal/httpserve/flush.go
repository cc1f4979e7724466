package httpserve

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
)

// flush pings the session r was sent on, after r was answered, so go-sdk
// lets go of r's decoded params: a large request would otherwise stay in
// memory until the session's client sends more (or the session is closed
// when idle, minutes later). The stdio transport drops params itself.
//
// go-sdk's handler queue pops from the front of a slice, so the requests
// it handled stay in the slice's array until an append outgrows it: a
// sequence of requests, each handled before the next, frees the array
// within its capacity plus one. The capacity is at most twice the most
// requests ever queued on a session at once, which is at most peak, the
// most POSTs this server ever served at once.
func (f *frames) flush(r *http.Request, peak int) {
	session := r.Header.Get("Mcp-Session-Id")
	if session == "" {
		return
	}
	for i := range 2*peak + 1 {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":"libtmux-mcp-flush-%d","method":"ping"}`, i)
		ping, err := http.NewRequestWithContext(context.WithoutCancel(r.Context()), http.MethodPost, r.URL.String(), strings.NewReader(body))
		if err != nil {
			return
		}
		// go-sdk checks the Host (DNS rebinding) as for the client's own.
		ping.Host, ping.RemoteAddr = r.Host, r.RemoteAddr
		ping.Header.Set("Content-Type", "application/json")
		ping.Header.Set("Accept", "application/json, text/event-stream")
		ping.Header.Set("Mcp-Session-Id", session)
		if v := r.Header.Get("Mcp-Protocol-Version"); v != "" {
			ping.Header.Set("Mcp-Protocol-Version", v)
		}
		var w recorder
		f.next.ServeHTTP(&w, ping)
		if w.status != 0 && w.status != http.StatusOK {
			f.log.Debug("flush ping after a large request", "session", session, "status", w.status)
			return
		}
	}
}

// enter counts a POST handed to go-sdk.
func (f *frames) enter() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.posts++
	f.peak = max(f.peak, f.posts)
}

// leave counts a POST answered and returns the peak so far.
func (f *frames) leave() (peak int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.posts--
	return f.peak
}

// recorder is a ResponseWriter that keeps go-sdk's answer to a request we
// made: the status (200 when only a body was written), headers and body.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (d *recorder) Header() http.Header {
	if d.header == nil {
		d.header = http.Header{}
	}
	return d.header
}

func (d *recorder) Write(p []byte) (int, error) {
	d.WriteHeader(http.StatusOK)
	return d.body.Write(p)
}

func (d *recorder) WriteHeader(status int) {
	if d.status == 0 {
		d.status = status
	}
}

func (d *recorder) Flush() {}
