package workspace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Workspace disk access goes through the folders' *os.Root handles, which
// a Roots opens once. Resolve checks a path when a tool call is built; the
// file is used later, perhaps after an approval the user took minutes to
// give, and by then any component may have been swapped for a symbolic
// link out of the workspace. Each method below maps the absolute path to
// (folder handle, path relative to it) at the moment of use, and os.Root
// resolves every component with openat and refuses to leave the folder,
// so no swap, however timed, reaches a file outside.

// locate maps abs to the handle of the deepest workspace folder holding it
// and the path relative to that folder.
func (r *Roots) locate(abs string) (*os.Root, string, error) {
	abs = filepath.Clean(abs)
	best := -1
	for i, f := range r.folders {
		if pathWithin(f, abs) && (best < 0 || len(f) > len(r.folders[best])) {
			best = i
		}
	}
	if best < 0 {
		return nil, "", &PathError{Path: abs, Kind: PathOutside,
			Reason: "the path is outside the workspace; use a path inside " + r.describe()}
	}
	rel, err := filepath.Rel(r.folders[best], abs)
	if err != nil {
		return nil, "", &PathError{Path: abs, Kind: PathOutside, Reason: err.Error()}
	}
	return r.handles[best], rel, nil
}

// rootErr turns os.Root's refusal to leave the folder into a *PathError
// the model can read; other errors pass unchanged.
func rootErr(abs string, err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	if errors.As(err, &pe) && pe.Err != nil && pe.Err.Error() == "path escapes from parent" ||
		errors.As(err, &le) && le.Err != nil && le.Err.Error() == "path escapes from parent" {
		return &PathError{Path: abs, Kind: PathSymlinkEscape,
			Reason: "a symbolic link on the way leads outside the workspace (or is absolute); only files inside the workspace folders are accessible"}
	}
	return err
}

// Open opens the regular file at abs for reading, confined to its
// workspace folder, and returns it with its type and size as read from
// the opened descriptor. The open does not block on a FIFO; anything but
// a regular file is a *NotRegularFileError.
func (r *Roots) Open(abs string) (*os.File, fs.FileInfo, error) {
	root, rel, err := r.locate(abs)
	if err != nil {
		return nil, nil, err
	}
	f, err := root.OpenFile(rel, os.O_RDONLY|readOpenFlags, 0)
	if err != nil {
		// A socket cannot be opened at all (ENXIO); say what it is.
		if fi, lerr := root.Lstat(rel); lerr == nil && fi.Mode()&fs.ModeSocket != 0 {
			return nil, nil, &NotRegularFileError{Path: abs, Mode: fi.Mode()}
		}
		return nil, nil, rootErr(abs, err)
	}
	return regularOpened(f, abs)
}

// ReadFile reads the whole regular file at abs, confined to its folder,
// refusing one over limit bytes (*FileTooLargeError). The limit counts the
// bytes actually read, so a file that grows while it is read, or lies
// about its size, cannot make it read more than limit+1.
func (r *Roots) ReadFile(abs string, limit int64) ([]byte, fs.FileInfo, error) {
	f, fi, err := r.Open(abs)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	data, err := readCapped(f, abs, fi, limit)
	return data, fi, err
}

// ReadTextFile is the package's ReadTextFile confined to the workspace
// folders.
func (r *Roots) ReadTextFile(abs string, opts ReadOptions) ([]byte, error) {
	f, fi, err := r.Open(abs)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readText(f, abs, fi, opts)
}

