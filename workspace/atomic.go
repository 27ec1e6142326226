package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"unicode/utf8"
)

// atomicHooks lets tests stop or fail a write at its most delicate point.
// Production code passes nil.
type atomicHooks struct {
	// beforeRename runs once the temporary file is written, synced and
	// closed; an error aborts the write.
	beforeRename func(tmp string) error
}

// WriteFileAtomic replaces the file at path with data so that no reader,
// and no crash, ever sees anything but the old or the new content: the
// data goes to a temporary file in the same folder, which is synced and
// then renamed over the target, and the folder is synced so the rename
// itself survives a power loss.
//
// An existing file keeps its permission bits (including setuid, setgid
// and sticky); a new one gets perm, less the umask. Ownership is the
// writer's, and hard links to the old file keep the old content: the
// rename gives path a new inode.
//
// If path is a symlink, the file it points to is replaced and the link
// stays; this follows the link wherever it leads, so callers must pass a
// path that Roots.Resolve has already confined (Resolve returns the
// link's target anyway). The parent folder must exist: see MkdirParents.
// On any failure the temporary file is removed and the target is as it was.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	return atomicWrite(path, data, perm, nil)
}

// MkdirParents creates the missing folders above path, as a write to a new
// file in a new folder needs. Kept apart from WriteFileAtomic so that
// creating folders is always the caller's explicit choice.
func MkdirParents(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("workspace: create folders for %s: %w", path, err)
	}
	return nil
}

func atomicWrite(path string, data []byte, perm os.FileMode, hooks *atomicHooks) (err error) {
	target, err := atomicTarget(path)
	if err != nil {
		return err
	}
	mode := perm.Perm()
	keepMode := false
	if fi, err := os.Stat(target); err == nil {
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("workspace: write %s: not a regular file", path)
		}
		mode = fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
		keepMode = true
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("workspace: write %s: %w", path, err)
	}

	dir := filepath.Dir(target)
	f, tmp, err := atomicCreateTemp(dir, filepath.Base(target), mode.Perm())
	if err != nil {
		return fmt.Errorf("workspace: write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close() // harmless if already closed
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("workspace: write %s: %w", path, err)
	}
	// Chmod sets the mode exactly: the umask applied at creation would
	// strip bits the existing file had. It comes after the write because
	// the kernel clears setuid and setgid when an unprivileged process
	// writes to a file.
	if keepMode {
		if err := f.Chmod(mode); err != nil {
			return fmt.Errorf("workspace: write %s: keep mode: %w", path, err)
		}
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("workspace: write %s: sync: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("workspace: write %s: %w", path, err)
	}
	if hooks != nil && hooks.beforeRename != nil {
		if err := hooks.beforeRename(tmp); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp, target); err != nil {
		return fmt.Errorf("workspace: write %s: %w", path, err)
	}
	// From here the new content is in place; only its durability is at stake.
	if err := atomicSyncDir(dir); err != nil {
		return fmt.Errorf("workspace: wrote %s but could not sync its folder: %w", path, err)
	}
	return nil
}

// atomicTarget follows symlinks at path (also dangling ones, which name
// the file to create) to the file that the write should replace.
func atomicTarget(path string) (string, error) {
	p := filepath.Clean(path)
	for range maxSymlinkHops {
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			// Not a symlink, or missing: this is the file to write.
			return p, nil
		}
		link, err := os.Readlink(p)
		if err != nil {
			return "", fmt.Errorf("workspace: write %s: %w", path, err)
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(p), link)
		}
		p = filepath.Clean(link)
	}
	return "", fmt.Errorf("workspace: write %s: too many levels of symbolic links", path)
}

// atomicCreateTemp creates a new, empty temporary file next to the
// target. The name starts with a dot and ends in .tmp so that a file left
// by a crash is hidden from listings and easy to recognise.
func atomicCreateTemp(dir, base string, perm os.FileMode) (*os.File, string, error) {
	// A long name is shortened so that the decorated one still fits in
	// NAME_MAX.
	if len(base) > 100 {
		cut := 100
		for cut > 0 && !utf8.RuneStart(base[cut]) {
			cut--
		}
		base = base[:cut]
	}
	for range 100 {
		name := filepath.Join(dir, "."+base+"."+strconv.FormatUint(rand.Uint64(), 36)+".tmp")
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if err == nil {
			return f, name, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, "", err
		}
	}
	return nil, "", errors.New("cannot find an unused temporary file name")
}

// atomicSyncDir makes a rename in dir durable. File systems that cannot
// sync a folder say EINVAL; there is nothing more to do on them.
func atomicSyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	return nil
}
