package enroll

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultLifetime is how long an invitation lives when NewRegistry is
// given no lifetime (--enrollment-timeout).
const DefaultLifetime = 60 * time.Second

// Pane states as list_panes reports them.
const (
	StateNone     = "none"     // not invited, or the invitation expired
	StateInvited  = "invited"  // a live invitation waits to be sourced
	StateEnrolled = "enrolled" // a shell is enrolled
	StateLost     = "lost"     // the enrolled shell exited or unenrolled
)

// Refusal reasons sent to the shell as NO <reason>.
const (
	ReasonExpired        = "expired"
	ReasonUsed           = "used"
	ReasonWrongPane      = "wrong-pane"
	ReasonNotPaneProcess = "not-pane-process"
	ReasonWrongServer    = "wrong-server"
	ReasonWrongUID       = "wrong-uid"
	ReasonLimit          = "limit"
	// ReasonAgentInput: this server, or another libtmux-mcp process (see SeeOthersInput), sent
	// input to the pane since the invitation was written (or was sending it), so the `source` may not have been the person's; the invitation is
	// withdrawn.
	ReasonAgentInput = "agent-input"
)

// MaxPanes is the most panes that may be invited at once.
const MaxPanes = 8

// Files makes and removes setup files; cmd/libtmux-mcp implements it with package shellsetup.
type Files interface {
	// Create writes a fresh setup file for pane with token; it refuses an
	// existing path.
	Create(path, pane, token string) (remove func() error, err error)
}

// Enrollment is one enrolled shell.
type Enrollment struct {
	ID                string // also the enrollment generation: 32 hex
	Pane              string
	PID               int
	ProcessGeneration string
	lost              atomic.Bool // the shell exited, unenrolled or was replaced
}

// Lost reports whether the enrolled shell exited, unenrolled or was
// replaced by a newer enrollment.
func (e *Enrollment) Lost() bool { return e.lost.Load() }

// slot is one --enroll-pane.
type slot struct {
	pane, file string
	token      string
	used       map[string]bool // tokens spent by a successful enrollment
	expired    map[string]bool // tokens whose invitation ran out
	expires    time.Time
	timer      *time.Timer
	remove     func() error // removes the file this process created
	enrolled   *Enrollment
	invitedSeq uint64    // Registry.seq when the live invitation was written
	invitedAt  time.Time // when it was written (the wall clock, as other processes' records)
	requested  bool      // made by a person's request (Request), not by --enroll-pane
	inputSeq   uint64    // Registry.seq when this server's last input to the pane went
	inflight   int       // inputs to the pane begun and not yet ended
}

// Registry holds the slots of one server process.
type Registry struct {
	mu       sync.Mutex
	files    Files
	lifetime time.Duration
	slots    map[string]*slot
	now      func() time.Time
	notify   func(msg string)
	seq      uint64                // orders invitations and inputs
	inputs   map[string]*paneInput // every pane this server sent input to
	// othersInput reports whether any libtmux-mcp process (another included) sent pane input at
	// or after a time, or is sending it, and which one; nil when no process's records are seen.
	othersInput func(pane string, since time.Time) (bool, int)
}

// SeeOthersInput makes the registry refuse an enrollment, or a request for an invitation, from a
// pane that any libtmux-mcp process sent input to (see ReasonAgentInput), as input reports it
// (package panerecord's InputSince): with several servers on one tmux server, one server's
// send_keys must not enroll a pane with another. Call it before the registry is used.
func (r *Registry) SeeOthersInput(input func(pane string, since time.Time) (bool, int)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.othersInput = input
}

// otherInput is othersInput, false without one.
func (r *Registry) otherInput(pane string, since time.Time) (bool, int) {
	if r.othersInput == nil {
		return false, 0
	}
	return r.othersInput(pane, since)
}

// byProcess names the process pid in a refusal ("" when unknown).
func byProcess(pid int) string {
	if pid <= 0 {
		return "a libtmux-mcp server"
	}
	return fmt.Sprintf("libtmux-mcp process %d", pid)
}

