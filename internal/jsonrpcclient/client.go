// Package jsonrpcclient is the one JSON-RPC client this repository has:
// the fake editor of the tests, the in-process client of `cline-ls demo`
// and `exec`, the test drivers of a daemon process and the benchmark
// programs speak to the daemon through it, and the MCP client of
// tools/mcpbridge to MCP servers. It frames messages in either dialect
// (LSP's Content-Length headers or ACP's one JSON value per line), bounds
// the frames it reads, matches replies to requests by id, can send a
// cancel notification for a request given up, answers the server's
// requests with handlers installed per method, and keeps the server's
// notifications and requests in wire order for the caller to read or
// await.
package jsonrpcclient

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"go.lsp.dev/jsonrpc2"
)

// Framing is how messages are delimited on the wire.
type Framing int

const (
	// LSP frames each message with a Content-Length header.
	LSP Framing = iota
	// ACP writes each message as one line of JSON.
	ACP
)

// maxFrame bounds a frame the client reads unless Options.MaxFrame says
// otherwise; the daemon's own frames are far smaller.
const maxFrame = 64 << 20

// Frame returns body framed for the wire.
func Frame(f Framing, body []byte) []byte {
	if f == ACP {
		return append(append([]byte(nil), body...), '\n')
	}
	return append(fmt.Appendf(nil, "Content-Length: %d\r\n\r\n", len(body)), body...)
}

// ReadFrame reads the body of the next frame. In the ACP framing that is
// the next line without its end (empty for a blank line).
func ReadFrame(r *bufio.Reader, f Framing) ([]byte, error) {
	return readFrame(r, f, maxFrame)
}

// ErrFrameTooLong is why reading ends at a frame longer than the bound.
var ErrFrameTooLong = errors.New("a message longer than the bound")

// readFrame is ReadFrame with a bound on the frame's length, so that a
// peer that never ends a line cannot make the client buffer without
// limit.
func readFrame(r *bufio.Reader, f Framing, limit int) ([]byte, error) {
	if f == ACP {
		var line []byte
		for {
			chunk, err := r.ReadSlice('\n')
			if len(line)+len(chunk) > limit+2 { // the line end is not the message's
				return nil, fmt.Errorf("%w of %d bytes", ErrFrameTooLong, limit)
			}
			line = append(line, chunk...)
			if err == bufio.ErrBufferFull {
				continue
			}
			if err != nil && (len(line) == 0 || !errors.Is(err, io.EOF)) {
				return nil, err
			}
			return bytes.TrimRight(line, "\r\n"), nil
		}
	}
	length := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			if errors.Is(err, io.EOF) && line == "" && length < 0 {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("reading a frame header: %w", err)
		}
		line = strings.TrimSpace(line)
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < 0 {
				return nil, fmt.Errorf("bad Content-Length %q", v)
			}
			if n > limit {
				return nil, fmt.Errorf("%w of %d bytes: Content-Length %d", ErrFrameTooLong, limit, n)
			}
			length = n
		}
	}
	if length < 0 {
		return nil, errors.New("a frame header without Content-Length")
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, fmt.Errorf("reading a frame body: %w", err)
	}
	return body, nil
}

// Message is a notification or request the server sent.
type Message struct {
	Method string
	Params json.RawMessage
	// ID is the request's id, nil for a notification.
	ID json.RawMessage
}

// Handler answers a server-to-client request. Returning (nil, nil) answers
// null; an error that is a *jsonrpc2.Error keeps its code, any other is
// sent as an internal error with its message.
type Handler func(ctx context.Context, params json.RawMessage) (any, error)

// Options configure a Client.
type Options struct {
	Framing Framing
	// Observe, when set, sees each message the server sends, on the read
	// loop, in wire order, before the message is handled. It must not
	// block: replies cannot be read meanwhile.
	Observe func(Message)
	// Discard keeps no messages (Messages and Await then see none), for
	// long runs that only observe.
	Discard bool
	// MaxFrame bounds a frame read from the server, in bytes; a longer one
	// ends the connection with ErrFrameTooLong. Zero means 64 MiB.
	MaxFrame int
	// Cancel, when set, names the notification that tells the server a
	// request was given up (its context ended before the answer): it is
	// given the request's method and id and returns the notification's
	// method and params, or "" to send nothing.
	Cancel func(method string, id json.RawMessage) (string, any)
	// Malformed, when set, sees each frame that is not a JSON-RPC message,
	// on the read loop; such frames are skipped either way.
	Malformed func(body []byte, err error)
}

// ErrClosed is returned by calls that were waiting when the connection
// ended.
var ErrClosed = errors.New("jsonrpcclient: connection closed")

// Client is a JSON-RPC connection to a server.
type Client struct {
	framing   Framing
	observe   func(Message)
	discard   bool
	maxFrame  int
	cancel    func(method string, id json.RawMessage) (string, any)
	malformed func(body []byte, err error)
	w         io.WriteCloser
	ctx       context.Context // cancelled when the connection ends: handlers' context
	stop      context.CancelFunc
	done      chan struct{}  // closed when the read loop has returned
	handled   sync.WaitGroup // handlers and background sends; the read loop's end waits for them

	wmu sync.Mutex // guards writes to w: one frame at a time

	mu       sync.Mutex // guards the fields below
	nextID   int64
	pending  map[string]chan response // by the request id's JSON
	handlers map[string]Handler
	msgs     []Message
	arrived  chan struct{} // closed and replaced when a message is kept
	readErr  error
}

