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
// and sticky), its owner and group and its user.* extended attributes; a
// read-only one is refused (*ReadOnlyFileError). A new file gets perm,
// less the umask. Hard links to the old file keep the old content: the
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

func atomicWrite(path string, data []byte, perm os.FileMode, hooks *atomicHooks) error {
	target, err := atomicTarget(path)
	if err != nil {
		return err
	}
	d, err := os.OpenRoot(filepath.Dir(target))
	if err != nil {
		return fmt.Errorf("workspace: write %s: %w", path, err)
	}
	defer d.Close()
	return atomicWriteIn(d, path, filepath.Base(target), data, perm, hooks)
}

// atomicWriteIn is the one atomic write: it replaces name in the folder d
// (a handle, so every step below happens in that one folder whatever is
// renamed meanwhile). path is only for messages.
//
// What the user had is kept or the write is refused, never silently
// changed: the permission bits, the owner and group (the temporary file is
// given them before the rename; if this process may not, the write is
// refused), and the user.* extended attributes. A file nobody may write
// (mode 0444, or one this process has no write permission on although
// the folder is writable) is refused with the reason, since replacing it
// through the folder would defeat the protection.
func atomicWriteIn[D []byte | string](d *os.Root, path, name string, data D, perm os.FileMode, hooks *atomicHooks) (err error) {
	// The folder itself: for the permission check and the final sync.
	dirf, err := d.Open(".")
	if err != nil {
		return fmt.Errorf("workspace: write %s: %w", path, err)
	}
	defer dirf.Close()

	mode := perm.Perm()
	var keep *atomicKeep
	if fi, err := d.Lstat(name); err == nil {
		if !fi.Mode().IsRegular() {
			return &NotRegularFileError{Path: path, Mode: fi.Mode()}
		}
		mode = fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
		keep, err = atomicExamine(d, dirf, path, name, fi)
		if err != nil {
			return err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("workspace: write %s: %w", path, err)
	}

	f, tmp, err := atomicCreateTemp(d, name, mode.Perm())
	if err != nil {
		return fmt.Errorf("workspace: write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close() // harmless if already closed
			d.Remove(tmp)
		}
	}()
	// A string is written as it is: converting a large text to []byte
	// would copy it first.
	switch data := any(data).(type) {
	case string:
		_, err = f.WriteString(data)
	case []byte:
		_, err = f.Write(data)
	}
	if err != nil {
		return fmt.Errorf("workspace: write %s: %w", path, err)
	}
	if keep != nil {
		// Owner first: chown clears setuid and setgid, which the chmod
		// below then restores. Chmod sets the mode exactly (the umask
		// applied at creation would strip bits the file had) and comes
		// after the write because the kernel clears setuid and setgid
		// when an unprivileged process writes to a file.
		if err := keep.apply(f); err != nil {
			return fmt.Errorf("workspace: write %s: %w", path, err)
		}
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
		if err := hooks.beforeRename(filepath.Join(d.Name(), tmp)); err != nil {
			return err
		}
	}
	if err := d.Rename(tmp, name); err != nil {
		return fmt.Errorf("workspace: write %s: %w", path, err)
	}
	// From here the new content is in place; only its durability is at stake.
	if err := dirf.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
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

// atomicTempMarker is in the name of every temporary file, so that one
// left by a crash is recognised as ours (CleanStaleTemps) and no user file
// is ever taken for one.
const atomicTempMarker = ".cline-ls-"

// atomicCreateTemp creates a new, empty temporary file next to the target
// and returns it with its name in d. The name starts with a dot and ends
// in .tmp so that a file left by a crash is hidden from listings:
// ".<name>.cline-ls-<random base 36>.tmp".
func atomicCreateTemp(d *os.Root, base string, perm os.FileMode) (*os.File, string, error) {
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
		name := "." + base + atomicTempMarker + strconv.FormatUint(rand.Uint64(), 36) + ".tmp"
		f, err := d.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if err == nil {
			return f, name, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, "", err
		}
	}
	return nil, "", errors.New("cannot find an unused temporary file name")
}

// ReadOnlyFileError is a write refused because the file is protected
// against it: writing it through its folder (which the atomic rename
// would do) would defeat that protection.
type ReadOnlyFileError struct {
	Path   string
	Reason string
}

// Error implements error.
func (e *ReadOnlyFileError) Error() string {
	return fmt.Sprintf("%s is a read-only file; %s", e.Path, e.Reason)
}