// paneInput is what this server sent a pane, invited or not.
type paneInput struct {
	inflight int       // inputs begun and not yet ended
	last     time.Time // when the last one ended
}

// maxSlots bounds the panes the registry remembers (invited, enrolled or lost); a request for
// one more forgets the panes with neither a live invitation nor a live enrollment.
const maxSlots = 64

// NewRegistry returns a registry for panes (pane id -> setup file path).
// Invitations live for lifetime, DefaultLifetime when 0. notify receives
// lines for the operator.
func NewRegistry(files Files, panes map[string]string, lifetime time.Duration, notify func(string)) (*Registry, error) {
	if len(panes) > MaxPanes {
		return nil, fmt.Errorf("%d panes to enroll; at most %d", len(panes), MaxPanes)
	}
	if notify == nil {
		notify = func(string) {}
	}
	if lifetime <= 0 {
		lifetime = DefaultLifetime
	}
	r := &Registry{files: files, lifetime: lifetime, slots: map[string]*slot{}, now: time.Now, notify: notify, inputs: map[string]*paneInput{}}
	for pane, file := range panes {
		r.slots[pane] = &slot{pane: pane, file: file, used: map[string]bool{}, expired: map[string]bool{}}
	}
	return r, nil
}

// Invite issues a fresh invitation for every pane whose enrollment is
// missing, expired or lost, writing its setup file. It returns the panes
// invited. A pane whose file cannot be written is reported and skipped.
func (r *Registry) Invite() ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var invited []string
	var errs []error
	for _, pane := range sortedKeys(r.slots) {
		s := r.slots[pane]
		if s.enrolled != nil && !s.enrolled.Lost() || s.token != "" || s.requested {
			continue
		}
		token := newID()
		remove, err := r.files.Create(s.file, pane, token)
		if err != nil {
			errs = append(errs, fmt.Errorf("invite pane %s: %w", pane, err))
			continue
		}
		r.seq++
		s.token, s.remove, s.expires, s.invitedSeq, s.invitedAt = token, remove, r.now().Add(r.lifetime), r.seq, time.Now()
		s.timer = time.AfterFunc(r.lifetime, func() { r.expire(pane, token) })
		invited = append(invited, pane)
		r.notify(fmt.Sprintf("tmux_run: to enroll pane %s, run in that pane's zsh within %s: source %s", pane, r.lifetime, s.file))
	}
	return invited, errors.Join(errs...)
}

// expire retires pane's invitation token if it is still the live one.
func (r *Registry) expire(pane, token string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.slots[pane]
	if s == nil || s.token != token {
		return
	}
	s.expired[token] = true
	r.retireLocked(s)
	r.notify(fmt.Sprintf("tmux_run: the invitation for pane %s expired and its file was removed; %s", pane, s.again()))
}

// retireLocked ends s's live invitation and removes its file.
func (r *Registry) retireLocked(s *slot) {
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	s.token = ""
	if s.remove != nil {
		if err := s.remove(); err != nil {
			r.notify(fmt.Sprintf("tmux_run: %v", err))
		}
		s.remove = nil
	}
}

// Close retires every live invitation and removes the files this process
// created.
func (r *Registry) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.slots {
		r.retireLocked(s)
	}
}

// Hello is what a shell's HELLO line and its socket say about it.
type Hello struct {
	Token             string
	ShellPID          int    // $$ as the shell reported it
	Pane              string // $TMUX_PANE
	TMUX              string // $TMUX
	PeerPID           int    // SO_PEERCRED pid
	ProcessGeneration string
}

// Facts are what tmux and the system say about a HELLO, gathered before Accept takes the
// registry's lock, so no reader of the registry ever waits behind a tmux process.
type Facts struct {
	// SameServer reports whether $TMUX names this tmux server.
	SameServer bool
	// PanePID is #{pane_pid} of the pane the HELLO names, or 0 if tmux does not know it.
	PanePID int
}

