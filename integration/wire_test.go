package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pipeProc is the server binary driven over raw pipes, one JSON-RPC frame
// per line, with no MCP client in between.
type pipeProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string // stdout, line by line; closed at EOF
	stderr *syncBuffer
}

func startPipe(t *testing.T, env []string, args ...string) *pipeProc {
	t.Helper()
	b := build(t)
	p := &pipeProc{t: t, stderr: newSyncBuffer(), lines: make(chan string, 1024)}
	p.cmd = exec.Command(b.server, args...)
	p.cmd.Env = env
	p.cmd.Stderr = p.stderr
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 0, 1<<16), 32<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			p.cmd.Wait()
		}
	})
	return p
}

func (p *pipeProc) send(frame string) {
	p.t.Helper()
	if _, err := io.WriteString(p.stdin, frame+"\n"); err != nil {
		p.t.Fatalf("write %.80s: %v\nstderr:\n%s", frame, err, p.stderr)
	}
}

// next returns the next stdout line, or fails at the deadline or at EOF.
func (p *pipeProc) next() string {
	p.t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			p.t.Fatalf("stdout closed; want another message\nstderr:\n%s", p.stderr)
		}
		return l
	case <-time.After(callTimeout):
		p.t.Fatalf("no message on stdout within %s\nstderr:\n%s", callTimeout, p.stderr)
	}
	return ""
}

// finish closes stdin and returns what stdout still carried, then waits
// for a clean exit.
func (p *pipeProc) finish() []string {
	p.t.Helper()
	p.stdin.Close()
	var rest []string
	deadline := time.After(callTimeout)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				if err := p.cmd.Wait(); err != nil {
					p.t.Errorf("exit after stdin EOF: %v; want status 0\nstderr:\n%s", err, p.stderr)
				}
				return rest
			}
			rest = append(rest, l)
		case <-deadline:
			p.t.Fatalf("stdout did not close within %s of stdin EOF\nstderr:\n%s", callTimeout, p.stderr)
		}
	}
}

// decodeJSON decodes with numbers kept as text, so huge ids compare exactly.
func decodeJSON(s string) (any, error) {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("trailing data after the JSON value")
	}
	return v, nil
}

