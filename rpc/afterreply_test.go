package rpc

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
)

// failingWriter is a client that reads nothing: every write fails.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("the client is gone") }

// TestOnReplyRunsWhenTheAnswerCannotBeWritten: work waiting for an
// answer runs once that answer is queued or once it cannot be (the
// connection closing, or its output broken), without a timer: work such
// as the watcher's start closes what later work waits on, so it must not
// be left waiting forever.
func TestOnReplyRunsWhenTheAnswerCannotBeWritten(t *testing.T) {
	for _, c := range []struct {
		name  string
		w     io.Writer
		close bool
	}{{"queued", io.Discard, false}, {"closed", io.Discard, true}, {"broken", failingWriter{}, false}} {
		t.Run(c.name, func(t *testing.T) {
			st := newStream(DialectLSP, bufio.NewReader(strings.NewReader("")), c.w, nil, nil)
			defer st.Close()
			ctx := context.Background()
			if c.name == "broken" {
				// A first message makes the writer meet the broken output.
				st.Write(ctx, jsonrpc2.NewResponse(jsonrpc2.NewNumberID(1), jsonrpc2.RawMessage(`{}`), nil))
				for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
					st.errMu.Lock()
					err := st.werr
					st.errMu.Unlock()
					if err != nil {
						break
					}
					if time.Now().After(deadline) {
						t.Fatal("the writer never met the broken output")
					}
				}
			}
			if c.close {
				st.Close()
			}
			// Two pieces of work for one answer (initialize files the
			// stale-temp cleaning and the watcher's start): both run.
			ran, ran2 := make(chan struct{}), make(chan struct{})
			id := jsonrpc2.NewNumberID(2)
			st.onReply(id, func() { close(ran) })
			st.onReply(id, func() { close(ran2) })
			_, err := st.Write(ctx, jsonrpc2.NewResponse(id, jsonrpc2.RawMessage(`{}`), nil))
			if c.name != "closed" && (err == nil) != (c.name == "queued") {
				t.Errorf("Write: %v", err) // (once closed, the queue may still take it, or not)
			}
			for i, c := range []chan struct{}{ran, ran2} {
				select {
				case <-c:
				case <-time.After(10 * time.Second): // a failure guard: the work runs within Write
					t.Fatalf("work %d waiting for the answer did not run", i+1)
				}
			}
		})
	}
}
