package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
)

// hostileProc is the built server under a hostile test, on one transport.
// send delivers one frame and may be called concurrently (over HTTP each
// frame is a POST on the test's one session); every answer goes to ans.
type hostileProc struct {
	pid    int
	ans    *answers
	stderr *lockedBuffer
	exited chan error // the process's exit, once
	send   func(frame string)
	stdin  io.Closer // nil over HTTP

	// openSession, over HTTP, opens one more session (its initialize
	// answered with initID) and returns a send for it; nil on stdio, which
	// has one session.
	openSession func(initID string) func(frame string)

	mu   sync.Mutex
	sent int
}

// sentCount is how many frames were sent.
func (p *hostileProc) sentCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sent
}

func (p *hostileProc) countSent() {
	p.mu.Lock()
	p.sent++
	p.mu.Unlock()
}

// startHostile starts the binary on ts over transport ("stdio" or "http");
// it is killed at the end of the test.
func startHostile(t *testing.T, ts *tmuxtest.Server, transport string) *hostileProc {
	t.Helper()
	if transport == "http" {
		return startHostileHTTP(t, ts)
	}
	return startHostileStdio(t, ts)
}

func startHostileStdio(t *testing.T, ts *tmuxtest.Server) *hostileProc {
	t.Helper()
	cmd := exec.Command(binary(t), "--socket", ts.Socket, "--log-level", "error")
	cmd.Env = hostileEnv(ts)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	p := &hostileProc{ans: newAnswers(), stderr: &lockedBuffer{}, exited: make(chan error, 1), stdin: stdin}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.pid = cmd.Process.Pid
	go func() { p.exited <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	go func() {
		r := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := r.ReadString('\n')
			if line != "" {
				p.ans.add(line)
			}
			if err != nil {
				return
			}
		}
	}()
	var wmu sync.Mutex
	p.send = func(frame string) {
		wmu.Lock()
		defer wmu.Unlock()
		p.countSent()
		if _, err := io.WriteString(stdin, frame+"\n"); err != nil {
			t.Errorf("write a frame: %v\nstderr: %s", err, p.stderr.String())
		}
	}
	return p
}

var httpURL = regexp.MustCompile(`Streamable HTTP at (http://\S+/mcp)`)

// hostileToken is the bearer token of the HTTP runs.
const hostileToken = "hostile-test-token-0123456789"

func startHostileHTTP(t *testing.T, ts *tmuxtest.Server) *hostileProc {
	t.Helper()
	cmd := exec.Command(binary(t), "--socket", ts.Socket, "--log-level", "error", "--http", "127.0.0.1:0")
	cmd.Env = hostileEnv(ts, "LIBTMUX_MCP_HTTP_TOKEN="+hostileToken)
	errPipe, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &hostileProc{pid: cmd.Process.Pid, ans: newAnswers(), stderr: &lockedBuffer{}, exited: make(chan error, 1)}
	t.Cleanup(func() { cmd.Process.Kill() })
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(errPipe)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			p.stderr.Write([]byte(sc.Text() + "\n"))
			if m := httpURL.FindStringSubmatch(sc.Text()); m != nil {
				urlc <- m[1]
			}
		}
		p.exited <- cmd.Wait()
	}()
	var url string
	select {
	case url = <-urlc:
	case <-time.After(20 * time.Second):
		t.Fatalf("no URL on stderr: %s", p.stderr.String())
	}
	client := &http.Client{Timeout: hostileTimeout}
	// sender posts on one session: the one the first answer names.
	sender := func() func(string) {
		var smu sync.Mutex
		session := ""
		return func(body string) {
			req, _ := http.NewRequest("POST", url, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Authorization", "Bearer "+hostileToken)
			smu.Lock()
			if session != "" {
				req.Header.Set("Mcp-Session-Id", session)
				req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
			}
			smu.Unlock()
			p.countSent()
			resp, err := client.Do(req)
			if err != nil {
				t.Errorf("POST: %v", err)
				return
			}
			defer resp.Body.Close()
			if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
				smu.Lock()
				if session == "" {
					session = id
				}
				smu.Unlock()
			}
			data, _ := io.ReadAll(resp.Body)
			if resp.StatusCode == http.StatusAccepted {
				return
			}
			if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
				for _, l := range strings.Split(string(data), "\n") {
					if d, ok := strings.CutPrefix(l, "data: "); ok {
						p.ans.add(d)
					}
				}
				return
			}
			if !json.Valid(bytes.TrimSpace(data)) {
				t.Errorf("HTTP %d with a body that is not JSON-RPC: %.200q (for %.200q)", resp.StatusCode, data, body)
				return
			}
			p.ans.add(string(data))
		}
	}
	p.send = sender()
	p.openSession = func(initID string) func(string) {
		send := sender()
		send(strings.Replace(hostileInit, `"id":"init"`, `"id":`+initID, 1))
		send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		return send
	}
	return p
}

// initialize sends initialize, initialized and one call of each kind the
// load makes (warmFrames), waits for their answers and returns the warm
// ids and the idle RSS read then.
func (p *hostileProc) initialize(t *testing.T, pane string, deadline time.Time) (warmIDs []string, idle int) {
	t.Helper()
	p.send(hostileInit)
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	warmIDs, warm := warmFrames(pane)
	for _, f := range warm {
		p.send(f)
	}
	p.ans.await(t, append(warmIDs, `"init"`), deadline)
	idle, _ = rss(t, p.pid)
	return warmIDs, idle
}
