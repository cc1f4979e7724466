// Package stdio is the MCP transport over the process's stdin and stdout:
// newline-delimited JSON-RPC, as go-sdk's StdioTransport, with two
// differences that keep a session alive and its answers complete.
//
// A frame that is not a JSON-RPC message does not end the session: it is
// answered with a JSON-RPC error (package frame's checks, shared with HTTP:
// -32700 when it is not JSON, -32600 when it is over MaxFrame or JSON but
// not a valid request: a wrong id type, an id no JSON-RPC peer can echo
// exactly, a batch) and the next frame is read. Nor does an answer that
// cannot be encoded: it becomes an internal error for its id. Every byte
// written to stdout is a JSON-RPC message on its own line.
//
// Stdin EOF does not drop the requests already read. go-sdk stops writing
// once its reader fails, so the connection keeps its reader open after EOF
// until every request read so far has been answered: requests the caller
// marks with CancelAtEOF (waits, runs) are cancelled at once, as a client's
// notifications/cancelled would, and answer what they observed; the others
// have Grace to answer on their own before they are cancelled too; after
// Drain the reader ends regardless. The same accounting serves a shutdown
// (AwaitAnswers): the transport is the one owner of "every call read has
// been answered".
//
// A call the client itself cancelled (notifications/cancelled) is owed no
// answer, by the protocol: it counts as answered when the cancellation is
// read, and the answer go-sdk still writes for it afterwards is dropped.
// A cancellation this transport sends itself at EOF is different: that call
// still answers what it observed.
//
// The package knows nothing about tools or tmux; batches are refused rather
// than supported.
package stdio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/frame"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults of Transport's bounds.
const (
	DefaultGrace = 2 * time.Second
	DefaultDrain = 10 * time.Second
)

// Transport is an mcp.Transport over newline-delimited JSON. The zero
// value serves os.Stdin and os.Stdout.
type Transport struct {
	In  io.ReadCloser // os.Stdin when nil
	Out io.Writer     // os.Stdout when nil

	// MaxFrame bounds one inbound frame in bytes, checked as it is read,
	// before anything is decoded; frame.DefaultMax (4 MiB) when 0. A
	// longer frame is skipped and answered -32600.
	MaxFrame int

	// CancelAtEOF reports whether a request still in flight at stdin EOF is
	// cancelled at once (a wait or a run, which would otherwise outlive its
	// client). Nil cancels none at once.
	CancelAtEOF func(*jsonrpc.Request) bool
	// Grace is how long, after stdin EOF, the other requests already read
	// have to answer before they are cancelled; DefaultGrace when 0.
	Grace time.Duration
	// Drain bounds the whole wait for answers after stdin EOF;
	// DefaultDrain when 0.
	Drain time.Duration

	// Screen answers the calls refused for their arguments before go-sdk
	// decodes them (see frame.Screen); none when nil.
	Screen *frame.Screen

	// Logger receives a warning for every refused frame; none when nil.
	Logger *slog.Logger

	conn *conn // set by Connect
}

// AwaitAnswers returns once every call read so far has been answered (a
// call the client cancelled needs no answer), or ctx ended, or the
// connection closed. A server calls it at shutdown after telling its
// handlers to stop and before closing the session: go-sdk writes nothing
// once its session is closing.
func (t *Transport) AwaitAnswers(ctx context.Context) error {
	if t.conn == nil {
		return nil
	}
	return t.conn.awaitAnswers(ctx.Done())
}

