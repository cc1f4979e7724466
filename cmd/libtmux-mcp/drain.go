package main

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// drainTimeout bounds how long a shutdown waits for in-flight calls to be
// answered after their handlers were told to stop.
const drainTimeout = 5 * time.Second

// answers wraps a transport to track the client's calls that have not been
// answered yet. go-sdk writes no answer once its session is closing, so at
// shutdown the handlers are stopped first (a wait answers cancelled) and
// the session is closed only when those answers are out.
type answers struct {
	mcp.Transport
	mu      sync.Mutex
	pending map[jsonrpc.ID]bool
	changed chan struct{} // closed and replaced whenever pending shrinks
}

func trackAnswers(t mcp.Transport) *answers {
	return &answers{Transport: t, pending: map[jsonrpc.ID]bool{}, changed: make(chan struct{})}
}

func (a *answers) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := a.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &answeredConn{Connection: c, a: a}, nil
}

func (a *answers) add(id jsonrpc.ID) {
	a.mu.Lock()
	a.pending[id] = true
	a.mu.Unlock()
}

func (a *answers) done(id jsonrpc.ID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.pending[id] {
		delete(a.pending, id)
		close(a.changed)
		a.changed = make(chan struct{})
	}
}

// wait returns once every call read so far has been answered (or
// cancelled by the client), or at the timeout.
func (a *answers) wait(timeout time.Duration) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		a.mu.Lock()
		n, changed := len(a.pending), a.changed
		a.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			return
		}
	}
}

type answeredConn struct {
	mcp.Connection
	a *answers
}

func (c *answeredConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if req, ok := m.(*jsonrpc.Request); ok && err == nil {
		switch {
		case req.IsCall():
			c.a.add(req.ID)
		case req.Method == "notifications/cancelled":
			// A cancelled call gets no answer, by the protocol.
			var p struct {
				RequestID any `json:"requestId"`
			}
			if json.Unmarshal(req.Params, &p) == nil {
				if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
					c.a.done(id)
				}
			}
		}
	}
	return m, err
}

func (c *answeredConn) Write(ctx context.Context, m jsonrpc.Message) error {
	err := c.Connection.Write(ctx, m)
	if resp, ok := m.(*jsonrpc.Response); ok {
		c.a.done(resp.ID)
	}
	return err
}
