package mcpbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cline-ls/cline-ls/internal/proc"
	"github.com/cline-ls/cline-ls/internal/sse"
)

// The three transports MCP servers are reached by, each as a link: a
// stdio child process, Streamable HTTP, and the older HTTP with
// Server-Sent Events.

// terminateAfter is how long a stdio server has to exit once its input
// is closed, and then once it is sent SIGTERM, before it is killed.
const terminateAfter = 5 * time.Second

// stdioLink starts cmd through proc, so that it dies with the daemon (and
// its marked descendants with it) rather than live on, and talks to it
// over its stdin and stdout. It records the process's group in c.
func stdioLink(cmd *exec.Cmd, c *conn) (link, error) {
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
	return link{r: stdout, w: stdin, wait: func() { endProcess(cmd) }}, nil
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

// errLinkClosed is why a link's reading side ends when we close it.
var errLinkClosed = errors.New("the connection was closed")

// lines is the reading side of an HTTP link: the messages its requests
// and streams receive, put one per line, in the order they arrive.
type lines struct {
	pr *io.PipeReader
	pw *io.PipeWriter
}

func newLines() lines {
	pr, pw := io.Pipe()
	return lines{pr: pr, pw: pw}
}

// put passes one message on as a line. A message that is not JSON is
// passed as it is, for the session to skip and report.
func (l lines) put(msg []byte) error {
	var b bytes.Buffer
	if json.Compact(&b, msg) != nil {
		b.Reset()
		b.Write(bytes.ReplaceAll(msg, []byte("\n"), []byte(" ")))
	}
	b.WriteByte('\n')
	_, err := l.pw.Write(b.Bytes())
	return err
}

// envelope is what an HTTP link needs to know of a message.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
}

func (e envelope) isRequest() bool { return len(e.ID) > 0 && e.Method != "" }

// answers reports whether msg is the answer to the request with this id.
func answers(msg []byte, id json.RawMessage) (envelope, bool) {
	var e envelope
	if json.Unmarshal(msg, &e) != nil || e.Method != "" || len(e.ID) == 0 {
		return e, false
	}
	return e, bytes.Equal(bytes.TrimSpace(e.ID), bytes.TrimSpace(id))
}

// codeLinkFailed is the code of the error answers an HTTP link makes up
// for requests that got none: no JSON-RPC server sent them, so they are
// not the server refusing.
const codeLinkFailed = -32098

// errorAnswer is the JSON-RPC error answer to id that a failed HTTP
// request stands for, so that the call waiting for it fails with why.
func errorAnswer(id json.RawMessage, err error) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": codeLinkFailed, "message": err.Error()}})
	return b
}

// statusError reads an HTTP error answer into an error: the status and
// the start of the body.
func statusError(resp *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	msg := strings.Join(strings.Fields(strings.ToValidUTF8(string(body), "?")), " ")
	if msg == "" {
		return fmt.Errorf("HTTP %s", resp.Status)
	}
	return fmt.Errorf("HTTP %s: %s", resp.Status, msg)
}

func mediaType(resp *http.Response) string {
	t, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return t
}

// readBody reads a JSON answer of at most maxMessage bytes.
func readBody(r io.Reader) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r, maxMessage+1))
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	if len(body) > maxMessage {
		return nil, fmt.Errorf("the answer is longer than %d bytes", maxMessage)
	}
	return body, nil
}

// splitLines calls f with each complete line written so far and keeps the
// rest in *buf. A link is written one line at a time, but need not be.
func splitLines(buf *[]byte, p []byte, f func(line []byte) error) error {
	*buf = append(*buf, p...)
	for {
		i := bytes.IndexByte(*buf, '\n')
		if i < 0 {
			return nil
		}
		line := bytes.Clone((*buf)[:i])
		*buf = (*buf)[i+1:]
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if err := f(line); err != nil {
			return err
		}
	}
}

// Headers of the Streamable HTTP transport.
const (
	headerSession  = "Mcp-Session-Id"
	headerProtocol = "MCP-Protocol-Version"
)