type response struct {
	result json.RawMessage
	err    *jsonrpc2.Error
}

// New starts a client that reads the server's messages from r and writes
// its own to w, and returns it. Close ends it.
func New(r io.Reader, w io.WriteCloser, opts Options) *Client {
	ctx, stop := context.WithCancel(context.Background())
	c := &Client{
		framing:   opts.Framing,
		observe:   opts.Observe,
		discard:   opts.Discard,
		maxFrame:  cmp.Or(opts.MaxFrame, maxFrame),
		cancel:    opts.Cancel,
		malformed: opts.Malformed,
		w:         w,
		ctx:       ctx,
		stop:      stop,
		done:      make(chan struct{}),
		pending:   make(map[string]chan response),
		handlers:  make(map[string]Handler),
		arrived:   make(chan struct{}),
	}
	go c.read(bufio.NewReaderSize(r, 64<<10)) // fewer hand-overs on a pipe when the server writes many frames at once
	return c
}

// Handle installs the answer to the server's requests of one method (nil
// removes it). A request without a handler is answered -32601.
func (c *Client) Handle(method string, h Handler) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if h == nil {
		delete(c.handlers, method)
		return
	}
	c.handlers[method] = h
}

func (c *Client) read(r *bufio.Reader) {
	defer close(c.done)
	var err error
	for {
		var body []byte
		body, err = readFrame(r, c.framing, c.maxFrame)
		if err != nil {
			break
		}
		// The body is the frame's own: what the message holds may be kept.
		msg, err := jsonrpc2.DecodeMessage(body)
		if err != nil {
			// Not a JSON-RPC message: nothing to match it to.
			if c.malformed != nil {
				c.malformed(body, err)
			}
			continue
		}
		switch m := msg.(type) {
		case *jsonrpc2.Response:
			c.deliver(idJSON(m.ID()), json.RawMessage(m.Result()), m.Err())
		case *jsonrpc2.Call:
			c.received(Message{Method: m.Method(), Params: json.RawMessage(m.Params()), ID: idJSON(m.ID())})
		case *jsonrpc2.Notification:
			c.received(Message{Method: m.Method(), Params: json.RawMessage(m.Params())})
		}
	}
	c.stop()
	c.mu.Lock()
	c.readErr = err
	for id, ch := range c.pending {
		delete(c.pending, id)
		close(ch)
	}
	close(c.arrived)
	c.arrived = nil
	c.mu.Unlock()
	c.handled.Wait()
}

// idJSON is a request id as it is written in JSON.
func idJSON(id jsonrpc2.ID) json.RawMessage {
	if n, ok := id.Number(); ok {
		return strconv.AppendInt(nil, n, 10)
	}
	s, _ := id.StringValue()
	b, _ := json.Marshal(s)
	return b
}

// deliver hands a reply to the call waiting for it.
func (c *Client) deliver(id json.RawMessage, result json.RawMessage, err error) {
	c.mu.Lock()
	ch := c.pending[string(id)]
	delete(c.pending, string(id))
	c.mu.Unlock()
	if ch == nil {
		return
	}
	r := response{result: result}
	if err != nil && !errors.As(err, &r.err) {
		r.err = &jsonrpc2.Error{Code: jsonrpc2.InternalError, Message: err.Error()}
	}
	ch <- r
}

// received keeps, observes and, for a request, answers a server message.
func (c *Client) received(m Message) {
	if c.observe != nil {
		c.observe(m)
	}
	c.mu.Lock()
	if !c.discard {
		c.msgs = append(c.msgs, m)
		close(c.arrived)
		c.arrived = make(chan struct{})
	}
	h := c.handlers[m.Method]
	c.mu.Unlock()
	if m.ID == nil {
		return
	}
	// Answering may wait on the server, which can only be read by this
	// loop: the handler runs beside it.
	c.handled.Add(1)
	go func() {
		defer c.handled.Done()
		var result any
		var err error
		if h == nil {
			err = &jsonrpc2.Error{Code: jsonrpc2.MethodNotFound, Message: "client: no handler for " + m.Method}
		} else {
			result, err = h(c.ctx, m.Params)
		}
		c.reply(m.ID, result, err)
	}()
}

// resultReply and errorReply are the client's answers to a server's
// request, one or the other: a result is sent even when null, an error
// never beside one. Members are in sorted order, as the map they
// replaced wrote them.
type resultReply struct {
	ID      json.RawMessage `json:"id"`
	JSONRPC string          `json:"jsonrpc"`
	Result  any             `json:"result"`
}

type errorReply struct {
	Error   *jsonrpc2.Error `json:"error"`
	ID      json.RawMessage `json:"id"`
	JSONRPC string          `json:"jsonrpc"`
}

