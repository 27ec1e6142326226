package mcpbridge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cline-ls/cline-ls/internal/proc"
)

// The three transports MCP servers are reached by, as SDK transports
// with the daemon's bounds around them: a stdio child process started
// through internal/proc (the SDK's own command transport would start it
// itself), Streamable HTTP and the older HTTP with Server-Sent Events.

// terminateAfter is how long a stdio server has to exit once its input
// is closed, and then once it is sent SIGTERM, before it is killed.
const terminateAfter = 5 * time.Second

// ErrMessageTooLong is why a connection was closed: the server sent a
// message longer than maxMessage.
var ErrMessageTooLong = fmt.Errorf("the server sent a message longer than %d bytes", maxMessage)

// stdioLink starts cmd through proc, so that it dies with the daemon (and
// its marked descendants with it) rather than live on, and runs the SDK's
// newline-delimited transport over its stdin and stdout. It records the
// process's group in c.
func stdioLink(cmd *exec.Cmd, c *conn, logger *slog.Logger) (link, error) {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return link{}, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		stdin.Close()
		return link{}, err
	}
	g, err := proc.Start(cmd, false, nil) // a failed start closes the pipes
	if err != nil {
		return link{}, err
	}
	c.group = g
	lr := newLineReader(stdout, logger)
	return link{
		transport: &mcp.IOTransport{Reader: lr, Writer: stdin, MaxLineLength: maxMessage + 1},
		wait:      func() { endProcess(cmd) },
		failed:    lr.failed,
	}, nil
}

// endProcess waits for a server whose input is closed: it has
// terminateAfter to exit, then as long again after SIGTERM, then it is
// killed. Waiting also closes stdout (after cmd.WaitDelay at most), so
// the session's read loop ends too.
func endProcess(cmd *exec.Cmd) {
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait() // the exit status is read from cmd.ProcessState
		close(exited)
	}()
	wait := func() bool {
		t := time.NewTimer(terminateAfter)
		defer t.Stop()
		select {
		case <-exited:
			return true
		case <-t.C:
			return false
		}
	}
	if wait() {
		return
	}
	if cmd.Process.Signal(syscall.SIGTERM) == nil && wait() {
		return
	}
	_ = cmd.Process.Kill()
	<-exited
}

// lineReader stands between a stdio server's output and the SDK: it
// passes on one JSON value per line, skips (and logs) lines that are not
// JSON, as a server's stray print would otherwise end the session, and
// ends the stream with ErrMessageTooLong at a line longer than
// maxMessage.
type lineReader struct {
	src    io.ReadCloser
	br     *bufio.Reader
	logger *slog.Logger
	buf    bytes.Buffer // what is left of the line being passed on

	mu  sync.Mutex
	err error // ErrMessageTooLong once met
}

func newLineReader(src io.ReadCloser, logger *slog.Logger) *lineReader {
	return &lineReader{src: src, br: bufio.NewReaderSize(src, 64<<10), logger: logger}
}

func (r *lineReader) Read(p []byte) (int, error) {
	for r.buf.Len() == 0 {
		line, err := r.line()
		if err != nil {
			return 0, err
		}
		if t := bytes.TrimSpace(line); len(t) > 0 {
			if !json.Valid(t) {
				r.logger.Warn("mcp: skipped a message from the server that is not JSON-RPC", "start", string(t[:min(len(t), 200)]))
				continue
			}
			r.buf.Write(t)
			r.buf.WriteByte('\n')
		}
	}
	return r.buf.Read(p)
}

// line reads one line, of at most maxMessage bytes.
func (r *lineReader) line() ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxMessage+1 {
			r.mu.Lock()
			r.err = ErrMessageTooLong
			r.mu.Unlock()
			return nil, ErrMessageTooLong
		}
		switch {
		case err == nil:
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) > 0:
			return line, nil // the last line, without its end: passed on, for the SDK to judge
		default:
			return nil, err
		}
	}
}

func (r *lineReader) failed() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

func (r *lineReader) Close() error { return r.src.Close() }

// boundedBodies is the HTTP transports' round tripper: it adds the
// configured headers to every request and bounds every JSON answer to
// maxMessage (the SDK bounds each event of a stream itself). The first
// answer found too long is kept, so that the call it failed says why.
type boundedBodies struct {
	base    http.RoundTripper
	headers []NameValue

	mu     sync.Mutex
	err    error
	status string // the last refusal: its status and the start of its body
}

// RoundTrip sends req with the configured headers; a RoundTripper must
// not change the request it is given, hence the clone.
func (t *boundedBodies) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		req = req.Clone(req.Context())
		for _, h := range t.headers {
			req.Header.Set(h.Name, h.Value)
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 && req.Method == http.MethodPost {
		// The SDK keeps only the status's name of a refusal; what the
		// server said is kept here for the error the user sees, and
		// the body is passed on whole.
		head, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
		msg := strings.Join(strings.Fields(strings.ToValidUTF8(string(head), "?")), " ")
		t.mu.Lock()
		t.status = strings.TrimSuffix("HTTP "+resp.Status+": "+msg, ": ")
		t.mu.Unlock()
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "application/json" {
		resp.Body = &limitedBody{rc: resp.Body, left: maxMessage, over: t.over}
	}
	return resp, nil
}

func (t *boundedBodies) over() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err == nil {
		t.err = fmt.Errorf("the answer is longer than %d bytes", maxMessage)
	}
}

// refusal returns the last refusal the server answered with, and
// forgets it.
func (t *boundedBodies) refusal() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.status
	t.status = ""
	return s
}

// failed says why an answer was refused, once one was.
func (t *boundedBodies) failed() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

// limitedBody fails a body read past its bound.
type limitedBody struct {
	rc   io.ReadCloser
	left int
	over func()
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, ErrMessageTooLong
	}
	if len(p) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	b.left -= n
	if b.left < 0 {
		b.over()
		return 0, ErrMessageTooLong
	}
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }

// lastingSSE opens the SDK's SSE transport so that its stream outlives
// the handshake: the SDK makes the stream's GET with the context it is
// connected with, which for us is the handshake's, bounded by the
// connect timeout. The stream takes life instead, and the handshake's
// context bounds the wait for the endpoint only; close ends the stream.
type lastingSSE struct {
	sse   *mcp.SSEClientTransport
	life  context.Context
	mu    sync.Mutex
	close context.CancelFunc
}

func (t *lastingSSE) Connect(ctx context.Context) (mcp.Connection, error) {
	lctx, cancel := context.WithCancel(t.life)
	t.mu.Lock()
	t.close = cancel
	t.mu.Unlock()
	stop := context.AfterFunc(ctx, cancel)
	conn, err := t.sse.Connect(lctx)
	if !stop() {
		// The handshake's time ran out while the stream was opening.
		if err == nil {
			_ = conn.Close()
		}
		return nil, context.Cause(ctx)
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return conn, nil
}

// end ends the stream, once the session is closed.
func (t *lastingSSE) end() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.close != nil {
		t.close()
	}
}