// readCapped reads f whole, up to limit bytes.
func readCapped(f *os.File, path string, fi fs.FileInfo, limit int64) ([]byte, error) {
	if fi.Size() > limit {
		return nil, &FileTooLargeError{Path: path, Size: fi.Size(), Limit: limit}
	}
	// Sized from the stat, so a large file is read into one buffer rather
	// than one that doubles (and is copied) as it fills.
	buf := bytes.NewBuffer(make([]byte, 0, min(fi.Size(), limit)+bytes.MinRead))
	_, err := buf.ReadFrom(io.LimitReader(f, limit+1))
	data := buf.Bytes()
	if err != nil {
		return nil, fmt.Errorf("workspace: read %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, &FileTooLargeError{Path: path, Size: int64(len(data)), Limit: limit}
	}
	return data, nil
}

// Stat is os.Stat confined to the workspace folders.
func (r *Roots) Stat(abs string) (fs.FileInfo, error) {
	root, rel, err := r.locate(abs)
	if err != nil {
		return nil, err
	}
	fi, err := root.Stat(rel)
	return fi, rootErr(abs, err)
}

// Lstat is os.Lstat confined to the workspace folders (the components
// before the last are followed, inside the folder only).
func (r *Roots) Lstat(abs string) (fs.FileInfo, error) {
	root, rel, err := r.locate(abs)
	if err != nil {
		return nil, err
	}
	fi, err := root.Lstat(rel)
	return fi, rootErr(abs, err)
}

// ReadDir is os.ReadDir confined to the workspace folders.
func (r *Roots) ReadDir(abs string) ([]fs.DirEntry, error) {
	root, rel, err := r.locate(abs)
	if err != nil {
		return nil, err
	}
	d, err := root.Open(rel)
	if err != nil {
		return nil, rootErr(abs, err)
	}
	defer d.Close()
	entries, err := d.ReadDir(-1)
	// Like os.ReadDir: sorted by name, and what was read even on error.
	sortDirEntries(entries)
	return entries, err
}

// Folder returns the handle on the workspace folder holding abs and abs
// relative to it, for walks that open many files under one folder (a
// search). Everything opened through the handle stays inside the folder.
func (r *Roots) Folder(abs string) (*os.Root, string, error) {
	return r.locate(abs)
}

// MkdirParents creates the missing folders above abs, inside its
// workspace folder.
func (r *Roots) MkdirParents(abs string) error {
	root, rel, err := r.locate(abs)
	if err != nil {
		return err
	}
	if dir := filepath.Dir(rel); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return rootErr(abs, err)
		}
	}
	return nil
}

// Remove deletes the file at abs inside its workspace folder (a symbolic
// link there is removed, not followed).
func (r *Roots) Remove(abs string) error {
	root, rel, err := r.locate(abs)
	if err != nil {
		return err
	}
	return rootErr(abs, root.Remove(rel))
}

// Rename moves from to to; both must lie in the same workspace folder.
func (r *Roots) Rename(from, to string) error {
	root, relFrom, err := r.locate(from)
	if err != nil {
		return err
	}
	root2, relTo, err := r.locate(to)
	if err != nil {
		return err
	}
	if root != root2 {
		return fmt.Errorf("workspace: cannot move %s to another workspace folder", from)
	}
	return rootErr(from, root.Rename(relFrom, relTo))
}

// WriteFile replaces the file at abs atomically, as WriteFileAtomic does,
// with every step confined to its workspace folder: the parent folder is
// opened through the folder's handle and pinned, so the temporary file,
// the rename and the sync all happen in that one folder even if a path
// component is swapped meanwhile. An existing file that is a symbolic
// link at that moment is refused: Resolve gave a link-free path, so a
// link there was put in after the check. The parent folder must exist.
func (r *Roots) WriteFile(abs string, data []byte, perm fs.FileMode) error {
	return writeIn(r, abs, data, perm)
}

// WriteFileString is WriteFile of a text, written without a copy into a
// []byte first.
func (r *Roots) WriteFileString(abs, data string, perm fs.FileMode) error {
	return writeIn(r, abs, data, perm)
}

func writeIn[D []byte | string](r *Roots, abs string, data D, perm fs.FileMode) error {
	root, rel, err := r.locate(abs)
	if err != nil {
		return err
	}
	dir, name := filepath.Split(rel)
	d := root
	if dir != "" {
		d, err = root.OpenRoot(strings.TrimSuffix(dir, string(filepath.Separator)))
		if err != nil {
			return fmt.Errorf("workspace: write %s: %w", abs, rootErr(abs, err))
		}
		defer d.Close()
	}
	return atomicWriteIn(d, abs, name, data, perm, nil)
}

func sortDirEntries(entries []fs.DirEntry) {
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
}