func (c *Client) reply(id json.RawMessage, result any, err error) {
	var body []byte
	var merr error
	if err != nil {
		var we *jsonrpc2.Error
		if !errors.As(err, &we) {
			we = &jsonrpc2.Error{Code: jsonrpc2.InternalError, Message: err.Error()}
		}
		body, merr = json.Marshal(errorReply{Error: we, ID: id, JSONRPC: "2.0"})
	} else {
		body, merr = json.Marshal(resultReply{ID: id, JSONRPC: "2.0", Result: result})
	}
	if merr != nil {
		body, _ = json.Marshal(errorReply{Error: &jsonrpc2.Error{Code: jsonrpc2.InternalError, Message: merr.Error()}, ID: id, JSONRPC: "2.0"})
	}
	c.write(body)
}

func (c *Client) write(body []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.w.Write(Frame(c.framing, body))
	return err
}

// outgoing is a request, or without an ID a notification.
type outgoing struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  any             `json:"params,omitempty"`
}

// send writes a request or notification.
func (c *Client) send(id json.RawMessage, method string, params any) error {
	body, err := json.Marshal(outgoing{"2.0", id, method, params})
	if err != nil {
		return fmt.Errorf("encoding %s: %w", method, err)
	}
	return c.write(body)
}

// Call sends a request and decodes its result into result (may be nil). A
// JSON-RPC error answer is returned as a *jsonrpc2.Error.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	raw, err := c.CallRaw(ctx, method, params)
	if err != nil {
		return err
	}
	if result != nil && len(raw) > 0 {
		return json.Unmarshal(raw, result)
	}
	return nil
}

// CallRaw sends a request and returns its result as it came.
func (c *Client) CallRaw(ctx context.Context, method string, params any) (json.RawMessage, error) {
	ch := make(chan response, 1)
	c.mu.Lock()
	if c.arrived == nil {
		c.mu.Unlock()
		return nil, c.closedErr()
	}
	c.nextID++
	id := json.RawMessage(strconv.FormatInt(c.nextID, 10))
	c.pending[string(id)] = ch
	c.mu.Unlock()
	if err := c.send(id, method, params); err != nil {
		c.forget(id)
		return nil, fmt.Errorf("sending %s: %w", method, err)
	}
	select {
	case r, ok := <-ch:
		if !ok {
			return nil, c.closedErr()
		}
		if r.err != nil {
			return nil, r.err
		}
		return r.result, nil
	case <-ctx.Done():
		if c.forget(id) && c.cancel != nil {
			if m, p := c.cancel(method, id); m != "" {
				c.background(func() {
					_ = c.send(nil, m, p) // the caller has gone: a failed send changes nothing for it
				})
			}
		}
		return nil, ctx.Err()
	}
}

// background runs f beside the caller, unless the connection has ended;
// the read loop's end waits for it. A write can wait on a server that
// does not read, and the caller of a given-up request must not.
func (c *Client) background(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.arrived == nil {
		return
	}
	// Added under mu while open: the read loop waits only after closing.
	c.handled.Add(1)
	go func() {
		defer c.handled.Done()
		f()
	}()
}

// closedErr is ErrClosed, with the read loop's reason when that was not
// the server's output ending.
func (c *Client) closedErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.readErr != nil && !errors.Is(c.readErr, io.EOF) {
		return fmt.Errorf("%w: %w", ErrClosed, c.readErr)
	}
	return ErrClosed
}

// forget drops a request's wait and reports whether it was still
// pending (not answered, not ended with the connection).
func (c *Client) forget(id json.RawMessage) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.pending[string(id)]
	delete(c.pending, string(id))
	return ok
}

// Notify sends a notification.
func (c *Client) Notify(ctx context.Context, method string, params any) error {
	return c.send(nil, method, params)
}

// Messages returns what the server sent with this method so far ("" for
// all).
func (c *Client) Messages(method string) []Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Message
	for _, m := range c.msgs {
		if method == "" || m.Method == method {
			out = append(out, m)
		}
	}
	return out
}

// Await waits until the server has sent a message of method for which ok
// holds (ok nil: any), and returns it. It looks at every message kept so
// far, not only at those that come after the call.
func (c *Client) Await(ctx context.Context, method string, ok func(json.RawMessage) bool) (Message, error) {
	seen := 0
	for {
		c.mu.Lock()
		msgs := c.msgs[seen:]
		ch := c.arrived
		seen = len(c.msgs)
		c.mu.Unlock()
		for _, m := range msgs {
			if m.Method == method && (ok == nil || ok(m.Params)) {
				return m, nil
			}
		}
		if ch == nil {
			return Message{}, fmt.Errorf("waiting for %s: %w", method, ErrClosed)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return Message{}, fmt.Errorf("waiting for %s: %w", method, ctx.Err())
		}
	}
}

// Close closes the client's writing end. The server then sees its input
// end; the read loop returns once the server's output ends (Done).
func (c *Client) Close() error {
	return c.w.Close()
}

// Done is closed when the server's output has ended and every handler has
// returned.
func (c *Client) Done() <-chan struct{} { return c.done }
