// Package sse reads Server-Sent Events from an HTTP response body: the
// one event reader of the daemon, shared by the model clients in provider
// and the MCP client in tools/mcpbridge.
package sse

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
)

// MaxLine bounds one line of an event stream, and the data of one event,
// so that a server sending no line or event end cannot make the client
// buffer without limit. Model APIs send
// events of a few kilobytes; an MCP server may put a whole tool result in
// one event, hence the margin.
const MaxLine = 8 << 20

// Event is one Server-Sent Event: its event name (often empty) and its
// data, the data lines joined by newlines.
type Event struct {
	Name string
	Data []byte
}

// Reader reads Server-Sent Events. It implements what its users need of
// the format: event and data fields, comment lines, LF or CRLF line ends;
// id and retry fields are ignored, since no stream is ever resumed by
// event ID.
type Reader struct {
	r    *bufio.Reader
	line []byte // the line being assembled when it overflows the buffer
}

// NewReader returns a Reader of r.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 16<<10)}
}

// Next returns the next event; its Data is valid until the next call. At
// the end of the body it returns io.EOF (an event not closed by a blank
// line is dropped, as the format says); a failed read returns that error.
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
				return ev, nil
			}
			ev.Name = "" // an event with no data is not dispatched
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
		}
	}
}

// readLine returns the next line without its line end. The slice is valid
// until the next call.
func (s *Reader) readLine() ([]byte, error) {
	s.line = s.line[:0]
	for {
		chunk, err := s.r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			if len(s.line)+len(chunk) > MaxLine {
				return nil, fmt.Errorf("an event line is longer than %d bytes", MaxLine)
			}
			s.line = append(s.line, chunk...)
			continue
		}
		if err != nil {
			// A last line without its line end belongs to no complete
			// event; the stream ends here.
			return nil, err
		}
		line := chunk
		if len(s.line) > 0 {
			s.line = append(s.line, chunk...)
			line = s.line
		}
		line = line[:len(line)-1]
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		return line, nil
	}
}
