package rpc_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/cline-ls/cline-ls/internal/jsonrpcclient"
	"github.com/cline-ls/cline-ls/rpc"
)

func frame(body string) string {
	return string(jsonrpcclient.Frame(jsonrpcclient.LSP, []byte(body)))
}

type syncWriter struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// rawSession runs a server over pipes and gives the test the bytes.
type rawSession struct {
	in   *io.PipeWriter
	out  *bufio.Reader
	done chan struct{}
	code int
	err  error
}

func startRaw(t *testing.T) *rawSession {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	rs := &rawSession{in: inW, out: bufio.NewReader(outR), done: make(chan struct{})}
	go func() {
		defer close(rs.done)
		rs.code, rs.err = rpc.NewServer(rpc.Options{}).Serve(context.Background(), inR, outW)
		outW.Close()
	}()
	t.Cleanup(func() { inW.Close(); <-rs.done })
	return rs
}

func (rs *rawSession) send(t *testing.T, s string) {
	t.Helper()
	go rs.in.Write([]byte(s)) // the pipe blocks until the server reads
}

// next reads one LSP frame from the server.
func (rs *rawSession) next(t *testing.T) map[string]any {
	t.Helper()
	body, err := jsonrpcclient.ReadFrame(rs.out, jsonrpcclient.LSP)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("server wrote invalid JSON %q", body)
	}
	return m
}

func errCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

func TestMalformedFramesKeepServing(t *testing.T) {
	rs := startRaw(t)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`
	rs.send(t, frame(init))
	if m := rs.next(t); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	cases := []struct {
		name  string
		input string
		code  float64
		id    any
	}{
		{"not JSON", frame(`{"jsonrpc":"2.0","id":2,"method":`), -32700, nil},
		{"binary garbage", frame("\x00\xff\xfe{{"), -32700, nil},
		{"invalid UTF-8 inside a string", frame("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"x\xff\"}"), -32700, nil},
		{"JSON but not a message", frame(`{"hello":"world","id":4}`), -32600, float64(4)},
		{"wrong jsonrpc version", frame(`{"jsonrpc":"1.0","id":5,"method":"shutdown"}`), -32600, float64(5)},
		{"a bare number", frame(`42`), -32600, nil},
		{"header without length", "Content-Type: x\r\n\r\n", -32700, nil},
		{"negative length", "Content-Length: -4\r\n\r\n", -32700, nil},
		{"non-numeric length", "Content-Length: ten\r\n\r\n", -32700, nil},
		{"header line without colon", "Content-Length: 2\r\nbogus\r\n\r\n{}", -32700, nil},
		{"oversized frame", "Content-Length: 999999999999\r\n\r\n", -32700, nil},
		{"duplicated Content-Length", "Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}", -32700, nil},
		{"a header line with no end", "X-Pad: " + strings.Repeat("a", 8<<20) + "\r\n\r\n", -32700, nil},
		{"a long header line before the length", "X-Pad: " + strings.Repeat("a", 1<<20) + "\r\nContent-Length: 2\r\n\r\n{}", -32700, nil},
		{"a header block with no end", strings.Repeat("X-Pad: a\r\n", 64<<10) + "Content-Length: 2\r\n\r\n{}", -32700, nil},
	}
	for i, c := range cases {
		rs.send(t, c.input)
		m := rs.next(t)
		if errCode(m) != c.code || m["id"] != c.id {
			t.Errorf("%s: got %v, want code %v id %v", c.name, m, c.code, c.id)
		}
		// Every bad frame is followed by a good request, which must be
		// answered: the daemon keeps serving.
		id := 100 + i
		rs.send(t, frame(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"cline/unknown"}`, id)))
		for {
			m := rs.next(t)
			if m["id"] == float64(id) {
				if errCode(m) != -32601 {
					t.Fatalf("after %s: %v", c.name, m)
				}
				break
			}
			// A flood of header lines is refused a block at a time; its
			// last block may end in a frame of its own ({}: -32600).
			if !strings.Contains(c.name, "no end") || errCode(m) != -32700 && errCode(m) != -32600 {
				t.Fatalf("after %s: %v", c.name, m)
			}
		}
	}
	// Two different lengths: neither is trusted, so the body is not
	// skipped by either; what follows is answered as bad input until the
	// reader finds the next frame, which is served.
	rs.send(t, "Content-Length: 2\r\nContent-Length: 40\r\n\r\n{}"+frame(`{"jsonrpc":"2.0","id":8,"method":"cline/unknown"}`))
	if m := rs.next(t); errCode(m) != -32700 || !strings.Contains(fmt.Sprint(m), "Content-Length") {
		t.Fatalf("conflicting lengths: %v", m)
	}
	for {
		m := rs.next(t)
		if m["id"] == float64(8) {
			if errCode(m) != -32601 {
				t.Fatalf("frame after conflicting lengths: %v", m)
			}
			break
		}
		if errCode(m) != -32700 {
			t.Fatalf("between conflicting lengths and the next frame: %v", m)
		}
	}
	// Junk glued before a header: the junk is answered, the frame served.
	rs.send(t, "garbage"+frame(`{"jsonrpc":"2.0","id":7,"method":"shutdown"}`))
	if m := rs.next(t); errCode(m) != -32700 {
		t.Fatalf("junk before header: %v", m)
	}
	if m := rs.next(t); m["id"] != float64(7) || m["error"] != nil {
		t.Fatalf("frame after junk: %v", m)
	}
}