// Connect implements mcp.Transport. Call it once.
func (t *Transport) Connect(context.Context) (mcp.Connection, error) {
	if t.conn != nil {
		return nil, errors.New("stdio: Transport.Connect called twice; a Transport serves one session")
	}
	c := &conn{
		in:       t.In,
		out:      t.Out,
		max:      t.MaxFrame,
		urgent:   t.CancelAtEOF,
		grace:    t.Grace,
		drain:    t.Drain,
		log:      t.Logger,
		screen:   t.Screen,
		incoming: make(chan jsonrpc.Message),
		closed:   make(chan struct{}),
		readDone: make(chan struct{}),
		pending:  map[jsonrpc.ID]*inflight{},
		settled:  map[jsonrpc.ID]int{},
		reqs:     map[jsonrpc.ID][]*jsonrpc.Request{},
		changed:  make(chan struct{}),
	}
	t.conn = c
	if c.in == nil {
		c.in = os.Stdin
	}
	if c.out == nil {
		c.out = os.Stdout
	}
	if c.max <= 0 {
		c.max = frame.DefaultMax
	}
	if c.grace <= 0 {
		c.grace = DefaultGrace
	}
	if c.drain <= 0 {
		c.drain = DefaultDrain
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	go c.readLoop()
	return c, nil
}

// inflight is a request read and not yet answered.
type inflight struct {
	n      int  // times this id is in flight (a duplicate is refused before go-sdk; see decode)
	urgent bool // cancelled at once at EOF
}

// releaseParams drops the params of the oldest request read with id once
// it is answered. go-sdk's handler queue keeps the last requests it ran
// referenced (it pops from the front of a slice), so without this a 4 MiB
// frame's params stayed in memory long after its answer.
func (c *conn) releaseParams(id jsonrpc.ID) {
	if rs := c.reqs[id]; len(rs) > 0 {
		rs[0].Params = nil
		if len(rs) == 1 {
			delete(c.reqs, id)
		} else {
			c.reqs[id] = rs[1:]
		}
	}
}

type conn struct {
	in     io.ReadCloser
	out    io.Writer
	max    int
	urgent func(*jsonrpc.Request) bool
	grace  time.Duration
	drain  time.Duration
	log    *slog.Logger
	relief frame.Relief
	screen *frame.Screen

	incoming chan jsonrpc.Message // frames for Read; closed when reading is over
	readDone chan struct{}        // closed when readLoop returns
	readErr  error                // why reading ended (io.EOF after a drain); set before incoming closes

	writeMu sync.Mutex

	mu      sync.Mutex
	pending map[jsonrpc.ID]*inflight
	settled map[jsonrpc.ID]int                // answers owed to nobody: calls the client cancelled, still running
	reqs    map[jsonrpc.ID][]*jsonrpc.Request // calls read and not answered, for releaseParams
	total   int                               // requests read and not answered (ids can repeat)
	changed chan struct{}                     // closed and replaced whenever total drops

	closeOnce sync.Once
	closed    chan struct{}
}

func (c *conn) SessionID() string { return "" }

// Read returns the next message. After stdin EOF it returns io.EOF only
// once the requests already read are answered, or Drain has passed.
func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	case msg, ok := <-c.incoming:
		if !ok {
			return nil, c.readErr
		}
		return msg, nil
	}
}

// track counts req as read and unanswered.
func (c *conn) track(req *jsonrpc.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.pending[req.ID]
	if p == nil {
		p = &inflight{}
		c.pending[req.ID] = p
	}
	p.n++
	c.reqs[req.ID] = append(c.reqs[req.ID], req)
	if c.urgent != nil && c.urgent(req) {
		p.urgent = true
	}
	c.total++
}

// answered records a response for id and reports whether it is to be
// written: an answer to a call the client cancelled is not.
func (c *conn) answered(id jsonrpc.ID) (write bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.releaseParams(id) // the handler has returned: its answer is here
	if n := c.settled[id]; n > 0 {
		if n == 1 {
			delete(c.settled, id)
		} else {
			c.settled[id] = n - 1
		}
		return false
	}
	if p := c.pending[id]; p != nil {
		if p.n--; p.n == 0 {
			delete(c.pending, id)
		}
	} else if id.IsValid() || c.total == 0 {
		return true // not a call this transport read
	}
	// A response without an id (an error go-sdk could not attribute)
	// still answers one request.
	c.dropOne()
	return true
}

// clientCancelled settles a call the client cancelled: no answer is owed.
func (c *conn) clientCancelled(params json.RawMessage) {
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	pend := c.pending[id]
	if pend == nil {
		return // answered already, or never read
	}
	if pend.n--; pend.n == 0 {
		delete(c.pending, id)
	}
	c.settled[id]++
	c.dropOne()
}

// dropOne counts one request answered; c.mu is held.
func (c *conn) dropOne() {
	c.total--
	close(c.changed)
	c.changed = make(chan struct{})
}

