package rpctest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// ACPClient is a minimal ACP client over a daemon's stdio, for tests and
// benchmarks that move large files: the ACP SDK's reader stops at lines of
// 10 MiB, shorter than the whole file a 10 MiB edit writes through
// fs/write_text_file. It reads every line the daemon sends, counts its
// bytes by method, holds "editor buffers" for fs/read_text_file and
// fs/write_text_file (a file it holds no buffer for is read from disk),
// grants every permission request with allow_once, and keeps the diff
// content it is shown.
type ACPClient struct {
	w io.Writer

	mu      sync.Mutex
	nextID  int
	answers map[int]chan acpAnswer
	bytes   map[string]int    // by method; "response" for answers
	files   map[string]string // the client's buffers, by absolute path
	diffs   []DiffContent
	perms   int
	bad     error // the first line that was not JSON
	done    chan struct{}
	terms   *terminals
}

// DiffContent is one ACP diff content item the client was sent, in a
// session/update or a session/request_permission.
type DiffContent struct {
	Path    string  `json:"path"`
	OldText *string `json:"oldText"`
	NewText string  `json:"newText"`
}

type acpAnswer struct {
	result json.RawMessage
	err    error
}

// NewACPClient starts reading the daemon's output r; requests go to w.
func NewACPClient(r io.Reader, w io.Writer) *ACPClient {
	c := &ACPClient{w: w, answers: map[int]chan acpAnswer{}, bytes: map[string]int{}, files: map[string]string{}, done: make(chan struct{}), terms: newTerminals()}
	go func() {
		defer close(c.done)
		br := bufio.NewReaderSize(r, 1<<20)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				c.handle(line)
			}
			if err != nil {
				c.mu.Lock()
				for id, ch := range c.answers {
					ch <- acpAnswer{err: fmt.Errorf("the daemon's output ended: %w", err)}
					delete(c.answers, id)
				}
				c.mu.Unlock()
				return
			}
		}
	}()
	return c
}

// Done is closed when the daemon's output has ended.
func (c *ACPClient) Done() <-chan struct{} { return c.done }

// Call sends a request and waits for its result; an error answer is an
// error.
func (c *ACPClient) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	ch := make(chan acpAnswer, 1)
	c.answers[id] = ch
	c.mu.Unlock()
	if err := c.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		return nil, err
	}
	select {
	case a := <-ch:
		return a.result, a.err
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// Bytes returns the bytes the daemon sent since the last reset, by method
// ("response" for answers to the client's requests), and resets the count.
func (c *ACPClient) Bytes() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.bytes
	c.bytes = map[string]int{}
	return b
}

// File returns the client's buffer for path, if it holds one.
func (c *ACPClient) File(path string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.files[path]
	return t, ok
}

// SetFile sets (or, with ok false, drops) the client's buffer for path.
func (c *ACPClient) SetFile(path, text string, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ok {
		c.files[path] = text
	} else {
		delete(c.files, path)
	}
}

// Diffs returns the diff content items sent since the last call, and
// forgets them.
func (c *ACPClient) Diffs() []DiffContent {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.diffs
	c.diffs = nil
	return d
}

// Permissions is how many permission requests the client was sent.
func (c *ACPClient) Permissions() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.perms
}

// Err is the first problem with what the daemon sent (a line that is not
// JSON), or nil.
func (c *ACPClient) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bad
}

func (c *ACPClient) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err = c.w.Write(append(b, '\n'))
	return err
}

type acpMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

func (c *ACPClient) handle(line []byte) {
	var m acpMessage
	err := json.Unmarshal(line, &m)
	c.mu.Lock()
	key := m.Method
	if key == "" {
		key = "response"
	}
	c.bytes[key] += len(line)
	if err != nil && c.bad == nil {
		c.bad = fmt.Errorf("the daemon sent a line that is not JSON: %w", err)
	}
	c.mu.Unlock()
	if err != nil {
		return
	}
	switch m.Method {
	case "":
		var id int
		json.Unmarshal(m.ID, &id)
		c.mu.Lock()
		ch := c.answers[id]
		delete(c.answers, id)
		c.mu.Unlock()
		if ch == nil {
			return
		}
		if m.Error != nil {
			ch <- acpAnswer{err: fmt.Errorf("error %d: %s %s", m.Error.Code, m.Error.Message, m.Error.Data)}
		} else {
			ch <- acpAnswer{result: m.Result}
		}
		return
	case "session/update":
		var p struct {
			Update struct {
				Content []json.RawMessage `json:"content"`
				Status  string            `json:"status"`
			} `json:"update"`
		}
		json.Unmarshal(m.Params, &p)
		c.noteDiffs(p.Update.Content)
		c.terms.noteShown(p.Update.Content, p.Update.Status)
		return
	}
	if len(m.ID) == 0 {
		return // another notification
	}
	if strings.HasPrefix(m.Method, "terminal/") {
		// terminal/wait_for_exit blocks until the command ends: answered
		// aside, the read loop goes on (a terminal/kill may come next).
		go c.answer(m, func() (any, error) { return c.terms.serve(m.Method, m.Params) })
		return
	}
	c.answer(m, func() (any, error) { return c.serve(m) })
}

func (c *ACPClient) answer(m acpMessage, serve func() (any, error)) {
	result, rerr := serve()
	if rerr != nil {
		c.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32603, "message": rerr.Error()}})
		return
	}
	c.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
}

// serve answers one of the daemon's requests.
func (c *ACPClient) serve(m acpMessage) (any, error) {
	switch m.Method {
	case "fs/read_text_file":
		var p struct{ Path string }
		json.Unmarshal(m.Params, &p)
		if t, ok := c.File(p.Path); ok {
			return map[string]any{"content": t}, nil
		}
		b, err := os.ReadFile(p.Path)
		if err != nil {
			return nil, err
		}
		return map[string]any{"content": string(b)}, nil
	case "fs/write_text_file":
		var p struct{ Path, Content string }
		if err := json.Unmarshal(m.Params, &p); err != nil {
			return nil, err
		}
		c.SetFile(p.Path, p.Content, true)
		return nil, nil
	case "session/request_permission":
		var p struct {
			ToolCall struct {
				Content []json.RawMessage `json:"content"`
			} `json:"toolCall"`
		}
		json.Unmarshal(m.Params, &p)
		c.mu.Lock()
		c.perms++
		c.mu.Unlock()
		c.noteDiffs(p.ToolCall.Content)
		return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}}, nil
	}
	return nil, errors.New("method not found: " + m.Method)
}

func (c *ACPClient) noteDiffs(content []json.RawMessage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, raw := range content {
		var item struct {
			Type string `json:"type"`
			DiffContent
		}
		if json.Unmarshal(raw, &item) == nil && item.Type == "diff" {
			c.diffs = append(c.diffs, item.DiffContent)
		}
	}
}

// Notify sends a notification to the daemon (session/cancel, say).
func (c *ACPClient) Notify(method string, params any) error {
	return c.send(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}
