package provider

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cline-ls/cline-ls/internal/sse"
)

// The three clients speak their APIs over net/http directly: a JSON body
// goes out, Server-Sent Events come back. What they share is here: posting
// a request, turning an error answer into a statusError, and reading the
// event stream. Each failure comes back as one of the error types below,
// which the retry policy classifies (retrier.classify).

// maxErrorBody caps how much of an error answer is read: the API's
// message is at the start, and a proxy's HTML page need not be read whole.
const maxErrorBody = 64 << 10

// connError is a request that got no answer: a refused or reset
// connection, a DNS failure, a TLS failure.
type connError struct{ err error }

func (e *connError) Error() string { return "connection failed: " + rootCause(e.err).Error() }

// statusError is an HTTP error answer.
type statusError struct {
	status     int
	retryAfter time.Duration
	// message is the API's own message (with its error type or status
	// when it gives one), or the start of the body when it is not the
	// API's error shape.
	message string
	// contextLength reports that the API refused the prompt as too long
	// for the model's context window.
	contextLength bool
	// contextWindow is the window's size when the answer said it.
	contextWindow int
	// shouldRetry is the server's own word on retrying (x-should-retry),
	// or nil when it gave none.
	shouldRetry *bool
}

func (e *statusError) Error() string { return e.message }

// streamError is a reply that started and then broke: a read error on the
// body, or an event the stream cannot be read past.
type streamError struct{ err error }

func (e *streamError) Error() string { return "stream broken: " + rootCause(e.err).Error() }

// eventError is an error the API reported inside a started stream (an
// overloaded model, a server fault); it is retried like a broken stream.
type eventError struct{ message string }

func (e *eventError) Error() string { return e.message }

// apiError is the body of an error answer once a client has read it.
type apiError struct {
	message       string
	contextLength bool
	contextWindow int
}

// post sends body as JSON to url and returns the response of a 2xx
// answer that streams events; its Body streams the reply, under the idle
// watch of the attempt's limits (see Limits.StreamIdle), which covers the
// wait for the answer too. The answer's request id goes to m, for the
// error, whatever happens next. Any other answer is read (up to
// maxErrorBody), closed, and returned as a *statusError whose message
// parse takes from the body, or, for a 2xx answer that is not an event
// stream, a *badReplyError. header holds the API's own headers (key,
// version); the JSON and event-stream headers are added here.
func post(ctx context.Context, hc *http.Client, m *meter, url string, header http.Header, body []byte, parse func(status int, body []byte) apiError) (*http.Response, error) {
	lim := m.lim
	ictx, watch := watchIdle(ctx, lim.StreamIdle)
	req, err := http.NewRequestWithContext(ictx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		watch.stop()
		return nil, fmt.Errorf("building the request: %w", rootCause(err))
	}
	req.Header = header.Clone()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		watch.stop()
		if context.Cause(ictx) == errIdle && ctx.Err() == nil {
			return nil, idleError(lim.StreamIdle)
		}
		return nil, &connError{err: err}
	}
	resp.Body = &idleBody{ReadCloser: resp.Body, ctx: ictx, w: watch}
	m.requestID = requestID(resp.Header)
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if err := checkEventStream(resp, url, parse); err != nil {
			resp.Body.Close()
			return nil, err
		}
		return resp, nil
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	e := &statusError{status: resp.StatusCode, retryAfter: retryAfter(resp.Header, time.Now()), shouldRetry: shouldRetry(resp.Header)}
	a := parse(resp.StatusCode, data)
	e.message, e.contextLength, e.contextWindow = a.message, a.contextLength, a.contextWindow
	if e.message == "" {
		e.message = bodyText(data)
	}
	return nil, e
}

// requestID is the id a vendor gives a request (request-id: Anthropic;
// x-request-id: OpenAI and most compatible servers), which its support
// asks for; cut short, since a server may send anything there.
func requestID(h http.Header) string {
	for _, k := range []string{"Request-Id", "X-Request-Id"} {
		if v := strings.TrimSpace(h.Get(k)); v != "" {
			return cutText(strings.Join(strings.Fields(v), " "), 100)
		}
	}
	return ""
}

// shouldRetry reads x-should-retry, which OpenAI and Anthropic send to
// say whether a failed request is worth repeating: it overrides the
// status, which cannot tell a lock timeout from a bad request.
func shouldRetry(h http.Header) *bool {
	switch strings.ToLower(strings.TrimSpace(h.Get("X-Should-Retry"))) {
	case "true":
		t := true
		return &t
	case "false":
		f := false
		return &f
	}
	return nil
}

// badReplyError is a 2xx answer to a streamed request that is not an
// event stream: a proxy's or captive portal's HTML page, a server at the
// wrong address, a JSON error. Asking again gets the same page, so it is
// never retried.
type badReplyError struct{ message string }

func (e *badReplyError) Error() string { return e.message }

