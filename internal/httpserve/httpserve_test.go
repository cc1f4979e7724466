package httpserve

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serve runs a server with one tool on a free loopback port and returns
// its endpoint URL.
func serve(t *testing.T, token string) string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "httpserve-test", Version: "0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "hello"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, struct {
		Text string `json:"text"`
	}, error) {
		return nil, struct {
			Text string `json:"text"`
		}{"hi"}, nil
	})
	ln, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, token, srv, Options{}) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Serve returned %v; want context.Canceled", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("Serve did not return after its context ended")
		}
	})
	return "http://" + ln.Addr().String() + Path
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`

func post(t *testing.T, url string, header map[string]string, host string) *http.Response {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(initialize))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// TestRefusals checks each guard with an otherwise valid initialize.
func TestRefusals(t *testing.T) {
	const token = "s3cret-token"
	url := serve(t, token)
	good := "Bearer " + token
	for _, c := range []struct {
		why    string
		header map[string]string
		host   string
		want   int
	}{
		{"no token", nil, "", http.StatusUnauthorized},
		{"wrong token", map[string]string{"Authorization": "Bearer nope"}, "", http.StatusUnauthorized},
		{"token without the scheme", map[string]string{"Authorization": token}, "", http.StatusUnauthorized},
		{"a rebinding Host", map[string]string{"Authorization": good}, "evil.example:80", http.StatusForbidden},
		{"a rebinding Host without a token", nil, "evil.example", http.StatusForbidden},
		{"a foreign Origin", map[string]string{"Authorization": good, "Origin": "https://evil.example"}, "", http.StatusForbidden},
		{"a loopback Origin", map[string]string{"Authorization": good, "Origin": "http://localhost:3000"}, "", http.StatusOK},
		{"localhost Host", map[string]string{"Authorization": good}, "localhost", http.StatusOK},
		{"the right token", map[string]string{"Authorization": good}, "", http.StatusOK},
	} {
		resp := post(t, url, c.header, c.host)
		if resp.StatusCode != c.want {
			t.Errorf("%s: status %d; want %d", c.why, resp.StatusCode, c.want)
		}
		if c.want == http.StatusUnauthorized && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s: 401 without a WWW-Authenticate: Bearer challenge", c.why)
		}
	}
}

// bearer adds the token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// TestToolsListWithToken connects go-sdk's streamable client with the
// token and lists and calls the tool.
func TestToolsListWithToken(t *testing.T) {
	const token = "another-token"
	url := serve(t, token)
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   url,
		HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}},
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 1 || res.Tools[0].Name != "hello" {
		t.Errorf("tools/list = %v; want [hello]", res.Tools)
	}
	call, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "hello", Arguments: map[string]any{}})
	if err != nil || call.IsError {
		t.Fatalf("tools/call hello: %v %v", err, call)
	}

	// Without the token the same client cannot connect.
	_, err = client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err == nil {
		t.Error("connected without the token")
	}
}

func TestNewToken(t *testing.T) {
	a, b := NewToken(), NewToken()
	if len(a) != 32 || a == b {
		t.Errorf("NewToken gave %q and %q; want two different 32-digit tokens", a, b)
	}
}
