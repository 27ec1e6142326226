package rpc

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"

	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/workspace"
)

// files is the daemon's tools.Files: the workspace folders on disk with the
// editor's open buffers overlaid, and edits delivered to the editor for
// open buffers and atomically to disk for the rest. One is made per
// session, so that what "the model has seen" is per session.
type files struct {
	s         *Server
	sessionID string // for the ACP client's fs methods
	cwd       string // the session's folder: relative paths start there

	mu       sync.Mutex
	seen     map[string]string
	acpReads map[string]tools.FileText // guarded by mu; texts the ACP client gave since the last edit
}

func (s *Server) newFiles() *files {
	return &files{s: s, seen: make(map[string]string), acpReads: make(map[string]tools.FileText)}
}

func (f *files) roots() (*workspace.Roots, error) {
	return f.s.ws.Roots()
}

func (f *files) Resolve(path string) (string, error) {
	r, err := f.roots()
	if err != nil {
		return "", err
	}
	// Relative to the session's folder, which may be below a workspace
	// folder; the roots decide what is relative (a URI is not) and
	// whether the result is inside.
	var abs string
	if f.cwd != "" {
		abs, err = r.ResolveIn(f.cwd, path)
	} else {
		abs, err = r.Resolve(path)
	}
	if err != nil {
		return "", err
	}
	fi, statErr := r.Stat(abs)
	if f.s.ws.Ignore().ClineIgnored(abs, statErr == nil && fi.IsDir()) {
		return "", &workspace.PathError{Path: path, Kind: workspace.PathOutside,
			Reason: "the workspace's .clineignore excludes it; the agent may not read or change it"}
	}
	return abs, nil
}

// Disk implements tools.Files.
func (f *files) Disk() (*workspace.Roots, error) { return f.roots() }

func (f *files) Display(abs string) string {
	r, err := f.roots()
	if err != nil {
		return abs
	}
	return r.Display(abs)
}

func (f *files) Root() string {
	if f.cwd != "" {
		return f.cwd
	}
	if p := f.s.folders.Paths(); len(p) > 0 {
		return p[0]
	}
	return ""
}

func (f *files) Ignored(abs string, isDir bool) bool {
	// The daemon's state directory counts as ignored, so the listing and
	// search walkers (and list_code_definitions) leave it out.
	r, _ := f.roots()
	return f.s.ws.Ignore().Ignored(abs, isDir) || r.Own().Holds(abs)
}

func (f *files) Read(ctx context.Context, abs string) (tools.FileText, error) {
	if ft, handled, err := f.acpRead(ctx, abs); handled {
		return ft, err
	}
	if snap, ok := f.s.buffers.GetPath(abs); ok {
		return tools.FileText{Text: f.s.bufferText(snap), Exists: true, Open: true, Version: snap.Version}, nil
	}
	r, err := f.roots()
	if err != nil {
		return tools.FileText{}, err
	}
	data, fi, err := r.ReadFile(abs, tools.MaxFileBytes)
	if err != nil {
		// A missing file is no error: FileText.Exists stays false.
		return tools.FileText{}, f.diskErr(abs, err)
	}
	return tools.FileText{Text: string(data), Exists: true, Mode: fi.Mode().Perm()}, nil
}

// diskErr words a disk read error for the model: a missing file is not
// an error for Read (Exists is false), the rest name the file by its
// display path.
func (f *files) diskErr(abs string, err error) error {
	var nr *workspace.NotRegularFileError
	var tl *workspace.FileTooLargeError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case errors.As(err, &nr) && nr.Mode.IsDir():
		return fmt.Errorf("%s is a directory, not a file", f.Display(abs))
	case errors.As(err, &nr):
		return &workspace.NotRegularFileError{Path: f.Display(abs), Mode: nr.Mode}
	case errors.As(err, &tl):
		return fmt.Errorf("%s is over the %d MB a tool may load", f.Display(abs), tools.MaxFileBytes>>20)
	}
	return err
}

// OpenBuffers lists the files open in the editor, so search_codebase
// searches their unsaved text (tools.OpenBufferLister).
func (f *files) OpenBuffers() []string {
	var out []string
	for _, u := range f.s.buffers.URIs() {
		if snap, ok := f.s.buffers.Get(u); ok && snap.Path != "" {
			out = append(out, snap.Path)
		}
	}
	return out
}

func (f *files) Seen(abs, text string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen[abs] = text
}

func (f *files) SeenText(abs string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.seen[abs]
	return t, ok
}