// checkEventStream makes sure a 2xx answer is an event stream. A server
// that labels its stream wrongly (or not at all) is still read when the
// body starts like one; anything else is reported with what came back: its
// content type and the start of its body on one line, and, for a page
// that is not the API's JSON, the address asked, since a wrong base URL
// is the usual cause.
func checkEventStream(resp *http.Response, url string, parse func(status int, body []byte) apiError) error {
	ct := resp.Header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	if mt == "text/event-stream" {
		return nil
	}
	br := bufio.NewReaderSize(resp.Body, 512)
	resp.Body = struct {
		io.Reader
		io.Closer
	}{br, resp.Body}
	// What came in the first read: a stream's first event need not fill
	// a larger peek before the next arrives.
	br.Peek(1)
	head, _ := br.Peek(min(br.Buffered(), 64))
	if looksLikeEvents(head) {
		return nil
	}
	data, _ := io.ReadAll(io.LimitReader(br, maxErrorBody))
	if ct == "" {
		ct = "no content type"
	}
	if a := parse(resp.StatusCode, data); a.message != "" {
		return &badReplyError{message: fmt.Sprintf("HTTP %d with %s instead of an event stream, an error: %s", resp.StatusCode, ct, a.message)}
	}
	first := firstLine(data)
	if first == "" {
		first = "an empty body"
	} else {
		first = "starting " + strconv.Quote(first)
	}
	return &badReplyError{message: fmt.Sprintf("HTTP %d with %s instead of an event stream (%s): check the base URL (provider.baseUrl); the request went to %s",
		resp.StatusCode, ct, first, url)}
}

// looksLikeEvents reports whether a body starts with an event stream's
// field or comment.
func looksLikeEvents(head []byte) bool {
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	head = bytes.TrimLeft(head, "\r\n")
	for _, f := range []string{"data:", "event:", "id:", "retry:", ":"} {
		if bytes.HasPrefix(head, []byte(f)) {
			return true
		}
	}
	return false
}

// firstLine is the first non-blank line of a body, its spaces collapsed
// and cut to 120 bytes (on a character boundary).
func firstLine(data []byte) string {
	for line := range strings.Lines(string(data)) {
		if s := strings.Join(strings.Fields(line), " "); s != "" {
			return cutText(s, 120)
		}
	}
	return ""
}

// cutText cuts s to at most n bytes without splitting a character,
// marking the cut.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// bodyText is the start of an error body that is not the API's JSON, on
// one line, or "" when there is nothing to show.
func bodyText(data []byte) string {
	s := strings.Join(strings.Fields(string(data)), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// httpClient returns the client requests go through: a copy of the
// configured one, or a plain client without timeout, since replies stream
// for minutes and the request's context bounds them. Either way redirects
// to another host are not followed: net/http would forward the API's key
// headers (x-api-key, x-goog-api-key) to it, as it strips only
// Authorization and cookies.
func httpClient(c *http.Client) *http.Client {
	var cp http.Client
	if c != nil {
		cp = *c
	}
	next := cp.CheckRedirect
	cp.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > 0 && req.URL.Host != via[0].URL.Host {
			return http.ErrUseLastResponse
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &cp
}

// readEvents reads the stream of resp and passes each event's data to
// handle, until handle says the reply is over (done), fails, or the body
// ends. A body that ends or breaks before done comes back as errIncomplete
// or a *streamError, so the retry policy sees a broken stream.
func readEvents(resp *http.Response, handle func(ev sse.Event) (done bool, err error)) error {
	r := sse.NewReader(resp.Body)
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return errIncomplete
		}
		var le *limitError
		if errors.As(err, &le) {
			return le
		}
		if err != nil {
			return &streamError{err: err}
		}
		done, err := handle(ev)
		if err != nil || done {
			return err
		}
	}
}

// decodeEvent decodes one event's JSON data into v. A field of an
// unexpected type is left at its zero value rather than failing the
// reply: compatible servers vary in what they put where. Data that is not
// JSON at all breaks the stream.
func decodeEvent(data []byte, v any) error {
	err := json.Unmarshal(data, v)
	var te *json.UnmarshalTypeError
	if err == nil || errors.As(err, &te) {
		return nil
	}
	return &streamError{err: fmt.Errorf("invalid event data: %w", err)}
}

// jsonString decodes raw as a JSON string, or returns "" when it is
// anything else.
func jsonString(raw json.RawMessage) string {
	var s string
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// numberAfter returns the integer that follows the first occurrence of
// prefix in s (digits, with optional thousands commas), or 0. The APIs
// state context windows in their error messages this way.
func numberAfter(s, prefix string) int {
	_, rest, ok := strings.Cut(s, prefix)
	if !ok {
		return 0
	}
	n, digits := 0, 0
	for _, r := range rest {
		switch {
		case r >= '0' && r <= '9':
			n = n*10 + int(r-'0')
			digits++
			if digits > 12 {
				return 0
			}
		case r == ',' && digits > 0:
		default:
			return n
		}
	}
	return n
}

// joinURL appends path to a base URL, with one slash between them.
func joinURL(base, path string) string {
	return strings.TrimRight(base, "/") + "/" + strings.TrimLeft(path, "/")
}
