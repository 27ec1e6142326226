package workspace

import (
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"sync"

	"go.lsp.dev/uri"
)

// Folder is one workspace folder the client opened.
type Folder struct {
	URI  string
	Name string
	Path string // absolute, cleaned
}

// Folders is the set of workspace folders, changed by initialize and
// workspace/didChangeWorkspaceFolders. The first folder is the primary
// one: relative paths from the model resolve against it.
type Folders struct {
	mu   sync.RWMutex
	list []Folder
}

// NewFolder makes a Folder from a file URI.
func NewFolder(fileURI, name string) (Folder, error) {
	p, err := URIToPath(fileURI)
	if err != nil {
		return Folder{}, err
	}
	if name == "" {
		name = filepath.Base(p)
	}
	return Folder{URI: fileURI, Name: name, Path: p}, nil
}

// Add appends folders not already present.
func (f *Folders) Add(add ...Folder) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, a := range add {
		if !slices.ContainsFunc(f.list, func(x Folder) bool { return x.Path == a.Path }) {
			f.list = append(f.list, a)
		}
	}
}

// Remove drops the folders with these paths.
func (f *Folders) Remove(paths ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.list = slices.DeleteFunc(f.list, func(x Folder) bool { return slices.Contains(paths, x.Path) })
}

// List returns a copy of the folders, primary first.
func (f *Folders) List() []Folder {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return slices.Clone(f.list)
}

// Paths returns the folders' absolute paths, primary first.
func (f *Folders) Paths() []string {
	f.mu.RLock()
	defer f.mu.RUnlock()
	out := make([]string, len(f.list))
	for i, x := range f.list {
		out[i] = x.Path
	}
	return out
}

// BroadFolder says why path is too broad to be a workspace folder, or ""
// when it is fine: the root of the file system, or the user's home folder
// itself (home; "" skips that check), would open every file of the user,
// keys and all, to the tools. Symbolic links are evaluated first, so an
// alias of either is caught too.
func BroadFolder(path, home string) string {
	real := func(p string) string {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return filepath.Clean(p)
	}
	p := real(path)
	switch {
	case p == string(filepath.Separator) || p == filepath.VolumeName(p)+string(filepath.Separator):
		return "it is the root of the file system"
	case home != "" && p == real(home):
		return "it is the home folder itself"
	}
	return ""
}

// URIToPath converts a file:// URI to an absolute, cleaned path.
func URIToPath(fileURI string) (string, error) {
	u, err := uri.Parse(fileURI)
	if err != nil || len(fileURI) < 7 || fileURI[:7] != "file://" {
		return "", fmt.Errorf("not a file URI: %q", fileURI)
	}
	if pu, perr := url.Parse(fileURI); perr != nil || pu.Host != "" && pu.Host != "localhost" {
		return "", fmt.Errorf("file URI %q names a remote host", fileURI)
	}
	p := uri.FsPathFor(u, uri.PlatformPOSIX, true)
	if p == "" || !filepath.IsAbs(p) {
		return "", fmt.Errorf("file URI %q has no absolute path", fileURI)
	}
	return filepath.Clean(p), nil
}

// PathToURI converts an absolute path to a file:// URI.
func PathToURI(path string) string { return string(uri.File(path)) }
