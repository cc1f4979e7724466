package enroll

import (
	"sync"
	"testing"
	"time"
)

// fakeFiles records setup files instead of writing them.
type fakeFiles struct {
	mu      sync.Mutex
	tokens  map[string]string // path -> token
	removed chan string
	fail    error
}

func (f *fakeFiles) Create(path, pane, token string) (func() error, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return nil, f.fail
	}
	f.tokens[path] = token
	return func() error {
		f.mu.Lock()
		delete(f.tokens, path)
		f.mu.Unlock()
		f.removed <- path
		return nil
	}, nil
}

func (f *fakeFiles) token(path string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tokens[path]
}

func newTestRegistry(t *testing.T, lifetime time.Duration) (*Registry, *fakeFiles) {
	t.Helper()
	files := &fakeFiles{tokens: map[string]string{}, removed: make(chan string, 16)}
	r, err := NewRegistry(files, map[string]string{"%1": "/f1", "%2": "/f2"}, lifetime, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	if panes, err := r.Invite(); err != nil || len(panes) != 2 {
		t.Fatalf("Invite = %v, %v", panes, err)
	}
	return r, files
}

var okChecks = Facts{SameServer: true, PanePID: 100}

func TestAcceptRulesKeepTheTokenUntilSuccess(t *testing.T) {
	r, files := newTestRegistry(t, time.Minute)
	tok := files.token("/f1")
	hello := Hello{Token: tok, ShellPID: 100, Pane: "%1", TMUX: "/s,1,0", PeerPID: 100, ProcessGeneration: "g"}
	for _, tc := range []struct {
		why    string
		mutate func(*Hello, *Facts)
		want   string
	}{
		{"unknown token", func(h *Hello, _ *Facts) { h.Token = "00000000000000000000000000000000" }, ReasonExpired},
		{"token of another pane", func(h *Hello, _ *Facts) { h.Pane = "%2" }, ReasonWrongPane},
		{"another server", func(_ *Hello, c *Facts) { c.SameServer = false }, ReasonWrongServer},
		{"a nested shell", func(h *Hello, _ *Facts) { h.PeerPID, h.ShellPID = 101, 101 }, ReasonNotPaneProcess},
		{"$$ lies about the peer", func(h *Hello, _ *Facts) { h.ShellPID = 99 }, ReasonNotPaneProcess},
		{"the pane is gone", func(_ *Hello, c *Facts) { c.PanePID = 0 }, ReasonNotPaneProcess},
	} {
		h, c := hello, okChecks
		tc.mutate(&h, &c)
		if e, reason := r.Accept(h, c); e != nil || reason != tc.want {
			t.Errorf("%s: got %v %q; want refusal %q", tc.why, e, reason, tc.want)
		}
		if _, state := r.Lookup("%1"); state != StateInvited {
			t.Errorf("%s: state after refusal %q; want invited", tc.why, state)
		}
	}
	e, reason := r.Accept(hello, okChecks)
	if e == nil || len(e.ID) != 32 {
		t.Fatalf("Accept = %v %q", e, reason)
	}
	if got := <-files.removed; got != "/f1" {
		t.Errorf("removed %q; want /f1", got)
	}
	if _, reason := r.Accept(hello, okChecks); reason != ReasonUsed {
		t.Errorf("second use: %q; want used", reason)
	}
	if got, state := r.Lookup("%1"); got != e || state != StateEnrolled {
		t.Errorf("Lookup = %v %q", got, state)
	}
	r.Lose(e)
	if _, state := r.Lookup("%1"); state != StateLost {
		t.Errorf("state after Lose = %q", state)
	}
	if panes, _ := r.Invite(); len(panes) != 1 || panes[0] != "%1" {
		t.Errorf("re-invite after loss = %v; want [%%1] (%%2 still has a live invitation)", panes)
	}
}

func TestInvitationExpires(t *testing.T) {
	r, files := newTestRegistry(t, 20*time.Millisecond)
	tok := files.token("/f2")
	got := map[string]bool{}
	for len(got) < 2 {
		select {
		case p := <-files.removed:
			got[p] = true
		case <-time.After(10 * time.Second):
			t.Fatal("invitations never expired")
		}
	}
	if _, state := r.Lookup("%2"); state != StateNone {
		t.Errorf("state after expiry %q; want none", state)
	}
	h := Hello{Token: tok, ShellPID: 100, Pane: "%2", PeerPID: 100}
	if _, reason := r.Accept(h, okChecks); reason != ReasonExpired {
		t.Errorf("expired token: %q", reason)
	}
}

func TestTooManyPanes(t *testing.T) {
	panes := map[string]string{}
	for i := range MaxPanes + 1 {
		panes["%"+string(rune('0'+i))] = "/f"
	}
	if _, err := NewRegistry(&fakeFiles{}, panes, time.Minute, nil); err == nil {
		t.Error("9 panes accepted")
	}
}

// Input this server sent to an invited pane after its invitation was written, or while it was
// under way, refuses the enrollment from that pane (the `source` may have been the agent's) and
// withdraws the invitation; input before the invitation does not.
func TestAcceptRefusesAPaneThisServerTypedInto(t *testing.T) {
	r, files := newTestRegistry(t, time.Minute)
	hello := func(pane, path string) Hello {
		return Hello{Token: files.token(path), ShellPID: 100, Pane: pane, TMUX: "/s,1,0", PeerPID: 100, ProcessGeneration: "g"}
	}
	end := r.InputBegins("%1", "%9") // %9 was never invited: not tracked
	h1 := hello("%1", "/f1")
	if e, reason := r.Accept(h1, okChecks); e != nil || reason != ReasonAgentInput {
		t.Fatalf("Accept while input to the pane is under way = %v, %q; want %q", e, reason, ReasonAgentInput)
	}
	end()
	if _, state := r.Lookup("%1"); state != StateNone {
		t.Errorf("state after the refusal %q; want none (the invitation withdrawn)", state)
	}
	if <-files.removed != "/f1" {
		t.Error("the withdrawn invitation's file was not removed")
	}
	if e, reason := r.Accept(h1, okChecks); e != nil || reason != ReasonExpired {
		t.Errorf("the withdrawn token again = %v, %q; want %q", e, reason, ReasonExpired)
	}
	// A fresh invitation after the input is clean; input after it refuses again.
	if panes, err := r.Invite(); err != nil || len(panes) != 1 {
		t.Fatalf("Invite = %v, %v", panes, err)
	}
	if e, reason := r.Accept(hello("%1", "/f1"), okChecks); e == nil {
		t.Errorf("a fresh invitation after the input: refused %q; want enrolled", reason)
	}
	h2 := hello("%2", "/f2")
	r.InputBegins("%2")()
	if e, reason := r.Accept(h2, okChecks); e != nil || reason != ReasonAgentInput {
		t.Errorf("Accept after input to the invited pane = %v, %q; want %q", e, reason, ReasonAgentInput)
	}
}

func TestRequestInvitesAPaneOnlyItsOwnPersonTyped(t *testing.T) {
	r, files := newTestRegistry(t, time.Minute)
	start := time.Now()

	// A pane this server never typed into: invited, then enrolled by its token.
	if _, err := r.Request("%7", "/f7", start); err != nil {
		t.Fatalf("Request(%%7) = %v; want an invitation", err)
	}
	if _, state := r.Lookup("%7"); state != StateInvited {
		t.Fatalf("state of %%7 = %q; want %q", state, StateInvited)
	}
	if r.Invites("%7") {
		t.Error("Invites(%7) = true; a requested pane is not an --enroll-pane (SIGHUP does not invite it)")
	}
	e, reason := r.Accept(Hello{Token: files.token("/f7"), ShellPID: 100, Pane: "%7", PeerPID: 100}, okChecks)
	if e == nil {
		t.Fatalf("Accept = %q; want enrolled", reason)
	}
	if got := r.Panes(); len(got) != 3 || got[2] != (PaneState{Pane: "%7", State: StateEnrolled, PID: 100}) {
		t.Errorf("Panes() = %+v; want %%7 enrolled by pid 100 last", got)
	}

	// Input this server sent after the shell started refuses, and so does input under way.
	end := r.InputBegins("%8")
	if _, err := r.Request("%8", "/f8", start); !isReason(err, ReasonAgentInput) {
		t.Errorf("Request during input = %v; want %s", err, ReasonAgentInput)
	}
	end()
	if _, err := r.Request("%8", "/f8", start); !isReason(err, ReasonAgentInput) {
		t.Errorf("Request after input = %v; want %s", err, ReasonAgentInput)
	}
	if _, state := r.Lookup("%8"); state != StateNone {
		t.Errorf("state of %%8 = %q after a refused request; want %q", state, StateNone)
	}
	// A shell started after that input (a new pane's, or a respawned one) may be enrolled.
	if _, err := r.Request("%8", "/f8", time.Now().Add(time.Second)); err != nil {
		t.Errorf("Request for a shell newer than the input = %v; want an invitation", err)
	}
	// Input after the invitation refuses the invitation itself (the rule of every invitation).
	r.InputBegins("%8")()
	if e, reason := r.Accept(Hello{Token: files.token("/f8"), ShellPID: 100, Pane: "%8", PeerPID: 100}, okChecks); e != nil || reason != ReasonAgentInput {
		t.Errorf("Accept after input = %v, %q; want %q", e, reason, ReasonAgentInput)
	}
}

func TestRequestReplacesALiveInvitation(t *testing.T) {
	r, files := newTestRegistry(t, time.Minute)
	if _, err := r.Request("%7", "/f7a", time.Now()); err != nil {
		t.Fatal(err)
	}
	old := files.token("/f7a")
	if _, err := r.Request("%7", "/f7b", time.Now()); err != nil {
		t.Fatal(err)
	}
	if got := <-files.removed; got != "/f7a" {
		t.Errorf("removed %q; want the first invitation /f7a", got)
	}
	if e, reason := r.Accept(Hello{Token: old, ShellPID: 100, Pane: "%7", PeerPID: 100}, okChecks); e != nil || reason != ReasonExpired {
		t.Errorf("Accept(old token) = %v, %q; want %q", e, reason, ReasonExpired)
	}
}

func isReason(err error, reason string) bool {
	re, ok := err.(*RequestError)
	return ok && re.Reason == reason
}
