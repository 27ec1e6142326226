package delivery

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/cline-ls/cline-ls/workspace"
)

// fakeClient is an editor as delivery sees it: answers by method from
// handle, the capabilities in caps.
type fakeClient struct {
	caps Caps

	mu     sync.Mutex
	handle func(ctx context.Context, method string, params any) (any, error)
	calls  []string
}

func (c *fakeClient) Caps() Caps { return c.caps }

func (c *fakeClient) Call(ctx context.Context, method string, params, result any) error {
	c.mu.Lock()
	c.calls = append(c.calls, method)
	h := c.handle
	c.mu.Unlock()
	if h == nil {
		return &json.UnsupportedValueError{Str: method}
	}
	res, err := h(ctx, method, params)
	if err != nil || result == nil || res == nil {
		return err
	}
	data, err := json.Marshal(res)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, result)
}

func (c *fakeClient) called(method string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, m := range c.calls {
		if m == method {
			n++
		}
	}
	return n
}

// fakeWorkspace is one folder.
type fakeWorkspace struct {
	roots  *workspace.Roots
	ignore *workspace.IgnoreMatcher
}

func (w fakeWorkspace) Roots() (*workspace.Roots, error) { return w.roots, nil }
func (w fakeWorkspace) Ignore() *workspace.IgnoreMatcher { return w.ignore }

// testbed is a Delivery over one temporary folder and a fake client.
type testbed struct {
	d       *Delivery
	client  *fakeClient
	buffers *workspace.Buffers
	locks   *workspace.FileLocks
	root    string
	warned  chan string
}

func newTestbed(t *testing.T, caps Caps) *testbed {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	roots, err := workspace.NewRoots(root)
	if err != nil {
		t.Fatal(err)
	}
	folders := &workspace.Folders{}
	f, err := workspace.NewFolder(workspace.PathToURI(root), "w")
	if err != nil {
		t.Fatal(err)
	}
	folders.Add(f)
	if caps.Encoding == "" {
		caps.Encoding = workspace.UTF16
	}
	tb := &testbed{client: &fakeClient{caps: caps}, buffers: workspace.NewBuffers(),
		locks: &workspace.FileLocks{}, root: root, warned: make(chan string, 10)}
	bg, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { stop(); wg.Wait() })
	tb.d = New(Config{
		Client:    tb.client,
		Buffers:   tb.buffers,
		Folders:   folders,
		Workspace: fakeWorkspace{roots: roots, ignore: workspace.NewIgnoreMatcher([]string{root})},
		Locks:     tb.locks,
		Warn:      func(msg string) { tb.warned <- msg },
		Background: func(fn func(context.Context)) bool {
			wg.Go(func() { fn(bg) })
			return true
		},
	})
	return tb
}

// open opens path in the mirror at version 1 and returns its URI.
func (tb *testbed) open(path, text string) string {
	uri := workspace.PathToURI(path)
	tb.buffers.Open(uri, path, "plaintext", 1, text)
	return uri
}

// applyToMirror does what an editor that applies p does: the edits in
// its buffers, and their didChange.
func (tb *testbed) applyToMirror(t *testing.T, p applyEditParams) {
	t.Helper()
	for _, dc := range p.Edit.DocumentChanges {
		changes := make([]workspace.Change, 0, len(dc.Edits))
		for _, e := range slices.Backward(dc.Edits) {
			changes = append(changes, workspace.Change{Range: &e.Range, Text: e.NewText})
		}
		if err := tb.buffers.Change(dc.TextDocument.URI, dc.TextDocument.Version+1, tb.client.caps.Encoding, changes); err != nil {
			t.Errorf("didChange: %v", err)
		}
	}
}
