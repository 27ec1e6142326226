// Package dirfs gives the patch engine (tools/edit) a folder on disk as
// its edit.FS and edit.Writer, for the edits benchmark and its applypatch
// helper.
//
// Writes are plain: a changed file is truncated and rewritten in place,
// with no temporary file and no fsync, which is what git apply does too.
// The daemon's own writes (workspace.WriteFileAtomic) are durable and
// cost more; the benchmark times that path separately through the
// apply_patch tool.
package dirfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Dir is a folder holding the files a patch names. Patch paths are
// slash-separated and relative to it; a path leading outside it is
// refused.
type Dir string

// local maps a patch path to a path on disk.
func (d Dir) local(op, p string) (string, error) {
	fp := filepath.FromSlash(p)
	if !filepath.IsLocal(fp) {
		return "", &fs.PathError{Op: op, Path: p, Err: errors.New("path leads outside the folder")}
	}
	return filepath.Join(string(d), fp), nil
}

// ReadFile returns the text of the file at p. A missing file gives an
// error satisfying errors.Is(err, fs.ErrNotExist), as edit.FS requires.
func (d Dir) ReadFile(p string) (string, error) {
	full, err := d.local("read", p)
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile(full)
	if err != nil {
		return "", err
	}
	return string(data), nil
}

// WriteFile creates or replaces the file at p with text, creating its
// parent folders. An existing file keeps its mode.
func (d Dir) WriteFile(p, text string) error {
	full, err := d.local("write", p)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(full, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if errors.Is(err, fs.ErrNotExist) {
		// A new folder: create it, then try again. Looking first would
		// cost every write a stat.
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		f, err = os.OpenFile(full, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	}
	if err != nil {
		return err
	}
	// WriteString hands the string's bytes to write(2) without a copy.
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Remove deletes the file at p.
func (d Dir) Remove(p string) error {
	full, err := d.local("remove", p)
	if err != nil {
		return err
	}
	return os.Remove(full)
}
