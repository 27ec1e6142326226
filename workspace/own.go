package workspace

import "path/filepath"

// OwnPaths are the daemon's own folders (its state directory: session
// files, checkpoint blobs and indexes), which may lie inside a workspace
// folder (XDG_STATE_HOME below it, or a home folder opened as the
// workspace). They are never part of the workspace: not checkpointed or
// restored, not listed or searched, not a path a tool may name. Holds is
// the one test of that; a nil *OwnPaths holds nothing.
type OwnPaths struct {
	dirs []string // cleaned, absolute; each as given and with its symlinks evaluated
}

// NewOwnPaths returns the daemon's own folders; empty or relative ones
// are dropped.
func NewOwnPaths(dirs ...string) *OwnPaths {
	o := &OwnPaths{}
	for _, d := range dirs {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		d = filepath.Clean(d)
		o.dirs = append(o.dirs, d)
		// Workspace paths are compared in their real form (Roots and the
		// checkpoint walk evaluate symlinks), so the real form is held
		// too; a folder not made yet has no other form.
		if real, err := filepath.EvalSymlinks(d); err == nil && real != d {
			o.dirs = append(o.dirs, real)
		}
	}
	return o
}

// Holds reports whether abs, a clean absolute path, is one of the
// daemon's own folders or lies inside one.
func (o *OwnPaths) Holds(abs string) bool {
	if o == nil {
		return false
	}
	for _, d := range o.dirs {
		if pathWithin(d, abs) {
			return true
		}
	}
	return false
}
