package delivery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/wire"
	"github.com/cline-ls/cline-ls/workspace"
)

// Workspace is the folders as they are now: their roots and ignore
// rules are rebuilt when the folders change, so each use asks again.
type Workspace interface {
	// Roots is nil with a nil error before any folder is known.
	Roots() (*workspace.Roots, error)
	Ignore() *workspace.IgnoreMatcher
}

// Config is what a Delivery is made of.
type Config struct {
	Client    Client
	Buffers   *workspace.Buffers
	Folders   *workspace.Folders
	Workspace Workspace
	// Locks serialise edits per file; shared by every session of the
	// connection.
	Locks *workspace.FileLocks
	// Diagnose waits for the editor's diagnostics of buffers just edited
	// and says by path what the edits introduced or fixed; nil for none.
	Diagnose func(ctx context.Context, edits []BufferEdit, display func(string) string) map[string]string
	// Warn tells the user something the model's answer cannot.
	Warn func(msg string)
	// Background runs fn off the caller's path with a context that ends
	// with the connection, and reports false when the connection is
	// closing and fn will not run.
	Background func(fn func(ctx context.Context)) bool
	Log        *slog.Logger
}

// Delivery is one connection's delivery: what its sessions' Files share.
type Delivery struct {
	cfg Config
	// late holds, by buffer URI, an applied edit whose didChange is late.
	late sync.Map // string → *lateEdit
}

// New returns the delivery of cfg; nil Warn, Background and Log do
// nothing.
func New(cfg Config) *Delivery {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Warn == nil {
		cfg.Warn = func(string) {}
	}
	if cfg.Background == nil {
		cfg.Background = func(func(context.Context)) bool { return false }
	}
	return &Delivery{cfg: cfg}
}

// Files returns the tools.Files of one session: relative paths start at
// cwd (when set) and an ACP client's fs methods are asked for sessionID.
// What the model has seen is per Files, so each session has its own.
func (d *Delivery) Files(sessionID, cwd string) *Files {
	return &Files{d: d, sessionID: sessionID, cwd: cwd,
		seen: make(map[string]string), acpReads: make(map[string]tools.FileText)}
}

// Roots is the workspace folders opened for confined disk access, or
// why there are none.
func (d *Delivery) Roots() (*workspace.Roots, error) {
	r, err := d.cfg.Workspace.Roots()
	if r == nil && err == nil {
		return nil, errors.New("no workspace folder is open: the editor sent no workspace folder or root")
	}
	return r, err
}

// DiskNote says which of an approval's changes reach the disk at once
// ("writes notes.txt to disk"), or "" when none does.
func (d *Delivery) DiskNote(sessionID string, changes []tools.Change) string {
	f := d.Files(sessionID, "")
	viaClient := f.acpWrites()
	var names []string
	for _, c := range changes {
		_, open := d.cfg.Buffers.GetPath(c.Path)
		if changeRoute(c, viaClient, open) != toDisk {
			continue
		}
		name := f.Display(c.Path)
		switch {
		case c.MoveTo != "":
			names = append(names, "moves "+name+" on disk")
		case c.NewText == nil:
			names = append(names, "deletes "+name+" from disk")
		default:
			names = append(names, "writes "+name+" to disk")
		}
	}
	if len(names) == 0 {
		return ""
	}
	if len(names) > 3 {
		names = append(names[:3], fmt.Sprintf("and %d more", len(names)-3))
	}
	return strings.Join(names, ", ") + " (not open in the editor)"
}

// Absolute resolves tool-call locations against the workspace folders,
// as ACP has them (absolute paths) while the tools describe them as the
// user reads them; a path that does not resolve is left as it is.
func (d *Delivery) Absolute(locs []wire.Location) []wire.Location {
	if len(locs) == 0 {
		return locs
	}
	r, err := d.Roots()
	if err != nil || r == nil {
		return locs
	}
	out := make([]wire.Location, len(locs))
	for i, l := range locs {
		out[i] = l
		if abs, err := r.Resolve(l.Path); err == nil {
			out[i].Path = abs
		}
	}
	return out
}