func TestACPDialectDetectedAndFramedByLines(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		rpc.NewServer(rpc.Options{}).Serve(context.Background(), inR, outW)
		outW.Close()
	}()
	out := bufio.NewReader(outR)
	readLine := func() map[string]any {
		t.Helper()
		line, err := jsonrpcclient.ReadFrame(out, jsonrpcclient.ACP)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("not one JSON message per line: %q", line)
		}
		return m
	}
	go inW.Write([]byte("\n" + `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}` + "\n"))
	m := readLine()
	res, _ := m["result"].(map[string]any)
	if res["protocolVersion"] != float64(1) {
		t.Fatalf("ACP initialize: %v", m)
	}
	go inW.Write([]byte("{not json\n"))
	if m := readLine(); errCode(m) != -32700 {
		t.Fatalf("bad line: %v", m)
	}
	go inW.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"nope"}` + "\n"))
	if m := readLine(); errCode(m) != -32601 || m["id"] != float64(1) {
		t.Fatalf("after bad line: %v", m)
	}
	inW.Close()
	<-done
}

func TestDetectDialect(t *testing.T) {
	for in, want := range map[string]rpc.Dialect{
		"Content-Length: 2\r\n\r\n{}": rpc.DialectLSP,
		"\r\n  {\"jsonrpc\":\"2.0\"}": rpc.DialectACP,
		"{}":                          rpc.DialectACP,
	} {
		got, err := rpc.DetectDialect(bufio.NewReader(strings.NewReader(in)))
		if err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", in, got, err, want)
		}
	}
}

// TestOutputIsDeterministic: the same answer is the same bytes every time
// (map keys sorted), which clients' tests and logs rely on.
func TestOutputIsDeterministic(t *testing.T) {
	var first string
	for i := range 5 {
		srv := rpc.NewServer(rpc.Options{Version: "v"})
		var out strings.Builder
		in := strings.NewReader(frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`))
		srv.Serve(context.Background(), in, &syncWriter{b: &out})
		if i == 0 {
			first = out.String()
		} else if out.String() != first {
			t.Fatalf("run %d differs:\n%s\n%s", i, first, out.String())
		}
	}
	if !strings.Contains(first, `"serverInfo":{"name":"cline-ls","version":"v"}`) {
		t.Fatalf("output = %s", first)
	}
}
