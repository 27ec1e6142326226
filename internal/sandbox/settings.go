package sandbox

import (
	"path/filepath"
	"slices"
	"strings"
)

// Settings are the user's sandbox settings: a forced backend, the
// network, and paths relative to the session's folder or "~/".
type Settings struct {
	Backend    string
	Network    bool
	AllowWrite []string
	DenyRead   []string
}

// Place is where a command runs: the workspace folders, the session's
// folder (an ACP session's may be outside them) and the user's folders.
type Place struct {
	Folders                    []string
	CWD                        string
	Home, StateDir, RuntimeDir string
}

// PolicyFor is what confines a command run at p under st (nil for no
// settings): it may write the workspace folders (and the session's
// folder), what allowWrite adds, and its private temporary folder; it
// cannot read the secrets under the home folder, the state directory or
// what denyRead lists. Folders are taken as they really are, symbolic
// links resolved, since the backends bind real paths.
func PolicyFor(p Place, st *Settings) Policy {
	folders := realPaths(p.Folders)
	if p.CWD != "" && !slices.Contains(folders, p.CWD) {
		folders = append(folders, realPaths([]string{p.CWD})...)
	}
	base := p.CWD
	if base == "" && len(folders) > 0 {
		base = folders[0]
	}
	pol := Policy{Write: folders, Home: p.Home, StateDir: p.StateDir, RuntimeDir: p.RuntimeDir}
	if st == nil {
		return pol
	}
	pol.Backend, _ = ParseBackend(st.Backend) // checked with the settings
	pol.Network = st.Network
	for _, w := range st.AllowWrite {
		if a := settingPath(w, p.Home, base); a != "" {
			pol.Write = append(pol.Write, a)
		}
	}
	for _, d := range st.DenyRead {
		if a := settingPath(d, p.Home, base); a != "" {
			pol.DenyRead = append(pol.DenyRead, a)
		}
	}
	return pol
}

func realPaths(paths []string) []string {
	var out []string
	for _, p := range paths {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			out = append(out, r)
		}
	}
	return out
}

// settingPath makes a path of the sandbox settings absolute: "~/" is the
// home folder, a relative path is under base. "" when it cannot be.
func settingPath(p, home, base string) string {
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		if home == "" {
			return ""
		}
		return filepath.Join(home, strings.TrimPrefix(p, "~"))
	case filepath.IsAbs(p):
		return filepath.Clean(p)
	case base != "":
		return filepath.Join(base, p)
	}
	return ""
}
