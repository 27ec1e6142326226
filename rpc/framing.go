package rpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"
)

// Dialect is the wire dialect a connection speaks (PROTOCOL.md §1).
type Dialect int

// The two dialects: LSP base-protocol framing, or newline-delimited JSON
// as ACP clients speak it.
const (
	DialectLSP Dialect = iota
	DialectACP
)

func (d Dialect) String() string {
	if d == DialectACP {
		return "acp"
	}
	return "lsp"
}

// maxFrame bounds one message. A frame that declares more is answered with
// a parse error and skipped, so a hostile length cannot make the daemon
// allocate without limit.
const maxFrame = 256 << 20

// DetectDialect peeks at the first non-blank byte: '{' means ACP's
// newline-delimited JSON, anything else (normally the 'C' of
// Content-Length) the LSP header framing.
func DetectDialect(r *bufio.Reader) (Dialect, error) {
	for {
		b, err := r.Peek(1)
		if err != nil {
			return DialectLSP, err
		}
		switch b[0] {
		case ' ', '\t', '\r', '\n':
			r.ReadByte()
			continue
		case '{':
			return DialectACP, nil
		}
		return DialectLSP, nil
	}
}

// stream frames JSON-RPC messages over a byte transport and keeps serving
// through bad input: a frame that is not JSON is answered with -32700, one
// that is JSON but not a JSON-RPC message with -32600, and reading goes on
// at the next frame. jsonrpc2's own framers end the connection on the first
// bad frame, which would let one stray byte kill the daemon.
//
// It implements jsonrpc2.Stream plus the raw-frame methods the connection
// prefers (ReadFrame, WriteFrame).
type stream struct {
	dialect Dialect
	r       *bufio.Reader
	w       io.Writer
	closer  io.Closer
	// onBad, when set, is told about each rejected frame (for logging).
	onBad func(error)
	body  []byte
	// grown: the read loop's stack has been grown (growReadStack); used
	// by the read loop only.
	grown bool

	// Writes go through one writer goroutine, which writes whatever has
	// queued up in a single call. Under load (many sessions streaming at
	// once) this replaces a hand-off of a mutex per message with one
	// write per batch; order is kept, since there is one queue.
	queue     chan []byte
	quit      chan struct{} // closed by Close: flush and stop
	written   chan struct{} // closed when the writer has stopped
	closeOnce sync.Once
	werr      error // the first write error; guarded by errMu
	errMu     sync.Mutex

	replyMu    sync.Mutex
	afterReply map[string][]func() // by the request id's JSON, in the order filed; guarded by replyMu

	// redact, when set, scrubs secrets from each outgoing message.
	redact func([]byte) []byte
}

// flushWait bounds how long Close waits for queued frames to be written.
const flushWait = time.Second

func newStream(d Dialect, r *bufio.Reader, w io.Writer, c io.Closer, onBad func(error)) *stream {
	s := &stream{dialect: d, r: r, w: w, closer: c, onBad: onBad,
		queue: make(chan []byte, 256), quit: make(chan struct{}), written: make(chan struct{})}
	go s.writeLoop()
	return s
}

// writeLoop writes queued frames, coalescing those already waiting.
func (s *stream) writeLoop() {
	defer close(s.written)
	var buf []byte
	write := func() {
		if len(buf) == 0 {
			return
		}
		if _, err := s.w.Write(buf); err != nil {
			s.errMu.Lock()
			if s.werr == nil {
				s.werr = err
			}
			s.errMu.Unlock()
		}
		buf = buf[:0]
	}
	gather := func() {
		for len(buf) < 1<<20 {
			select {
			case f := <-s.queue:
				buf = append(buf, f...)
			default:
				return
			}
		}
	}
	for {
		select {
		case f := <-s.queue:
			buf = append(buf, f...)
			gather()
			write()
			if cap(buf) > 4<<20 {
				buf = nil // don't keep a huge buffer after one big message
			}
		case <-s.quit:
			gather()
			write()
			return
		}
	}
}

