package rpc

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/internal/jsonrpcclient"
)

// Methods only the test binary serves, whose handlers panic.
const (
	methodTestPanic       = "cline-ls/test/panic"
	methodTestPanicNotify = "cline-ls/test/panicNotify"
	methodTestPanicAsync  = "cline-ls/test/panicAsync"
)

func init() {
	boom := func(*Server, context.Context, *jsonrpc2.Request) (any, error) { panic("boom") }
	serve(methodTestPanic, inBoth, boom)
	serve(methodTestPanicNotify, inBoth, boom)
	serve(methodTestPanicAsync, inBoth, func(_ *Server, ctx context.Context, _ *jsonrpc2.Request) (any, error) {
		jsonrpc2.Async(ctx) // off the read loop, as waiting handlers are
		panic("boom after async")
	})
}

// TestHandlerPanicAnswersErrorAndKeepsServing: a handler that panics
// fails its request with an internal error (or, for a notification, is
// dropped), and the daemon goes on answering requests.
func TestHandlerPanicAnswersErrorAndKeepsServing(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a failure guard
	defer cancel()
	srvEnd, cliEnd := net.Pipe()
	served := make(chan struct{})
	var code int
	var serveErr error
	go func() {
		defer close(served)
		code, serveErr = NewServer(Options{}).Serve(context.Background(), srvEnd, srvEnd)
		srvEnd.Close()
	}()
	c := jsonrpcclient.New(cliEnd, cliEnd, jsonrpcclient.Options{})
	defer func() { c.Close(); <-served; <-c.Done() }()
	if err := c.Call(ctx, methodInitialize, map[string]any{"processId": nil, "rootUri": nil, "capabilities": map[string]any{}}, nil); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{methodTestPanic, methodTestPanicAsync} {
		err := c.Call(ctx, m, nil, nil)
		var je *jsonrpc2.Error
		if !errors.As(err, &je) || je.Code != jsonrpc2.InternalError || !strings.Contains(je.Message, "internal error in "+m) {
			t.Errorf("%s answered %v, want an internal error naming it", m, err)
		}
	}
	if err := c.Notify(ctx, methodTestPanicNotify, nil); err != nil {
		t.Fatal(err)
	}
	// Still serving: shutdown is answered and exit ends the daemon with 0.
	if err := c.Call(ctx, methodShutdown, nil, nil); err != nil {
		t.Fatalf("shutdown after the panics: %v", err)
	}
	c.Notify(ctx, methodExit, nil)
	select {
	case <-served:
		if code != 0 || serveErr != nil {
			t.Errorf("Serve after shutdown and exit = %d, %v; want 0, nil", code, serveErr)
		}
	case <-ctx.Done():
		t.Fatal("the daemon did not exit")
	}
}

// lateEntered tells the test that panicAsyncLate's handler has released
// the read loop; lateRelease holds it until the test has sent more.
// Each run of the test makes its own.
var lateEntered, lateRelease chan struct{}

const methodTestPanicAsyncLate = "cline-ls/test/panicAsyncLate"

func init() {
	serve(methodTestPanicAsyncLate, inBoth, func(_ *Server, ctx context.Context, _ *jsonrpc2.Request) (any, error) {
		jsonrpc2.Async(ctx)
		close(lateEntered)
		<-lateRelease
		panic("boom after later messages")
	})
}

// TestAsyncPanicNamesItsMethod: the error of a handler that panics after
// releasing the read loop names its own method, not whatever the read
// buffer holds by then (the method's string borrows that buffer, and
// only the request's own copy is cloned by the release).
func TestAsyncPanicNamesItsMethod(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a failure guard
	defer cancel()
	srvEnd, cliEnd := net.Pipe()
	served := make(chan struct{})
	go func() {
		defer close(served)
		NewServer(Options{}).Serve(context.Background(), srvEnd, srvEnd)
		srvEnd.Close()
	}()
	c := jsonrpcclient.New(cliEnd, cliEnd, jsonrpcclient.Options{})
	defer func() { c.Close(); <-served; <-c.Done() }()
	if err := c.Call(ctx, methodInitialize, map[string]any{"processId": nil, "rootUri": nil, "capabilities": map[string]any{}}, nil); err != nil {
		t.Fatal(err)
	}
	// A large frame first, so that the read buffer need not grow for the
	// frames that follow the late call's: they are read over its bytes.
	c.Call(ctx, methodTestPanic, map[string]any{"padding": strings.Repeat("x", 256)}, nil)
	lateEntered, lateRelease = make(chan struct{}), make(chan struct{})
	late := make(chan error, 1)
	go func() { late <- c.Call(ctx, methodTestPanicAsyncLate, nil, nil) }()
	<-lateEntered
	// Requests answered after it was read: its frame's bytes are read over.
	for range 3 {
		c.Call(ctx, methodTestPanic, nil, nil)
	}
	close(lateRelease)
	err := <-late
	var je *jsonrpc2.Error
	if !errors.As(err, &je) || !strings.Contains(je.Message, "internal error in "+methodTestPanicAsyncLate+":") {
		t.Errorf("the late panic answered %v, want an internal error naming %s", err, methodTestPanicAsyncLate)
	}
}