// Accept decides a HELLO whose peer uid was already checked, with the facts gathered for it.
// On success the token is spent, the file removed and the enrollment returned; a refusal leaves
// the invitation as it was.
func (r *Registry) Accept(h Hello, f Facts) (*Enrollment, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var s *slot
	for _, cand := range r.slots {
		if cand.token == h.Token || cand.used[h.Token] || cand.expired[h.Token] {
			s = cand
			break
		}
	}
	switch {
	case s == nil || s.expired[h.Token]:
		return nil, ReasonExpired
	case s.used[h.Token]:
		return nil, ReasonUsed
	case h.Pane != s.pane:
		return nil, ReasonWrongPane
	case !f.SameServer:
		return nil, ReasonWrongServer
	case f.PanePID == 0 || h.PeerPID != h.ShellPID || h.PeerPID != f.PanePID:
		return nil, ReasonNotPaneProcess
	case s.inflight > 0 || s.inputSeq > s.invitedSeq:
		s.expired[h.Token] = true
		r.retireLocked(s)
		r.notify(fmt.Sprintf("tmux_run: pane %s received input from this server after its invitation was written, so its enrollment was refused and the invitation withdrawn; %s", s.pane, s.again()))
		return nil, ReasonAgentInput
	}
	if sent, pid := r.otherInput(s.pane, s.invitedAt); sent {
		s.expired[h.Token] = true
		r.retireLocked(s)
		r.notify(fmt.Sprintf("tmux_run: pane %s received input from %s after its invitation was written, so its enrollment was refused and the invitation withdrawn; %s", s.pane, byProcess(pid), s.again()))
		return nil, ReasonAgentInput
	}
	if r.enrolledLocked() >= MaxPanes && (s.enrolled == nil || s.enrolled.Lost()) {
		return nil, ReasonLimit
	}
	s.used[h.Token] = true
	r.retireLocked(s)
	if s.enrolled != nil {
		s.enrolled.lost.Store(true) // replaced: a new HELLO from the same pane's shell
	}
	e := &Enrollment{ID: newID(), Pane: s.pane, PID: h.PeerPID, ProcessGeneration: h.ProcessGeneration}
	s.enrolled = e
	return e, ""
}

func (r *Registry) enrolledLocked() int {
	n := 0
	for _, s := range r.slots {
		if s.enrolled != nil && !s.enrolled.Lost() {
			n++
		}
	}
	return n
}

// Lose marks enrollment e lost (its shell exited or unenrolled).
func (r *Registry) Lose(e *Enrollment) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e.lost.Store(true)
}

// InputBegins notes that this server is about to send input (keys, a paste, a command line) to
// panes; the function it returns notes that the input went (or failed) and must be called once.
// An enrollment from a pane that received this server's input after its invitation was written,
// or while input to it was under way, is refused (ReasonAgentInput): enrolling is the person's
// act. Panes that were never invited are not tracked.
func (r *Registry) InputBegins(panes ...string) (end func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var slots []*slot
	var ins []*paneInput
	for _, p := range panes {
		if s := r.slots[p]; s != nil {
			s.inflight++
			slots = append(slots, s)
		}
		in := r.inputs[p]
		if in == nil {
			in = &paneInput{}
			r.inputs[p] = in
		}
		in.inflight++
		ins = append(ins, in)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.seq++
			for _, s := range slots {
				s.inflight--
				s.inputSeq = r.seq
			}
			now := r.now()
			for _, in := range ins {
				in.inflight--
				in.last = now
			}
		})
	}
}

// Lookup returns the current enrollment of pane and the pane's state.
func (r *Registry) Lookup(pane string) (*Enrollment, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.slots[pane]
	switch {
	case s == nil:
		return nil, StateNone
	case s.enrolled != nil && !s.enrolled.Lost():
		return s.enrolled, StateEnrolled
	case s.token != "":
		return s.enrolled, StateInvited
	case s.enrolled != nil:
		return s.enrolled, StateLost
	}
	return nil, StateNone
}

// newID returns 128 random bits as 32 lowercase hex digits.
func newID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	return hex.EncodeToString(b[:])
}

