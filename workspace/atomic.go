package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"
)

// atomicHooks lets tests stop or fail a write at its most delicate point.
// Production code passes nil.
type atomicHooks struct {
	// beforeWrite runs once the temporary file is created, before the
	// data goes in; tmp is its name, "" for an anonymous file.
	beforeWrite func(tmp string)
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

	f, tmp, err := atomicCreateTemp(d, dirf, name, mode.Perm())
	if err != nil {
		return fmt.Errorf("workspace: write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close() // harmless if already closed
			if tmp != "" {
				d.Remove(tmp)
			}
		}
	}()
	if hooks != nil && hooks.beforeWrite != nil {
		hooks.beforeWrite(tmp)
	}
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
	if tmp == "" {
		// Complete and synced: only now does it get a name, for the
		// rename that replaces the target (a link cannot replace).
		if tmp, err = atomicNameTemp(dirf, f, name); err != nil {
			return fmt.Errorf("workspace: write %s: %w", path, err)
		}
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

// atomicTempName matches the temporary files of atomicCreateTemp, with
// the writer's process id (older versions wrote none). It is compiled on
// first use, not at start-up.
var atomicTempName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\..*\.cline-ls-(?:([0-9]{1,10})-)?[0-9a-z]{1,13}\.tmp$`)
})

// IsAtomicTemp reports whether a file name (not a path) is one of our
// atomic writes' temporary files: never the user's, never to be listed,
// searched, indexed or checkpointed, and removed once its writer is gone
// (CleanStaleTemps). The ignore rules hide them (IgnoreMatcher.Ignored).
func IsAtomicTemp(name string) bool {
	return strings.HasSuffix(name, ".tmp") && strings.Contains(name, atomicTempMarker) && atomicTempName().MatchString(name)
}

// atomicTempPID returns the process id in a temporary file's name, or 0
// for a name without one.
func atomicTempPID(name string) int {
	m := atomicTempName().FindStringSubmatch(name)
	if m == nil || m[1] == "" {
		return 0
	}
	pid, _ := strconv.Atoi(m[1])
	return pid
}

// atomicTempFor returns a fresh temporary name for the file base:
// ".<base>.cline-ls-<pid>-<random base 36>.tmp", starting with a dot and
// ending in .tmp so that a file left by a crash is hidden from most
// listings, and naming the writer so that the next daemon knows whether
// the write may still be going on.
func atomicTempFor(base string) string {
	// A long name is shortened so that the decorated one still fits in
	// NAME_MAX.
	if len(base) > 100 {
		cut := 100
		for cut > 0 && !utf8.RuneStart(base[cut]) {
			cut--
		}
		base = base[:cut]
	}
	return "." + base + atomicTempMarker + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(rand.Uint64(), 36) + ".tmp"
}

// atomicCreateTemp creates a new, empty temporary file next to the target
// and returns it with its name in d. Where the system can (Linux, a file
// system with O_TMPFILE), the file has no name until it is complete
// (atomicNameTemp gives it one just before the rename), so a process
// killed while writing leaves nothing; name is "" then.
func atomicCreateTemp(d *os.Root, dirf *os.File, base string, perm os.FileMode) (f *os.File, name string, err error) {
	if f := atomicOpenAnonymous(dirf, perm); f != nil {
		return f, "", nil
	}
	for range 100 {
		name := atomicTempFor(base)
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

// CleanStaleTemps removes the temporary files that an atomic write left
// behind when its process died between creating and renaming them:
// regular files whose name follows our own temporary pattern exactly,
// last written before the given time (the daemon's start), and whose
// writer, named in the file name, is no longer running; a file of a
// write still in progress in this or another live daemon is never
// touched. Folders named .git and those skip says so are not entered,
// nor any past MaxWalkDepth or once MaxWalkEntries were seen. It returns
// the removed files' absolute paths; an end of ctx stops the walk.
func (r *Roots) CleanStaleTemps(ctx context.Context, before time.Time, skip func(abs string) bool) []string {
	var removed []string
	seen := 0
	for i, root := range r.handles {
		folder := r.folders[i]
		h := NewDirHandles(root)
		type queued struct {
			rel   string
			depth int
		}
		queue := []queued{{".", 0}}
		for len(queue) > 0 && seen < MaxWalkEntries && ctx.Err() == nil {
			dir := queue[len(queue)-1]
			queue = queue[:len(queue)-1]
			entries, _ := h.ReadDir(dir.rel)
			seen += len(entries)
			for _, e := range entries {
				rel := filepath.Join(dir.rel, e.Name())
				abs := filepath.Join(folder, rel)
				if e.IsDir() {
					if e.Name() != ".git" && dir.depth+1 < MaxWalkDepth && (skip == nil || !skip(abs)) {
						queue = append(queue, queued{rel, dir.depth + 1})
					}
					continue
				}
				if !e.Type().IsRegular() || !IsAtomicTemp(e.Name()) {
					continue
				}
				if pid := atomicTempPID(e.Name()); pid != 0 && (pid == os.Getpid() || processAlive(pid)) {
					continue
				}
				fi, err := e.Info()
				if err != nil || !fi.ModTime().Before(before) {
					continue
				}
				if root.Remove(rel) == nil {
					removed = append(removed, abs)
				}
			}
		}
		h.Close()
	}
	return removed
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
