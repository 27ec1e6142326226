package rpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.lsp.dev/jsonrpc2"
)

// errBadFrame wraps a framing problem the reader recovered from.
type errBadFrame struct {
	code jsonrpc2.Code
	msg  string
	id   json.RawMessage
}

func (e *errBadFrame) Error() string { return e.msg }

// ReadFrame returns the body of the next well-formed message. Bad frames are
// answered and skipped here, never returned.
func (s *stream) ReadFrame(ctx context.Context) ([]byte, int64, error) {
	if !s.grown {
		s.grown = true
		growReadStack()
	}
	for {
		var (
			body []byte
			n    int64
			err  error
		)
		if s.dialect == DialectACP {
			body, n, err = s.readLine()
		} else {
			body, n, err = s.readHeaderFrame()
		}
		var bad *errBadFrame
		if errors.As(err, &bad) {
			s.reject(bad)
			continue
		}
		if err != nil {
			return nil, 0, err
		}
		if bad := checkMessage(body); bad != nil {
			s.reject(bad)
			continue
		}
		return body, n, nil
	}
}

func (s *stream) reject(bad *errBadFrame) {
	if s.onBad != nil {
		s.onBad(bad)
	}
	id := bad.id
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	msg, _ := json.Marshal(bad.msg)
	frame := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`, id, bad.code, msg)
	s.WriteFrame(context.Background(), frame)
}

// checkMessage makes sure jsonrpc2 will accept body, so that nothing it
// cannot decode reaches the connection (which would end it).
func checkMessage(body []byte) *errBadFrame {
	if !json.Valid(body) {
		return &errBadFrame{code: jsonrpc2.ParseError, msg: "parse error: the frame is not valid JSON"}
	}
	if !utf8.Valid(body) {
		return &errBadFrame{code: jsonrpc2.ParseError, msg: "parse error: the frame is not valid UTF-8"}
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if _, err := jsonrpc2.ParseRequests(body); err != nil {
			return &errBadFrame{code: jsonrpc2.InvalidRequest, msg: "invalid request: " + err.Error()}
		}
		return nil
	}
	if _, err := jsonrpc2.DecodeMessage(body); err != nil {
		var probe struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal(body, &probe)
		id := probe.ID
		if len(id) > 0 && id[0] != '"' && (id[0] < '0' || id[0] > '9') && id[0] != '-' {
			id = nil // only a string or number id can be echoed back
		}
		return &errBadFrame{code: jsonrpc2.InvalidRequest, id: id,
			msg: "invalid request: not a JSON-RPC 2.0 message (it needs \"jsonrpc\":\"2.0\" and a method, or a result or error with an id)"}
	}
	return nil
}

// readHeaderFrame reads one LSP frame: header lines, a blank line, then
// Content-Length bytes. A malformed header block is skipped whole.
func (s *stream) readHeaderFrame() ([]byte, int64, error) {
	var (
		length  = -1
		n       int64
		problem string
		started bool
		lengths int // Content-Length headers seen
		block   int // bytes of header lines so far
	)
	for {
		line, size, err := s.readHeaderLine()
		n += int64(size)
		if err != nil {
			if err == io.EOF && !started && strings.TrimSpace(line) == "" {
				return nil, 0, io.EOF
			}
			if err == io.EOF {
				return nil, 0, io.ErrUnexpectedEOF
			}
			return nil, 0, err
		}
		if size > maxHeaderLine {
			// Refused, and not kept, so not counted in the block.
			started = true
			problem = fmt.Sprintf("a header line over the %d byte limit", maxHeaderLine)
			continue
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if !started {
				block = 0
				continue // blank lines between frames are harmless
			}
			break
		}
		started = true
		block += size
		if block > maxHeaderBlock {
			// No end in sight: give up on this header here, without
			// skipping a body whose length may be part of the flood.
			return nil, n, &errBadFrame{code: jsonrpc2.ParseError,
				msg: fmt.Sprintf("parse error: a header block over the %d byte limit", maxHeaderBlock)}
		}
		if i := strings.Index(strings.ToLower(line), "content-length:"); i > 0 {
			// Junk glued to the front of a header: answer the junk, keep
			// the frame that follows it.
			s.reject(&errBadFrame{code: jsonrpc2.ParseError,
				msg: fmt.Sprintf("parse error: %q before a Content-Length header", truncate(line[:i], 40))})
			line = line[i:]
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			problem = fmt.Sprintf("header line %q has no colon", truncate(line, 40))
			continue
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			lengths++
			v, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil || v <= 0 {
				problem = fmt.Sprintf("Content-Length %q is not a positive integer", truncate(strings.TrimSpace(value), 20))
				continue
			}
			if lengths > 1 {
				// Two readers of the stream could each believe a
				// different one; the frame is refused. Only when both
				// agree is its body known and skipped.
				problem = "the header has more than one Content-Length"
				if v != length {
					length = -1
					continue
				}
			}
			if lengths == 1 {
				length = v
			}
		}
	}
	if problem == "" && length < 0 {
		problem = "the header has no Content-Length"
	}
	if problem != "" || length > maxFrame {
		if length > 0 && length <= maxFrame {
			// Skip the body the header announced, so the next frame is
			// read from its start. An oversized length is not trusted:
			// reading resyncs at the next header line instead.
			if _, err := io.CopyN(io.Discard, s.r, int64(length)); err != nil {
				return nil, 0, io.ErrUnexpectedEOF
			}
		}
		if problem == "" {
			problem = fmt.Sprintf("a frame of %d bytes is over the %d byte limit", length, maxFrame)
		}
		return nil, n, &errBadFrame{code: jsonrpc2.ParseError, msg: "parse error: " + problem}
	}
	if cap(s.body) < length || cap(s.body) > 4<<20 && length < 64<<10 {
		s.body = make([]byte, length)
	}
	body := s.body[:length]
	if _, err := io.ReadFull(s.r, body); err != nil {
		return nil, 0, io.ErrUnexpectedEOF
	}
	return body, n + int64(length), nil
}

// readHeaderLine reads one header line and how many bytes it took. A line
// over maxHeaderLine is read to its end but not kept: the caller sees its
// size and refuses it.
func (s *stream) readHeaderLine() (string, int, error) {
	chunk, err := s.r.ReadSlice('\n')
	size := len(chunk)
	if err != bufio.ErrBufferFull && size <= maxHeaderLine {
		return string(chunk), size, err
	}
	line := ""
	if size <= maxHeaderLine {
		line = string(chunk)
	}
	for err == bufio.ErrBufferFull {
		chunk, err = s.r.ReadSlice('\n')
		size += len(chunk)
		if size <= maxHeaderLine {
			line += string(chunk)
		}
	}
	if size <= maxHeaderLine {
		return line, size, err
	}
	return "", size, err
}

// readLine reads one newline-delimited message, skipping blank lines.
func (s *stream) readLine() ([]byte, int64, error) {
	s.body = s.body[:0]
	var n int64
	for {
		chunk, err := s.r.ReadSlice('\n')
		n += int64(len(chunk))
		if len(s.body)+len(chunk) > maxFrame {
			// Drop the rest of this line, then report it.
			for err == bufio.ErrBufferFull {
				_, err = s.r.ReadSlice('\n')
			}
			s.body = s.body[:0]
			if err != nil && err != io.EOF {
				return nil, 0, err
			}
			return nil, n, &errBadFrame{code: jsonrpc2.ParseError,
				msg: fmt.Sprintf("parse error: a line over the %d byte limit", maxFrame)}
		}
		s.body = append(s.body, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && err != io.EOF {
			return nil, 0, err
		}
		line := bytes.TrimSpace(s.body)
		if len(line) == 0 {
			if err == io.EOF {
				return nil, 0, io.EOF
			}
			s.body = s.body[:0]
			continue
		}
		return line, n, nil
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// readStack is the stack the read loop needs for the first message (the
// initialize request, decoded and answered on the loop), less what the
// loop already uses when it first asks for a frame.
const readStack = 6 << 10

// growReadStack grows the read loop's goroutine stack to what initialize
// needs in one step, while the stack is shallow. The goroutine (the
// jsonrpc2 connection's) starts with the runtime's smallest stack, which
// the first frame's reading and then initialize's decoding each doubled:
// two copies of a deepening stack, each unwinding every frame through
// the binary's tables (tens of microseconds at start, most of it page
// faults on those tables), on the way to the answer.
//
//go:noinline
func growReadStack() byte {
	var pad [readStack]byte
	return touch(pad[:])
}

//go:noinline
func touch(b []byte) byte { return b[len(b)-1] }
