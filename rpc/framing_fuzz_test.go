package rpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"
)

// FuzzFraming feeds arbitrary bytes to both framings. Whatever comes in,
// the reader must not panic, every frame it hands to jsonrpc2 must decode
// (or jsonrpc2 would end the connection), and everything it writes back
// must be well-formed error responses.
func FuzzFraming(f *testing.F) {
	f.Add([]byte("Content-Length: 2\r\n\r\n{}"), false)
	f.Add([]byte("Content-Length: 44\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"shutdown\"}"), false)
	f.Add([]byte("junkContent-Length: 5\r\n\r\n[1,2]"), false)
	f.Add([]byte("Content-Length: -1\r\nX\r\n\r\n"), false)
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\"}\n\n{bad\n"), true)
	f.Add([]byte("[]\n{\"jsonrpc\":\"2.0\",\"result\":1,\"id\":\"a\"}\n"), true)
	f.Fuzz(func(t *testing.T, input []byte, acp bool) {
		d := DialectLSP
		if acp {
			d = DialectACP
		}
		var out bytes.Buffer
		s := newStream(d, bufio.NewReader(bytes.NewReader(input)), &out, nil, nil)
		for range 1000 {
			body, _, err := s.ReadFrame(context.Background())
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("unexpected error %v", err)
				}
				break
			}
			if trimmed := bytes.TrimSpace(body); len(trimmed) > 0 && trimmed[0] == '[' {
				if _, err := jsonrpc2.ParseRequests(body); err != nil {
					t.Fatalf("batch passed through but does not parse: %v", err)
				}
			} else if _, err := jsonrpc2.DecodeMessage(body); err != nil {
				t.Fatalf("frame passed through but does not decode: %v: %q", err, body)
			}
		}
		s.Close() // flushes the writer
		// What the reader wrote back: only error responses, each valid.
		outStream := newStream(d, bufio.NewReader(&out), io.Discard, nil, nil)
		defer outStream.Close()
		for {
			body, _, err := outStream.ReadFrame(context.Background())
			if err != nil {
				break
			}
			var m struct {
				Error *struct{ Code int } `json:"error"`
			}
			if json.Unmarshal(body, &m) != nil || m.Error == nil || !strings.Contains("-32700 -32600", itoa(m.Error.Code)) {
				t.Fatalf("reader wrote %q", body)
			}
		}
	})
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// repeatReader yields n copies of b, without holding them all.
type repeatReader struct {
	b []byte
	n int
	i int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	c := copy(p, r.b[r.i:])
	r.i += c
	if r.i == len(r.b) {
		r.i, r.n = 0, r.n-1
	}
	return c, nil
}

// TestHeaderLineMemoryIsBounded: a 64 MiB header line, which the reader
// used to gather whole, costs it no more than a few buffers, and the frame
// after it is still read.
func TestHeaderLineMemoryIsBounded(t *testing.T) {
	body := `{"jsonrpc":"2.0","id":1,"method":"shutdown"}`
	in := io.MultiReader(strings.NewReader("X-Pad: "), &repeatReader{b: bytes.Repeat([]byte("a"), 64<<10), n: 1 << 10},
		strings.NewReader("\r\n\r\n"+"Content-Length: "+itoa(len(body))+"\r\n\r\n"+body))
	var out bytes.Buffer
	s := newStream(DialectLSP, bufio.NewReaderSize(in, 64<<10), &out, nil, nil)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, _, err := s.ReadFrame(context.Background())
	runtime.ReadMemStats(&after)
	s.Close()
	if err != nil || string(got) != body {
		t.Fatalf("frame after the long line: %q, %v", got, err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 4<<20 {
		t.Errorf("reading past a 64 MiB header line allocated %d bytes", grew)
	}
	if !strings.Contains(out.String(), "header line over") {
		t.Errorf("the long line was not answered: %q", out.String())
	}
}