// Write writes msg as one line. It may be called concurrently.
func (c *conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := encode(msg)
	if err != nil {
		resp, ok := msg.(*jsonrpc.Response)
		if !ok || !resp.ID.IsValid() {
			return fmt.Errorf("encode a JSON-RPC message: %w", err)
		}
		// An answer that cannot be encoded (go-sdk quotes a resource URI
		// with %q, which is not JSON for a control character) must not
		// end the session: the call gets an internal error instead.
		c.log.Error("an answer could not be encoded; answered an internal error instead",
			slog.Any("id", resp.ID.Raw()), slog.String("error", frame.Quote(err.Error(), 200)))
		data, err = encode(&jsonrpc.Response{ID: resp.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
			Message: "internal error: the answer could not be encoded as JSON; this is a bug in libtmux-mcp or go-sdk, please report the request"}})
		if err != nil {
			return fmt.Errorf("encode a JSON-RPC message: %w", err)
		}
	}
	if resp, ok := msg.(*jsonrpc.Response); ok && !c.answered(resp.ID) {
		return nil
	}
	return c.writeLine(data)
}

func (c *conn) writeLine(data []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	select {
	case <-c.closed:
		return mcp.ErrConnectionClosed
	default:
	}
	_, err := c.out.Write(append(data, '\n'))
	return err
}

// Close closes stdin (which ends a blocked read) and stops writing. It may
// be called more than once.
func (c *conn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		c.writeMu.Lock()
		close(c.closed)
		c.writeMu.Unlock()
		err = c.in.Close()
	})
	return err
}

// readLoop reads frames until stdin ends, answers the ones that are not
// JSON-RPC and hands the others to Read; after EOF it drains.
func (c *conn) readLoop() {
	defer close(c.readDone)
	r := bufio.NewReaderSize(c.in, 64<<10)
	var err error
	for {
		var data []byte
		var tooLong bool
		var id json.RawMessage
		data, tooLong, id, err = readFrame(r, c.max)
		c.relief.Saw(len(data))
		if tooLong {
			ref := frame.TooLong(c.max)
			ref.ID = id
			c.refuse(ref, nil)
			c.relief.Saw(c.max)
		} else if len(bytes.TrimSpace(data)) > 0 {
			if msg := c.decode(data); msg != nil {
				if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "notifications/cancelled" && !req.IsCall() {
					c.clientCancelled(req.Params)
				}
				if !c.deliver(msg) {
					return
				}
			}
		}
		if err != nil {
			break
		}
	}
	if errors.Is(err, io.EOF) {
		c.drainAfterEOF()
	}
	select {
	case <-c.closed:
		c.readErr = io.EOF
	default:
		c.readErr = err
	}
	close(c.incoming)
}

// deliver hands msg to Read; false when the connection closed first. A
// call counts as in flight from here, before the reader can reach EOF.
func (c *conn) deliver(msg jsonrpc.Message) bool {
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		c.track(req)
	}
	select {
	case c.incoming <- msg:
		return true
	case <-c.closed:
		return false
	}
}

// readFrame reads one line of at most max bytes (without its newline). A
// longer line is consumed and reported tooLong, with its top-level "id"
// when one is found (frame.IDScanner: the rest is not kept). err is io.EOF
// at the end of the input, with the last unterminated line, if any, in
// line.
func readFrame(r *bufio.Reader, max int) (line []byte, tooLong bool, id json.RawMessage, err error) {
	var scan *frame.IDScanner
	for {
		chunk, e := r.ReadSlice('\n')
		switch {
		case scan != nil:
			scan.Write(chunk)
		case len(line)+len(chunk) > max+1: // +1: the newline itself
			scan = &frame.IDScanner{}
			scan.Write(line)
			scan.Write(chunk)
			tooLong, line = true, nil
		default:
			line = append(line, chunk...)
		}
		if scan != nil && e != bufio.ErrBufferFull {
			id = scan.ID()
		}
		switch {
		case e == nil:
			return bytes.TrimSuffix(line, []byte("\n")), tooLong, id, nil
		case errors.Is(e, bufio.ErrBufferFull):
			continue
		default:
			return line, tooLong, id, e
		}
	}
}

