package main

import (
	"bytes"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/internal/jsonrpcclient"
)

// TestServeEndsWithClientProcess starts the daemon as vscode-languageclient
// does, with --stdio and the editor's process id, and checks it serves,
// then exits cleanly once that process is killed although stdin stays open.
func TestServeEndsWithClientProcess(t *testing.T) {
	editor := exec.Command("sleep", "300")
	if err := editor.Start(); err != nil {
		t.Skipf("no sleep command to stand in for the editor: %v", err)
	}
	defer editor.Process.Kill()

	stdinR, stdinW := io.Pipe()
	defer stdinW.Close()
	stdoutR, stdoutW := io.Pipe()
	var stderr lockedBuffer
	exited := make(chan int, 1)
	go func() {
		exited <- run([]string{"serve", "--stdio", "--clientProcessId", strconv.Itoa(editor.Process.Pid)}, stdinR, stdoutW, &stderr)
		stdoutW.Close()
	}()
	answered := make(chan struct{})
	go func() { // drain stdout, noting the initialize answer
		var seen bytes.Buffer
		buf := make([]byte, 4096)
		told := false
		for {
			n, err := stdoutR.Read(buf)
			seen.Write(buf[:n])
			if !told && strings.Contains(seen.String(), `"serverInfo"`) {
				close(answered)
				told = true
			}
			if err != nil {
				return
			}
		}
	}()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`
	stdinW.Write(jsonrpcclient.Frame(jsonrpcclient.LSP, []byte(body)))
	select {
	case <-answered:
	case code := <-exited:
		t.Fatalf("the daemon exited with %d before the client process ended; stderr:\n%s", code, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("no answer to initialize")
	}

	editor.Process.Kill()
	editor.Wait() // reaped: a zombie still answers signal 0
	select {
	case code := <-exited:
		if code != 0 {
			t.Errorf("exit code %d after the client process ended, want 0; stderr:\n%s", code, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the daemon still runs after the client process ended")
	}
}

// lockedBuffer is a bytes.Buffer safe for the daemon's log writes and the
// test's reads.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
