package jsonrpcclient_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/internal/jsonrpcclient"
)

// peer is a scripted server on the other end of a pipe.
type peer struct {
	t       *testing.T
	framing jsonrpcclient.Framing
	conn    net.Conn
	r       *bufio.Reader
}

func (p *peer) next() map[string]any {
	p.t.Helper()
	body, err := jsonrpcclient.ReadFrame(p.r, p.framing)
	if err != nil {
		p.t.Fatalf("peer read: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		p.t.Fatalf("peer got %q: %v", body, err)
	}
	return m
}

func (p *peer) send(body string) {
	go p.conn.Write(jsonrpcclient.Frame(p.framing, []byte(body)))
}

func start(t *testing.T, f jsonrpcclient.Framing) (*jsonrpcclient.Client, *peer) {
	a, b := net.Pipe()
	c := jsonrpcclient.New(a, a, jsonrpcclient.Options{Framing: f})
	t.Cleanup(func() { c.Close(); b.Close(); <-c.Done() })
	return c, &peer{t: t, framing: f, conn: b, r: bufio.NewReader(b)}
}

func TestClientBothFramings(t *testing.T) {
	for name, f := range map[string]jsonrpcclient.Framing{"lsp": jsonrpcclient.LSP, "acp": jsonrpcclient.ACP} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // a failure guard
			defer cancel()
			c, p := start(t, f)

			// A call is answered by id, out of order with a notification.
			type res struct{ N int }
			got := make(chan error, 1)
			var r res
			go func() { got <- c.Call(ctx, "sum", map[string]int{"a": 1}, &r) }()
			req := p.next()
			if req["method"] != "sum" || req["jsonrpc"] != "2.0" {
				t.Fatalf("request: %v", req)
			}
			id, _ := json.Marshal(req["id"])
			p.send(`{"jsonrpc":"2.0","method":"note","params":{"x":1}}`)
			p.send(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"N":3}}`)
			if err := <-got; err != nil || r.N != 3 {
				t.Fatalf("call: %v %+v", err, r)
			}
			if _, err := c.Await(ctx, "note", nil); err != nil {
				t.Fatal(err)
			}

			// An error answer keeps its code.
			go func() { got <- c.Call(ctx, "bad", nil, nil) }()
			req = p.next()
			if _, has := req["params"]; has {
				t.Fatalf("nil params were sent: %v", req)
			}
			id, _ = json.Marshal(req["id"])
			p.send(`{"jsonrpc":"2.0","id":` + string(id) + `,"error":{"code":-32602,"message":"no"}}`)
			var je *jsonrpc2.Error
			if err := <-got; !errors.As(err, &je) || je.Code != jsonrpc2.InvalidParams {
				t.Fatalf("error answer: %v", err)
			}

			// Server requests: a handled one, an unhandled one.
			c.Handle("ask", func(ctx context.Context, params json.RawMessage) (any, error) {
				return map[string]string{"echo": string(params)}, nil
			})
			p.send(`{"jsonrpc":"2.0","id":"a1","method":"ask","params":[1]}`)
			if m := p.next(); m["id"] != "a1" || m["result"].(map[string]any)["echo"] != "[1]" {
				t.Fatalf("handled request answered %v", m)
			}
			p.send(`{"jsonrpc":"2.0","id":9,"method":"unknown"}`)
			if m := p.next(); m["id"] != float64(9) || m["error"].(map[string]any)["code"] != float64(-32601) {
				t.Fatalf("unhandled request answered %v", m)
			}
			if n := len(c.Messages("")); n != 3 {
				t.Fatalf("kept %d messages, want 3", n)
			}

			// A call waiting when the server goes away fails.
			go func() { got <- c.Call(ctx, "never", nil, nil) }()
			p.next()
			p.conn.Close()
			if err := <-got; !errors.Is(err, jsonrpcclient.ErrClosed) {
				t.Fatalf("call across the end: %v", err)
			}
		})
	}
}

func TestReadFrameRejectsBadHeaders(t *testing.T) {
	for _, in := range []string{"Content-Length: x\r\n\r\n", "X: 1\r\n\r\n{}", "Content-Length: 5\r\n\r\n{}"} {
		if _, err := jsonrpcclient.ReadFrame(bufio.NewReader(strings.NewReader(in)), jsonrpcclient.LSP); err == nil {
			t.Errorf("ReadFrame(%q) accepted it", in)
		}
	}
	r := bufio.NewReader(strings.NewReader("\n{\"a\":1}\r\n"))
	for _, want := range []string{"", `{"a":1}`} {
		if b, err := jsonrpcclient.ReadFrame(r, jsonrpcclient.ACP); err != nil || string(b) != want {
			t.Errorf("ACP frame: %q %v, want %q", b, err, want)
		}
	}
}

// TestClientCancelsMalformedAndBounds: a call given up is announced with
// the Cancel notification; a frame that is not JSON-RPC is shown to
// Malformed and skipped; a frame past MaxFrame ends the connection, and
// the waiting call says why.
func TestClientCancelsMalformedAndBounds(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // a failure guard
	defer cancel()
	a, b := net.Pipe()
	bad := make(chan string, 1)
	c := jsonrpcclient.New(a, a, jsonrpcclient.Options{
		Framing:  jsonrpcclient.ACP,
		MaxFrame: 100,
		Cancel: func(method string, id json.RawMessage) (string, any) {
			return "cancelled", map[string]any{"method": method, "id": id}
		},
		Malformed: func(body []byte, err error) { bad <- string(body) },
	})
	defer func() { c.Close(); b.Close(); <-c.Done() }()
	p := &peer{t: t, framing: jsonrpcclient.ACP, conn: b, r: bufio.NewReader(b)}

	callCtx, stop := context.WithCancel(ctx)
	got := make(chan error, 1)
	go func() { got <- c.Call(callCtx, "slow", nil, nil) }()
	req := p.next()
	stop()
	if err := <-got; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
	if m := p.next(); m["method"] != "cancelled" || m["params"].(map[string]any)["method"] != "slow" ||
		m["params"].(map[string]any)["id"] != req["id"] {
		t.Fatalf("after the cancel: %v, want the cancel notification for %v", m, req["id"])
	}

	p.send(`not json`)
	if b := <-bad; b != "not json" {
		t.Errorf("Malformed saw %q", b)
	}

	go func() { got <- c.Call(ctx, "big", nil, nil) }()
	p.next()
	p.send(`{"jsonrpc":"2.0","id":2,"result":"` + strings.Repeat("x", 200) + `"}`)
	err := <-got
	if !errors.Is(err, jsonrpcclient.ErrClosed) || !errors.Is(err, jsonrpcclient.ErrFrameTooLong) {
		t.Fatalf("call answered past the bound: %v, want ErrClosed because of ErrFrameTooLong", err)
	}
	<-c.Done()
}

// TestReplyBytes pins the answers to a server's requests byte for byte:
// members sorted, a null result sent, an error alone.
func TestReplyBytes(t *testing.T) {
	c, p := start(t, jsonrpcclient.LSP)
	c.Handle("nothing", func(context.Context, json.RawMessage) (any, error) { return nil, nil })
	c.Handle("refuse", func(context.Context, json.RawMessage) (any, error) {
		return nil, &jsonrpc2.Error{Code: jsonrpc2.InvalidParams, Message: "no <way>"}
	})
	c.Handle("fail", func(context.Context, json.RawMessage) (any, error) { return nil, errors.New("broke") })
	c.Handle("unencodable", func(context.Context, json.RawMessage) (any, error) { return func() {}, nil })
	c.Handle("edit", func(context.Context, json.RawMessage) (any, error) {
		return struct {
			Applied bool `json:"applied"`
		}{true}, nil
	})
	cases := []struct{ req, want string }{
		{`{"jsonrpc":"2.0","id":1,"method":"nothing"}`, `{"id":1,"jsonrpc":"2.0","result":null}`},
		{`{"jsonrpc":"2.0","id":"x","method":"edit"}`, `{"id":"x","jsonrpc":"2.0","result":{"applied":true}}`},
		{`{"jsonrpc":"2.0","id":2,"method":"refuse"}`, `{"error":{"message":"no \u003cway\u003e","code":-32602},"id":2,"jsonrpc":"2.0"}`},
		{`{"jsonrpc":"2.0","id":3,"method":"fail"}`, `{"error":{"message":"broke","code":-32603},"id":3,"jsonrpc":"2.0"}`},
		{`{"jsonrpc":"2.0","id":4,"method":"unencodable"}`, `{"error":{"message":"json: unsupported type: func()","code":-32603},"id":4,"jsonrpc":"2.0"}`},
		{`{"jsonrpc":"2.0","id":5,"method":"none"}`, `{"error":{"message":"client: no handler for none","code":-32601},"id":5,"jsonrpc":"2.0"}`},
	}
	for _, tc := range cases {
		p.send(tc.req)
		body, err := jsonrpcclient.ReadFrame(p.r, p.framing)
		if err != nil {
			t.Fatal(err)
		}
		if string(body) != tc.want {
			t.Errorf("%s answered\n %s\nwant %s", tc.req, body, tc.want)
		}
	}
}