// streamLink is the Streamable HTTP transport. Each message we send is a
// POST to the server's one URL. A request's answer comes back as a JSON
// body or as an event stream that may carry the server's own requests and
// notifications before it; requests are posted beside each other, so a
// long call does not hold up the next, while notifications and answers
// are posted in order and wait for the server's 202. The session id the
// server gives with its answer to initialize goes with every later
// request; once initialized, a GET opens the stream on which the server
// sends what belongs to no request (list changes). Close ends the
// session with a DELETE.
type streamLink struct {
	url    string
	client *http.Client
	logger *slog.Logger
	lines  lines
	ctx    context.Context // ends at Close: every request and stream
	cancel context.CancelFunc
	wg     sync.WaitGroup // requests and the listening stream

	wbuf []byte // guarded by the session's one writer at a time

	mu      sync.Mutex // guards the fields below
	closed  bool
	session string // Mcp-Session-Id
	version string // the protocol version initialize settled on
}

// newStreamLink returns the link; nothing is sent before the first
// message.
func newStreamLink(parent context.Context, rawURL string, client *http.Client, logger *slog.Logger) link {
	ctx, cancel := context.WithCancel(parent)
	l := &streamLink{url: rawURL, client: client, logger: logger, lines: newLines(), ctx: ctx, cancel: cancel}
	return link{r: l.lines.pr, w: l, wait: func() {}}
}

// Write posts the messages in p, one per line.
func (l *streamLink) Write(p []byte) (int, error) {
	return len(p), splitLines(&l.wbuf, p, l.send)
}

func (l *streamLink) send(msg []byte) error {
	var e envelope
	_ = json.Unmarshal(msg, &e)
	if !e.isRequest() {
		return l.postInOrder(msg, e.Method)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return errLinkClosed
	}
	l.wg.Add(1) // under mu while open: Close waits only after closing
	go func() {
		defer l.wg.Done()
		if err := l.request(msg, e); err != nil && l.ctx.Err() == nil {
			_ = l.lines.put(errorAnswer(e.ID, err))
		}
	}()
	return nil
}

// newRequest makes a request to the server with the session's headers.
func (l *streamLink) newRequest(ctx context.Context, method string, body []byte) (*http.Request, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, l.url, r)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	l.mu.Lock()
	if l.session != "" {
		req.Header.Set(headerSession, l.session)
	}
	if l.version != "" {
		req.Header.Set(headerProtocol, l.version)
	}
	l.mu.Unlock()
	return req, nil
}

// checkSession turns the 404 that answers a request of an expired
// session into the session's end: the session must be started again.
func (l *streamLink) checkSession(resp *http.Response) error {
	l.mu.Lock()
	had := l.session != ""
	l.mu.Unlock()
	if resp.StatusCode == http.StatusNotFound && had {
		err := errors.New("the server ended the session (HTTP 404)")
		l.lines.pw.CloseWithError(err)
		return err
	}
	return nil
}

// post posts one message and returns the server's response if it took
// it: a success status, and the session still the one it gave. The
// caller closes the body.
func (l *streamLink) post(msg []byte) (*http.Response, error) {
	req, err := l.newRequest(l.ctx, http.MethodPost, msg)
	if err != nil {
		return nil, err
	}
	resp, err := l.client.Do(req)
	if err != nil {
		return nil, err
	}
	if err := l.checkSession(resp); err != nil {
		resp.Body.Close()
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		err := statusError(resp)
		resp.Body.Close()
		return nil, err
	}
	return resp, nil
}

// postInOrder posts a notification or an answer and waits for the
// server to take it. Once notifications/initialized is taken, the
// listening stream opens.
func (l *streamLink) postInOrder(msg []byte, method string) error {
	resp, err := l.post(msg)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	if method == notifyInitialized {
		l.listen()
	}
	return nil
}