// The header of an LSP frame is a few short lines (Content-Length and
// perhaps Content-Type), so it is bounded far below a body: a line or a
// block over these limits is answered with a parse error and skipped
// without being kept in memory.
const (
	maxHeaderLine  = 4 << 10
	maxHeaderBlock = 16 << 10
)

// WriteFrame frames one already-encoded message and writes it in one call.
func (s *stream) WriteFrame(_ context.Context, data []byte) (int64, error) {
	if s.redact != nil {
		data = s.redact(data)
	}
	var buf []byte
	if s.dialect == DialectACP {
		buf = make([]byte, 0, len(data)+1)
		buf = append(buf, data...)
		buf = append(buf, '\n')
	} else {
		buf = make([]byte, 0, len(data)+32)
		buf = fmt.Appendf(buf, "Content-Length: %d\r\n\r\n", len(data))
		buf = append(buf, data...)
	}
	s.errMu.Lock()
	err := s.werr
	s.errMu.Unlock()
	if err != nil {
		s.replied(data) // it will never be written: what waits for it runs now
		return 0, err
	}
	select {
	case s.queue <- buf:
		s.replied(data)
		return int64(len(buf)), nil
	case <-s.quit:
		s.replied(data)
		return 0, io.ErrClosedPipe
	}
}

// onReply runs fn once the reply to the request id is queued, or once it
// cannot be (the stream closed, its output broken, the reply not
// encodable): whatever is written after that follows the reply on the
// wire. A client that blocks on a request (eglot's executeCommand) then
// reads its answer before any request the work it started sends.
func (s *stream) onReply(id jsonrpc2.ID, fn func()) {
	s.replyMu.Lock()
	defer s.replyMu.Unlock()
	if s.afterReply == nil {
		s.afterReply = make(map[string][]func())
	}
	k := idKey(id)
	s.afterReply[k] = append(s.afterReply[k], fn)
}

// idKey is an id as a response's "id" member spells it. (jsonrpc2.ID has
// no JSON marshaller of its own: json.Marshal gives "{}" for every id.)
func idKey(id jsonrpc2.ID) string {
	if n, ok := id.Number(); ok {
		return strconv.FormatInt(n, 10)
	}
	str, _ := id.StringValue()
	b, _ := json.Marshal(str)
	return string(b)
}

// replied runs the onReply function of the response in data, if any.
func (s *stream) replied(data []byte) {
	s.replyMu.Lock()
	n := len(s.afterReply)
	s.replyMu.Unlock()
	if n == 0 {
		return
	}
	var m struct {
		Method json.RawMessage `json:"method"`
		ID     json.RawMessage `json:"id"`
	}
	if json.Unmarshal(data, &m) != nil || len(m.Method) > 0 || len(m.ID) == 0 {
		return
	}
	s.replyDone(string(m.ID))
}

// replyDone runs the onReply functions filed under the id key, if any.
func (s *stream) replyDone(id string) {
	s.replyMu.Lock()
	fns := s.afterReply[id]
	delete(s.afterReply, id)
	s.replyMu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// Read implements jsonrpc2.Stream for callers that do not use raw frames.
func (s *stream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	body, n, err := s.ReadFrame(ctx)
	if err != nil {
		return nil, 0, err
	}
	msg, err := jsonrpc2.DecodeMessage(bytes.Clone(body))
	return msg, n, err
}

// Write implements jsonrpc2.Stream.
func (s *stream) Write(ctx context.Context, msg jsonrpc2.Message) (int64, error) {
	data, err := jsonrpc2.EncodeMessage(msg)
	if err != nil {
		if resp, ok := msg.(*jsonrpc2.Response); ok {
			s.replyDone(idKey(resp.ID()))
		}
		return 0, err
	}
	return s.WriteFrame(ctx, data)
}

// Close closes the transport.
func (s *stream) Close() error {
	s.closeOnce.Do(func() {
		close(s.quit)
		select {
		case <-s.written:
		case <-time.After(flushWait): // the peer stopped reading
		}
	})
	if s.closer == nil {
		return nil
	}
	return s.closer.Close()
}