// decode turns a frame into a message, or answers it and returns nil: with
// a JSON-RPC error (see package frame), or with a tool error when the
// screen refuses the call's arguments. A call whose id is still in flight
// is refused with id null: go-sdk would drop it without an answer, and an
// answer carrying the id would be taken for the first call's.
func (c *conn) decode(data []byte) jsonrpc.Message {
	msg, ref := frame.Decode(data)
	if ref != nil {
		c.refuse(ref, data)
		return nil
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		if c.inFlight(req.ID) {
			c.refuse(&frame.Refusal{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf(
				"request id %s is already in use by a call in flight; wait for its answer or send a new id", frame.Quote(idText(req.ID), 100))}, data)
			return nil
		}
		if answer := c.screen.Answer("", req); answer != nil {
			if err := c.writeLine(answer); err != nil {
				c.log.Warn("write an answer", slog.Any("error", err))
			}
			return nil
		}
	}
	return msg
}

// idText is id as it was sent, for messages.
func idText(id jsonrpc.ID) string {
	if s, ok := id.Raw().(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprint(id.Raw())
}

// inFlight reports whether a call with id was read and is not answered.
func (c *conn) inFlight(id jsonrpc.ID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pending[id] != nil
}

// refuse writes the answer to a frame that never reached the SDK.
func (c *conn) refuse(ref *frame.Refusal, data []byte) {
	c.log.Warn("refused a JSON-RPC frame", slog.Int64("code", ref.Code), slog.String("reason", ref.Message),
		slog.String("frame", frame.Quote(string(data), 200)))
	if err := c.writeLine(ref.Response()); err != nil {
		c.log.Warn("write a refusal", slog.Any("error", err))
	}
}

// drainAfterEOF waits, after stdin EOF, until every request read so far is
// answered: urgent ones are cancelled at once, the rest after the grace;
// it gives up after the drain bound or when the connection closes.
func (c *conn) drainAfterEOF() {
	ctx, cancel := context.WithTimeout(context.Background(), c.drain)
	defer cancel()
	cancelled := map[jsonrpc.ID]bool{}
	c.cancel(cancelled, true)
	graceDone := make(chan struct{})
	grace := time.AfterFunc(c.grace, func() {
		defer close(graceDone)
		c.cancel(cancelled, false)
	})
	if errors.Is(c.awaitAnswers(ctx.Done()), errDeadline) {
		c.mu.Lock()
		total := c.total
		c.mu.Unlock()
		c.log.Warn("stdin closed; gave up waiting for answers", slog.Int("unanswered", total))
	}
	if !grace.Stop() {
		<-graceDone // its cancellations are delivered before reading ends
	}
}

// awaitAnswers returns nil once every call read so far is answered,
// errDeadline when stop is closed first, mcp.ErrConnectionClosed when the
// connection closes first.
func (c *conn) awaitAnswers(stop <-chan struct{}) error {
	for {
		c.mu.Lock()
		total, changed := c.total, c.changed
		c.mu.Unlock()
		if total <= 0 {
			return nil
		}
		select {
		case <-changed:
		case <-stop:
			return errDeadline
		case <-c.closed:
			c.mu.Lock()
			total = c.total
			c.mu.Unlock()
			if total <= 0 {
				return nil
			}
			return mcp.ErrConnectionClosed
		}
	}
}

var errDeadline = errors.New("stdio: gave up waiting for answers")

// cancel delivers notifications/cancelled for the pending requests (only
// the urgent ones when onlyUrgent), each id once.
func (c *conn) cancel(done map[jsonrpc.ID]bool, onlyUrgent bool) {
	c.mu.Lock()
	var ids []jsonrpc.ID
	for id, p := range c.pending {
		if !done[id] && (p.urgent || !onlyUrgent) {
			done[id] = true
			ids = append(ids, id)
		}
	}
	c.mu.Unlock()
	for _, id := range ids {
		params, _ := json.Marshal(map[string]any{"requestId": id.Raw(), "reason": "the client closed stdin"})
		if !c.deliver(&jsonrpc.Request{Method: "notifications/cancelled", Params: params}) {
			return
		}
	}
}

// CancelTools returns a CancelAtEOF that picks the tools/call requests of
// the named tools.
func CancelTools(names ...string) func(*jsonrpc.Request) bool {
	set := map[string]bool{}
	for _, n := range names {
		set[n] = true
	}
	return func(r *jsonrpc.Request) bool {
		if r.Method != "tools/call" {
			return false
		}
		var p struct {
			Name string `json:"name"`
		}
		return json.Unmarshal(r.Params, &p) == nil && set[p.Name]
	}
}