// request posts a request and passes on what comes back until its
// answer. An error means no answer came; the caller answers for it.
func (l *streamLink) request(msg []byte, e envelope) error {
	resp, err := l.post(msg)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if e.Method == methodInitialize {
		if id := resp.Header.Get(headerSession); id != "" {
			l.mu.Lock()
			l.session = id
			l.mu.Unlock()
		}
	}
	// pass hands one message on and reports whether it was the answer.
	pass := func(m []byte) (bool, error) {
		ans, ok := answers(m, e.ID)
		if ok && e.Method == methodInitialize {
			var res struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			if json.Unmarshal(ans.Result, &res) == nil && accepted(res.ProtocolVersion) {
				l.mu.Lock()
				l.version = res.ProtocolVersion
				l.mu.Unlock()
			}
		}
		return ok, l.lines.put(m)
	}
	switch mediaType(resp) {
	case "application/json":
		body, err := readBody(resp.Body)
		if err != nil {
			return err
		}
		// A batch is passed on whole; a body that is not the answer is
		// still passed, for the session to skip and report.
		var batch []json.RawMessage
		if t := bytes.TrimSpace(body); len(t) > 0 && t[0] == '[' && json.Unmarshal(t, &batch) == nil {
			answered := false
			for _, m := range batch {
				ok, err := pass(m)
				if err != nil {
					return err
				}
				answered = answered || ok
			}
			if !answered {
				return errors.New("the server's answer did not answer the request")
			}
			return nil
		}
		ok, err := pass(body)
		if err == nil && !ok {
			err = errors.New("the server's answer did not answer the request")
		}
		return err
	case "text/event-stream":
		r := sse.NewReader(resp.Body)
		for {
			ev, err := r.Next()
			if err == io.EOF {
				return errors.New("the server's event stream ended before the answer")
			}
			if err != nil {
				return fmt.Errorf("reading the server's event stream: %w", err)
			}
			if ev.Name != "" && ev.Name != "message" {
				continue
			}
			ok, err := pass(ev.Data)
			if err != nil || ok {
				return err
			}
		}
	default:
		return fmt.Errorf("the server answered with %q, neither JSON nor an event stream", resp.Header.Get("Content-Type"))
	}
}

// listen opens the stream of what the server sends outside requests,
// and opens it again when it ends, until Close or until the server says
// it has none.
func (l *streamLink) listen() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		failures := 0
		for {
			got, err := l.listenOnce()
			if l.ctx.Err() != nil || errors.Is(err, errNoStream) {
				return
			}
			if got {
				failures = 0
			}
			if failures++; failures > 3 {
				l.logger.Warn("mcp: the server's event stream keeps failing; list changes will not be seen", "err", err)
				return
			}
			t := time.NewTimer(time.Duration(failures) * time.Second)
			select {
			case <-t.C:
			case <-l.ctx.Done():
				t.Stop()
				return
			}
		}
	}()
}

// errNoStream says the server offers no stream outside requests.
var errNoStream = errors.New("no event stream")

// listenOnce reads the listening stream once, and reports whether any
// message came.
func (l *streamLink) listenOnce() (bool, error) {
	req, err := l.newRequest(l.ctx, http.MethodGet, nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := l.client.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if err := l.checkSession(resp); err != nil {
		return false, err
	}
	// 405 is how the server says it has no such stream; some say it
	// with another 4xx or with no event stream.
	if resp.StatusCode/100 == 4 || (resp.StatusCode/100 == 2 && mediaType(resp) != "text/event-stream") {
		return false, errNoStream
	}
	if resp.StatusCode/100 != 2 {
		return false, statusError(resp)
	}
	r := sse.NewReader(resp.Body)
	got := false
	for {
		ev, err := r.Next()
		if err != nil {
			return got, err
		}
		if ev.Name != "" && ev.Name != "message" {
			continue
		}
		got = true
		if err := l.lines.put(ev.Data); err != nil {
			return got, err
		}
	}
}

// Close ends the session: a DELETE tells the server (bounded, so that a
// server that does not answer cannot hold Close), then every request and
// stream under way is cancelled and waited for.
func (l *streamLink) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	session := l.session
	l.mu.Unlock()
	if session != "" {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(l.ctx), 2*time.Second)
		if req, err := l.newRequest(ctx, http.MethodDelete, nil); err == nil {
			if resp, err := l.client.Do(req); err == nil {
				resp.Body.Close()
			}
		}
		cancel()
	}
	l.cancel()
	l.lines.pr.CloseWithError(errLinkClosed) // frees a request waiting to pass a message on
	l.wg.Wait()
	return nil
}

