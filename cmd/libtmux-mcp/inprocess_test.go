package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/libtmux/libtmux-mcp/internal/config"
	"github.com/libtmux/libtmux-mcp/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// inProcess is the whole program served in this test process (so the
// test can read its goroutines and fds), with a connected client.
type inProcess struct {
	t      *testing.T
	ctx    context.Context
	cs     *mcp.ClientSession
	stderr *lockedBuffer
	stop   func()
}

// serveInProcess loads args and env as the binary would and serves them
// over in-memory transports; stop (also run in t.Cleanup) ends the
// session and checks serve returned cleanly.
func serveInProcess(t *testing.T, args []string, env map[string]string) *inProcess {
	t.Helper()
	names := config.Names{Tools: mcpserver.ToolNames(), Toolsets: mcpserver.Toolsets}
	cfg, err := config.Load(args, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, names)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	st, ct := mcp.NewInMemoryTransports()
	p := &inProcess{t: t, ctx: ctx, stderr: &lockedBuffer{}}
	done := make(chan error, 1)
	go func() { done <- serve(ctx, cfg, st, p.stderr) }()
	p.cs, err = mcp.NewClient(&mcp.Implementation{Name: "in-process", Version: "0"}, nil).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	stopped := false
	p.stop = func() {
		if stopped {
			return
		}
		stopped = true
		p.cs.Close()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}
	t.Cleanup(p.stop)
	return p
}

// call calls a tool that must succeed and returns its structured answer.
func (p *inProcess) call(name string, args map[string]any) map[string]any {
	p.t.Helper()
	res, err := p.cs.CallTool(p.ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		p.t.Fatalf("%s: %v", name, err)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if res.IsError {
		p.t.Fatalf("%s: %s %v\nstderr: %s", name, raw, res.Content, p.stderr)
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		p.t.Fatalf("%s: structuredContent %s is not an object: %v", name, raw, err)
	}
	return obj
}
