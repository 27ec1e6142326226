// Package toolstest provides a tools.Files over a real directory with an
// in-memory overlay standing in for the editor's open buffers, for tests
// of the built-in tools that need no editor connection.
package toolstest

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"sync"

	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/workspace"
)

// Files is a tools.Files rooted at one directory. Open buffers live in
// Buffers: a path present there is read from and written to memory, the
// way the daemon edits an editor's unsaved buffer, and the disk is left
// untouched.
type Files struct {
	roots  *workspace.Roots
	ignore *workspace.IgnoreMatcher

	mu      sync.Mutex
	buffers map[string]*tools.FileText
	seen    map[string]string
	// Reject, when set, is consulted before each delivery; a non-nil
	// error makes Apply fail with a DeliveryError and change nothing, as a
	// client answering applied:false would.
	Reject func(path string) error
	// Applied counts successful Apply calls.
	Applied int
}

// New returns Files rooted at dir, which must exist.
func New(dir string) (*Files, error) {
	roots, err := workspace.NewRoots(dir)
	if err != nil {
		return nil, err
	}
	return &Files{
		roots:   roots,
		ignore:  workspace.NewIgnoreMatcher(roots.Folders()),
		buffers: make(map[string]*tools.FileText),
		seen:    make(map[string]string),
	}, nil
}

// OpenBuffer makes path (relative to the root) an open buffer holding text.
func (f *Files) OpenBuffer(rel, text string) string {
	abs := filepath.Join(f.roots.Primary(), rel)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.buffers[abs] = &tools.FileText{Text: text, Exists: true, Open: true, Version: 1}
	return abs
}

// Buffer returns an open buffer's text.
func (f *Files) Buffer(abs string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.buffers[abs]
	if !ok {
		return "", false
	}
	return b.Text, true
}

// Resolve implements tools.Files.
func (f *Files) Resolve(path string) (string, error) { return f.roots.Resolve(path) }

// Display implements tools.Files.
func (f *Files) Display(abs string) string { return f.roots.Display(abs) }

// Disk implements tools.Files.
func (f *Files) Disk() (*workspace.Roots, error) { return f.roots, nil }

// Root implements tools.Files.
func (f *Files) Root() string { return f.roots.Primary() }

// Ignored implements tools.Files.
func (f *Files) Ignored(abs string, isDir bool) bool { return f.ignore.Ignored(abs, isDir) }

// Read implements tools.Files.
func (f *Files) Read(_ context.Context, abs string) (tools.FileText, error) {
	f.mu.Lock()
	b, ok := f.buffers[abs]
	f.mu.Unlock()
	if ok {
		return *b, nil
	}
	data, fi, err := f.roots.ReadFile(abs, tools.MaxFileBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return tools.FileText{}, nil
	}
	var nr *workspace.NotRegularFileError
	if errors.As(err, &nr) {
		if nr.Mode.IsDir() {
			return tools.FileText{}, &workspace.PathError{Path: abs, Reason: "is a directory, not a file"}
		}
		return tools.FileText{}, &workspace.PathError{Path: abs, Reason: "is " + workspace.FileKind(nr.Mode) + ", not a regular file"}
	}
	if err != nil {
		return tools.FileText{}, err
	}
	return tools.FileText{Text: string(data), Exists: true, Mode: fi.Mode().Perm()}, nil
}

// Apply implements tools.Files: all changes are planned, then checked
// against Reject, then written; nothing is written if any is refused.
func (f *Files) Apply(ctx context.Context, plan tools.Planner) ([]tools.Change, error) {
	changes, err := plan(ctx, func(abs string) (tools.FileText, error) { return f.Read(ctx, abs) })
	if err != nil {
		return nil, err
	}
	if f.Reject != nil {
		for _, c := range changes {
			if err := f.Reject(c.Path); err != nil {
				return nil, &tools.DeliveryError{Path: f.Display(c.Path), Reason: err.Error()}
			}
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range changes {
		if b, ok := f.buffers[c.Path]; ok && c.NewText != nil && c.MoveTo == "" {
			b.Text = *c.NewText
			b.Version++
			continue
		}
		switch {
		case c.NewText == nil:
			if err := f.roots.Remove(c.Path); err != nil {
				return nil, &tools.DeliveryError{Path: f.Display(c.Path), Reason: err.Error()}
			}
		default:
			dst := c.Path
			if c.MoveTo != "" {
				dst = c.MoveTo
			}
			if err := f.roots.MkdirParents(dst); err != nil {
				return nil, &tools.DeliveryError{Path: f.Display(dst), Reason: err.Error()}
			}
			mode := fs.FileMode(0o644)
			if fi, err := f.roots.Stat(c.Path); err == nil {
				mode = fi.Mode().Perm()
			}
			if err := f.roots.WriteFile(dst, []byte(*c.NewText), mode); err != nil {
				return nil, &tools.DeliveryError{Path: f.Display(dst), Reason: err.Error()}
			}
			if c.MoveTo != "" && c.MoveTo != c.Path {
				f.roots.Remove(c.Path)
			}
		}
	}
	f.Applied++
	return changes, nil
}

// Seen implements tools.Files.
func (f *Files) Seen(abs, text string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen[abs] = text
}

// SeenText implements tools.Files.
func (f *Files) SeenText(abs string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.seen[abs]
	return t, ok
}

var _ tools.Files = (*Files)(nil)
