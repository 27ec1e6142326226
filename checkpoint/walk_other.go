//go:build !linux

package checkpoint

import "os"

// dirHandle is an open folder of the walk: an os.Root opened from its
// parent's, so that no open or stat can leave the workspace.
type dirHandle struct{ r *os.Root }

func openTop(r *os.Root) (dirHandle, error) {
	sub, err := r.OpenRoot(".")
	return dirHandle{r: sub}, err
}

func (d dirHandle) sub(name string) (dirHandle, error) {
	sub, err := d.r.OpenRoot(name)
	return dirHandle{r: sub}, err
}

func (d dirHandle) close() { d.r.Close() }

// list reads the folder's entries: folders and regular files, the
// latter with their stat; other kinds are left out.
func (d dirHandle) list() ([]listed, error) {
	f, err := d.r.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	var out []listed
	for _, e := range entries {
		switch t := e.Type(); {
		case t.IsDir():
			out = append(out, listed{name: e.Name(), dir: true})
		case t.IsRegular():
			// A listing of a folder opened in a Root holds each
			// entry's lstat already: Info makes no system call.
			if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
				out = append(out, listed{name: e.Name(), st: statOf(fi)})
			}
		}
	}
	return out, err
}

// open opens the file name of the folder for reading; the caller checks
// that it is a regular file.
func (d dirHandle) open(name string) (*os.File, error) { return d.r.Open(name) }