// subset reports where got differs from want: every key of a want object
// must be in got with a matching value, arrays match element by element,
// and the string "*" matches any value that is present.
func subset(want, got any, path string) string {
	if s, ok := want.(string); ok && s == "*" {
		return ""
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: got %v; want an object", path, got)
		}
		for k, wv := range w {
			gv, present := g[k]
			if !present {
				return fmt.Sprintf("%s.%s: missing", path, k)
			}
			if d := subset(wv, gv, path+"."+k); d != "" {
				return d
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s: got %v; want %d elements", path, got, len(w))
		}
		for i := range w {
			if d := subset(w[i], g[i], fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
		return ""
	default:
		if fmt.Sprint(want) != fmt.Sprint(got) {
			return fmt.Sprintf("%s: got %v; want %v", path, got, want)
		}
		return ""
	}
}

// exchange is one step of a recorded exchange: a frame to send and the
// answers it must get (none for a notification or an ignored frame).
type exchange struct {
	line    int
	comment string
	send    string
	want    []string
}

// readExchanges parses a recorded exchange: "> frame" lines are sent,
// "< json" lines are the answers expected (as subsets, see subset) to the
// frame before them, "# text" lines say what the next frame tests.
// Placeholders ($PANE, $LONGID) are replaced first.
func readExchanges(t *testing.T, path string, vars map[string]string) []exchange {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []exchange
	comment := ""
	for i, raw := range strings.Split(string(data), "\n") {
		l := raw
		for k, v := range vars {
			l = strings.ReplaceAll(l, k, v)
		}
		switch {
		case strings.TrimSpace(l) == "":
		case strings.HasPrefix(l, "#"):
			comment = strings.TrimSpace(strings.TrimPrefix(l, "#"))
		case strings.HasPrefix(l, "> "):
			out = append(out, exchange{line: i + 1, comment: comment, send: strings.TrimPrefix(l, "> ")})
		case strings.HasPrefix(l, "< "):
			if len(out) == 0 {
				t.Fatalf("%s:%d: an answer before any frame", path, i+1)
			}
			out[len(out)-1].want = append(out[len(out)-1].want, strings.TrimPrefix(l, "< "))
		default:
			t.Fatalf("%s:%d: line starts with neither >, < nor #: %q", path, i+1, raw)
		}
	}
	return out
}

// play sends each frame and matches the answers, in order. Every stdout
// line must be a JSON-RPC 2.0 message.
func (p *pipeProc) play(path string, steps []exchange) {
	p.t.Helper()
	for _, st := range steps {
		p.send(st.send)
		for _, w := range st.want {
			wantV, err := decodeJSON(w)
			if err != nil {
				p.t.Fatalf("%s:%d: the expected answer is not JSON: %v", path, st.line, err)
			}
			got := p.next()
			gotV, err := decodeJSON(got)
			if err != nil {
				p.t.Errorf("%s:%d (%s): stdout line is not JSON (%v): %.200q", path, st.line, st.comment, err, got)
				continue
			}
			if m, _ := gotV.(map[string]any); m["jsonrpc"] != "2.0" {
				p.t.Errorf("%s:%d (%s): stdout line is not JSON-RPC 2.0: %.200s", path, st.line, st.comment, got)
			}
			if d := subset(wantV, gotV, "answer"); d != "" {
				p.t.Errorf("%s:%d (%s):\n  %s\n  sent %.200s\n  got  %.400s", path, st.line, st.comment, d, st.send, got)
			}
		}
	}
}

// TestHostileFrames sends a script of broken and hostile JSON-RPC frames at
// the binary over a pipe: each gets the right error (or, for frames that
// deserve none, nothing), and a well-formed client is served afterwards.
func TestHostileFrames(t *testing.T) {
	t.Parallel()
	ts := tmuxServer(t)
	f := ampSession(t, ts)
	p := startPipe(t, cleanEnv(t, ts.Dir), "--socket", ts.Socket)
	const path = "testdata/hostile.exchange"
	steps := readExchanges(t, path, map[string]string{
		"$PANE":   f.paneID,
		"$LONGID": strings.Repeat("i", 100000),
	})
	p.play(path, steps)
	if rest := p.finish(); len(rest) > 0 {
		t.Errorf("stdout carried %d unexpected lines after the script, first: %.200s", len(rest), rest[0])
	}
}

// TestStdinEOFAnswersWhatWasRead writes a whole session into the server's
// stdin at once, as printf piped into it would, and closes it: the call
// read before EOF is answered, then the process exits 0. With no
// --log-level, stderr has the startup line and no SDK info lines.
func TestStdinEOFAnswersWhatWasRead(t *testing.T) {
	t.Parallel()
	ts := tmuxServer(t)
	ampSession(t, ts)
	b := build(t)
	frames := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + protocolVersion + `","capabilities":{},"clientInfo":{"name":"printf","version":"0"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_server_info","arguments":{}}}`,
	}
	cmd := exec.Command(b.server, "--socket", ts.Socket)
	cmd.Env = cleanEnv(t, ts.Dir)
	cmd.Stdin = strings.NewReader(strings.Join(frames, "\n") + "\n") // a pipe, closed once written
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit: %v; want status 0\nstderr:\n%s", err, &stderr)
		}
	case <-time.After(callTimeout):
		cmd.Process.Kill()
		t.Fatalf("the server did not exit after stdin EOF\nstderr:\n%s", &stderr)
	}
	answered := map[string]map[string]any{}
	for l := range strings.Lines(stdout.String()) {
		v, err := decodeJSON(l)
		m, _ := v.(map[string]any)
		if err != nil || m["jsonrpc"] != "2.0" {
			t.Errorf("stdout line is not JSON-RPC: %q", l)
			continue
		}
		answered[fmt.Sprint(m["id"])] = m
	}
	if answered["1"]["result"] == nil {
		t.Errorf("initialize answered %v", answered["1"])
	}
	res, _ := answered["2"]["result"].(map[string]any)
	if res == nil || res["isError"] == true || !strings.Contains(fmt.Sprint(res["structuredContent"]), ts.Socket) {
		t.Errorf("get_server_info, read before EOF, answered %v; want its answer naming %s\nstderr:\n%s", answered["2"], ts.Socket, &stderr)
	}
	errText := stderr.String()
	if !strings.Contains(errText, " serving ") {
		t.Errorf("no startup line on stderr:\n%s", errText)
	}
	for _, noise := range []string{"server run start", "session initialized", "level=INFO"} {
		if strings.Contains(errText, noise) {
			t.Errorf("stderr at the default log level has %q; want the startup line and warnings only:\n%s", noise, errText)
		}
	}
}