// sseLink is the HTTP transport with Server-Sent Events that preceded
// Streamable HTTP: a GET opens the stream on which the server sends
// everything, its first event names the URL to POST our messages to, and
// each POST is answered 202 with the answer on the stream. The session
// lasts as long as the stream.
type sseLink struct {
	client *http.Client
	lines  lines
	ctx    context.Context // ends at Close: the stream and any POST
	cancel context.CancelFunc
	wg     sync.WaitGroup // the stream's reader

	wbuf     []byte // guarded by the session's one writer at a time
	endpoint string // set by open, before any Write
}

// openSSELink opens the stream and waits, within ctx, for the endpoint
// event.
func openSSELink(ctx, parent context.Context, rawURL string, client *http.Client) (link, error) {
	lctx, cancel := context.WithCancel(parent)
	l := &sseLink{client: client, lines: newLines(), ctx: lctx, cancel: cancel}
	// Until the endpoint is known, the caller's deadline bounds the wait.
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	fail := func(err error) (link, error) {
		cancel()
		if ctx.Err() != nil {
			return link{}, ctx.Err()
		}
		return link{}, err
	}
	req, err := http.NewRequestWithContext(lctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return fail(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := client.Do(req)
	if err != nil {
		return fail(err)
	}
	if resp.StatusCode/100 != 2 {
		err := statusError(resp)
		resp.Body.Close()
		return fail(err)
	}
	if t := mediaType(resp); t != "text/event-stream" {
		resp.Body.Close()
		return fail(fmt.Errorf("the server answered with %q, not an event stream", t))
	}
	r := sse.NewReader(resp.Body)
	ev, err := r.Next()
	if err == nil && ev.Name != "endpoint" {
		err = fmt.Errorf("the stream began with a %q event, not endpoint", ev.Name)
	}
	var to *url.URL
	if err == nil {
		var base *url.URL
		if base, err = url.Parse(rawURL); err == nil {
			to, err = base.Parse(strings.TrimSpace(string(ev.Data)))
		}
	}
	if err != nil {
		resp.Body.Close()
		return fail(fmt.Errorf("waiting for the endpoint event: %w", err))
	}
	l.endpoint = to.String()
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer resp.Body.Close()
		l.lines.pw.CloseWithError(l.read(r))
	}()
	return link{r: l.lines.pr, w: l, wait: func() {}}, nil
}

// read passes the stream's messages on until it ends, and says why.
func (l *sseLink) read(r *sse.Reader) error {
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return errors.New("the server closed the event stream")
		}
		if err != nil {
			return fmt.Errorf("reading the server's event stream: %w", err)
		}
		if ev.Name != "" && ev.Name != "message" {
			continue
		}
		if err := l.lines.put(ev.Data); err != nil {
			return err
		}
	}
}

// Write posts the messages in p, one per line, in order.
func (l *sseLink) Write(p []byte) (int, error) {
	return len(p), splitLines(&l.wbuf, p, l.post)
}

func (l *sseLink) post(msg []byte) error {
	req, err := http.NewRequestWithContext(l.ctx, http.MethodPost, l.endpoint, bytes.NewReader(msg))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := l.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return statusError(resp)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	return nil
}

// Close ends the stream, and with it the session.
func (l *sseLink) Close() error {
	l.cancel()
	l.lines.pr.CloseWithError(errLinkClosed)
	l.wg.Wait()
	return nil
}
