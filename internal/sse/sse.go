// Package sse reads Server-Sent Events from an HTTP response body: the
// one event reader of the daemon, shared by the model clients in provider
// and the MCP client in tools/mcpbridge. It parses the stream as the HTML
// standard's event-stream rules do.
package sse

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"time"
)

// MaxLine bounds one line of an event stream, and the data of one event,
// so that a server sending no line or event end cannot make the client
// buffer without limit. Model APIs send
// events of a few kilobytes; an MCP server may put a whole tool result in
// one event, hence the margin.
const MaxLine = 8 << 20

// Event is one Server-Sent Event: its event name (empty when the stream
// named none; the standard's default name is "message"), its data (the
// data lines joined by newlines) and the last event ID the stream set at
// or before it.
type Event struct {
	Name string
	Data []byte
	ID   string
}

// Reader reads Server-Sent Events.
type Reader struct {
	r    *bufio.Reader
	line []byte // the line being read

	// started is set once the first line is read: a byte order mark is
	// dropped from it only.
	started bool
	// crSeen is set when the last line ended with CR: an LF right after
	// it belongs to that line end, even when it comes in a later read.
	crSeen bool

	lastID   string
	retry    time.Duration
	hasRetry bool
}

// NewReader returns a Reader of r.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 16<<10)}
}

// LastEventID is the stream's last event ID so far: what a client
// reconnecting sends as Last-Event-ID.
func (s *Reader) LastEventID() string { return s.lastID }

// Retry is the reconnection time the stream last asked for, if any.
func (s *Reader) Retry() (time.Duration, bool) { return s.retry, s.hasRetry }

// Next returns the next event; its Data is valid until the next call. At
// the end of the body it returns io.EOF: an event not closed by a blank
// line is dropped, as the standard says. A failed read returns that
// error.
func (s *Reader) Next() (Event, error) {
	var ev Event
	hasData := false
	for {
		line, err := s.readLine()
		if err != nil {
			return Event{}, err
		}
		if len(line) == 0 {
			if hasData {
				ev.ID = s.lastID
				return ev, nil
			}
			// A blank line with no data dispatches nothing and forgets
			// the name.
			ev.Name = ""
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			ev.Name = string(value)
		case "data":
			if len(ev.Data)+len(value) >= MaxLine {
				return Event{}, fmt.Errorf("an event's data is longer than %d bytes", MaxLine)
			}
			if hasData {
				ev.Data = append(ev.Data, '\n')
			}
			ev.Data = append(ev.Data, value...)
			hasData = true
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				s.lastID = string(value)
			}
		case "retry":
			if ms, ok := digits(value); ok {
				s.retry, s.hasRetry = time.Duration(ms)*time.Millisecond, true
			}
		}
	}
}

// digits reads a retry value: ASCII digits only, anything else ignored.
// A number too large for a duration is held at the largest.
func digits(v []byte) (int64, bool) {
	if len(v) == 0 {
		return 0, false
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	ms, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil || ms > int64(time.Duration(1<<63-1)/time.Millisecond) {
		ms = int64(time.Duration(1<<63-1) / time.Millisecond)
	}
	return ms, true
}

// readLine returns the next line without its line end (CRLF, LF or CR).
// The slice is valid until the next call.
func (s *Reader) readLine() ([]byte, error) {
	s.line = s.line[:0]
	for {
		if s.crSeen {
			// Asked for only when the next line is wanted, so a line
			// ended by CR is never held back waiting for the next byte.
			b, err := s.r.ReadByte()
			if err != nil {
				return nil, err
			}
			s.crSeen = false
			if b != '\n' {
				_ = s.r.UnreadByte()
			}
		}
		if s.r.Buffered() == 0 {
			if _, err := s.r.Peek(1); err != nil {
				// A last line without its line end belongs to no
				// complete event; the stream ends here.
				return nil, err
			}
		}
		buf, _ := s.r.Peek(s.r.Buffered())
		i := bytes.IndexAny(buf, "\r\n")
		end := i
		if i < 0 {
			end = len(buf)
		}
		if len(s.line)+end > MaxLine {
			return nil, fmt.Errorf("an event line is longer than %d bytes", MaxLine)
		}
		s.line = append(s.line, buf[:end]...)
		if i < 0 {
			_, _ = s.r.Discard(len(buf))
			continue
		}
		s.crSeen = buf[i] == '\r'
		_, _ = s.r.Discard(i + 1)
		line := s.line
		if !s.started {
			s.started = true
			line = bytes.TrimPrefix(line, []byte("\uFEFF"))
		}
		return line, nil
	}
}