// TestStdinEOFAnswersTheRunInFlight closes stdin while a tmux_run call
// runs: the run is cancelled at once, its answer (cancelled, observed) is
// written before stdout closes, and the process exits 0.
func TestStdinEOFAnswersTheRunInFlight(t *testing.T) {
	t.Parallel()
	b := build(t)
	ts := tmuxServer(t)
	pane := ts.ZshSession("eofrun")
	file := ts.Dir + "/enroll.zsh"
	p := startPipe(t, cleanEnv(t, shortTempDir(t), "LIBTMUX_MCP_SHELL_ANSWER_MS=4000", "LIBTMUX_MCP_LOG=info"),
		"--socket", ts.Socket, "--enable-tool", "tmux_run", "--enroll-pane", pane+"="+file, "--helper", b.helper)
	if _, ok := p.stderr.line("source "+file, 30*time.Second); !ok {
		t.Fatalf("no invitation; stderr:\n%s", p.stderr)
	}
	ts.Type(pane, "source "+file, true)
	if _, ok := p.stderr.line("tmux_run pane enrolled", 20*time.Second); !ok {
		t.Fatalf("no enrollment; stderr:\n%s", p.stderr)
	}
	info, err := ts.Client.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	pidfile := ts.Dir + "/pid"
	call, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "run", "method": "tools/call", "params": map[string]any{
		"name": "tmux_run", "arguments": map[string]any{
			"target": map[string]any{"kind": "pane", "id": pane, "generation": info.Generation},
			"script": writePIDScript(pidfile, "sleep 60"),
		}}})
	p.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + protocolVersion + `","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	p.next()
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	p.send(string(call))
	sh := readPID(t, pidfile) // the script runs
	t.Cleanup(func() { syscall.Kill(-sh, syscall.SIGKILL) })

	rest := p.finish()
	if len(rest) != 1 {
		t.Fatalf("stdout after stdin EOF carried %d lines; want the run's answer:\n%s", len(rest), strings.Join(rest, "\n"))
	}
	var answer struct {
		ID     string `json:"id"`
		Result struct {
			IsError           bool `json:"isError"`
			StructuredContent struct {
				OK    bool `json:"ok"`
				Error struct {
					Code     string `json:"code"`
					Delivery string `json:"delivery"`
				} `json:"error"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(rest[0]), &answer); err != nil {
		t.Fatalf("the answer is not JSON: %v: %s", err, rest[0])
	}
	sc := answer.Result.StructuredContent
	if answer.ID != "run" || !answer.Result.IsError || sc.OK || sc.Error.Code != "cancelled" || sc.Error.Delivery != "observed" {
		t.Errorf("the run in flight at stdin EOF answered %s; want cancelled, observed, with isError", rest[0])
	}
	groupGone(t, sh)
}