// NewRunID returns a fresh run id.
func NewRunID() string { return newID() }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Invites reports whether pane is one this process invites (an
// --enroll-pane of its start), whatever its state now.
func (r *Registry) Invites(pane string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.slots[pane] != nil && !r.slots[pane].requested
}

// again is how a person gets a fresh invitation for s's pane.
func (s *slot) again() string {
	if s.requested {
		return `run eval "$(libtmux-mcp enroll)" in that pane again`
	}
	return "send SIGHUP to invite again"
}

// RequestError is a refused Request: Reason is one of the Reason constants, the message says
// what to do.
type RequestError struct {
	Reason string
	msg    string
}

func (e *RequestError) Error() string { return e.msg }

// Request issues an invitation for pane on a person's request (libtmux-mcp enroll typed in the
// pane), written to file, and returns its lifetime. It is refused with ReasonAgentInput when
// this server sent input to the pane at or after since (the start of the pane's shell) or is
// sending it now: then the request may have been typed by this server, not by a person. A live
// invitation of the pane is replaced; an enrolled shell stays enrolled until the new invitation
// is sourced.
func (r *Registry) Request(pane, file string, since time.Time) (time.Duration, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if in := r.inputs[pane]; in != nil && (in.inflight > 0 || !in.last.Before(since)) {
		return 0, &RequestError{Reason: ReasonAgentInput, msg: fmt.Sprintf("this server sent input to pane %s (send_keys, paste_text or run_shell_command) since its shell started, so it cannot tell that a person typed this request; enroll a pane it never typed into: open a new pane or window and run the command there", pane)}
	}
	if sent, pid := r.otherInput(pane, since); sent {
		return 0, &RequestError{Reason: ReasonAgentInput, msg: fmt.Sprintf("%s sent input to pane %s (send_keys, paste_text or run_shell_command) since its shell started, so it cannot be told that a person typed this request; enroll a pane no agent typed into: open a new pane or window and run the command there", byProcess(pid), pane)}
	}
	s := r.slots[pane]
	if s == nil {
		if len(r.slots) >= maxSlots {
			r.forgetIdleLocked()
		}
		if len(r.slots) >= maxSlots {
			return 0, &RequestError{Reason: ReasonLimit, msg: fmt.Sprintf("%d panes are invited or enrolled already; withdraw some (libtmux_mcp_unenroll in their shells) and try again", len(r.slots))}
		}
		s = &slot{pane: pane, used: map[string]bool{}, expired: map[string]bool{}, requested: true}
		r.slots[pane] = s
	}
	if s.token != "" {
		r.retireLocked(s)
	}
	token := newID()
	remove, err := r.files.Create(file, pane, token)
	if err != nil {
		return 0, fmt.Errorf("invite pane %s: %w", pane, err)
	}
	r.seq++
	s.file, s.requested = file, true
	s.token, s.remove, s.expires, s.invitedSeq, s.invitedAt = token, remove, r.now().Add(r.lifetime), r.seq, time.Now()
	s.timer = time.AfterFunc(r.lifetime, func() { r.expire(pane, token) })
	return r.lifetime, nil
}

// forgetIdleLocked forgets the requested slots with neither a live invitation nor a live
// enrollment.
func (r *Registry) forgetIdleLocked() {
	for pane, s := range r.slots {
		if s.requested && s.token == "" && (s.enrolled == nil || s.enrolled.Lost()) {
			delete(r.slots, pane)
		}
	}
}

// PaneState is one pane of Panes.
type PaneState struct {
	Pane  string
	State string // StateInvited, StateEnrolled or StateLost
	PID   int    // the enrolled shell, when enrolled
}

// Panes lists the panes that are invited, enrolled or lost, by pane id.
func (r *Registry) Panes() []PaneState {
	var out []PaneState
	for _, pane := range func() []string { r.mu.Lock(); defer r.mu.Unlock(); return sortedKeys(r.slots) }() {
		e, state := r.Lookup(pane)
		if state == StateNone {
			continue
		}
		ps := PaneState{Pane: pane, State: state}
		if state == StateEnrolled && e != nil {
			ps.PID = e.PID
		}
		out = append(out, ps)
	}
	return out
}
