package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"
)

// Limits on paths. They match Linux's PATH_MAX and NAME_MAX; a longer path
// could never be opened, so refusing it early gives a clearer message.
const (
	maxPathBytes = 4096
	maxNameBytes = 255
	// maxSymlinkHops bounds symlink resolution, like the kernel's ELOOP limit.
	maxSymlinkHops = 40
)

// PathErrorKind says why a path was refused, so callers can branch without
// parsing the message.
type PathErrorKind int

// The reasons a path can be refused.
const (
	PathEmpty         PathErrorKind = iota + 1 // nothing given
	PathNUL                                    // contains a NUL byte
	PathControl                                // contains another control character
	PathInvalidUTF8                            // not valid UTF-8
	PathTooLong                                // longer than PATH_MAX, or a name longer than NAME_MAX
	PathExpansion                              // "~", "~user" or "$VAR": shell expansion is never done
	PathWindows                                // drive letter, UNC prefix or backslash separator
	PathNotFile                                // a URI that does not name a local file
	PathDotDot                                 // ".." leads out of the workspace
	PathOutside                                // an absolute path outside every workspace folder
	PathSymlinkEscape                          // a symbolic link leads out of the workspace
	PathSymlinkLoop                            // too many symbolic links
	PathSystem                                 // under /proc, /sys or /dev
	PathNotDir                                 // a component before the last is not a folder
	PathInaccessible                           // a component could not be examined (permissions)
)

// PathError is a refused path. Its message is meant for the model: it
// names the path as given and says what to change.
type PathError struct {
	Path   string // the path as the model or client gave it
	Kind   PathErrorKind
	Reason string
}

// Error implements error.
func (e *PathError) Error() string {
	p := e.Path
	if len(p) > 200 {
		// An overlong path would drown the reason; its start is enough.
		p = p[:200] + "..."
	}
	return fmt.Sprintf("invalid path %q: %s", p, e.Reason)
}

// Roots is the set of workspace folders that paths must stay inside. The
// first folder is the primary one: relative paths resolve against it. A
// Roots is immutable, so it is safe for concurrent use; when the client
// changes its folders, build a new one. It holds an open handle on each
// folder, through which all disk access goes (rootio.go); the handles are
// closed when the Roots is garbage collected.
type Roots struct {
	folders []string   // real (symlink-free), cleaned, absolute; primary first
	handles []*os.Root // the folders opened, in the same order; see rootio.go
	own     *OwnPaths  // the daemon's own folders, never resolved to; set once by SetOwn
}

// SetOwn names the daemon's own folders (its state directory), which
// Resolve then refuses however a path reaches them. It is called once,
// before r is shared.
func (r *Roots) SetOwn(o *OwnPaths) { r.own = o }

// Own returns the daemon's own folders given to SetOwn (nil: none), for
// the walkers that list or search the workspace to leave out.
func (r *Roots) Own() *OwnPaths {
	if r == nil {
		return nil
	}
	return r.own
}

// NewRoots validates the workspace folders. Each must be an existing
// absolute directory; symlinks in them are evaluated so that containment
// checks compare real paths. Duplicates are dropped, order is kept.
func NewRoots(folders ...string) (*Roots, error) {
	if len(folders) == 0 {
		return nil, errors.New("workspace: no workspace folder")
	}
	r := &Roots{}
	seen := make(map[string]bool)
	for _, f := range folders {
		if !filepath.IsAbs(f) {
			return nil, fmt.Errorf("workspace: folder %q is not absolute", f)
		}
		real, err := filepath.EvalSymlinks(filepath.Clean(f))
		if err != nil {
			return nil, fmt.Errorf("workspace: folder %q: %w", f, err)
		}
		fi, err := os.Stat(real)
		if err != nil {
			return nil, fmt.Errorf("workspace: folder %q: %w", f, err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("workspace: folder %q is not a directory", f)
		}
		if !seen[real] {
			h, err := os.OpenRoot(real)
			if err != nil {
				return nil, fmt.Errorf("workspace: folder %q: %w", f, err)
			}
			seen[real] = true
			r.folders = append(r.folders, real)
			r.handles = append(r.handles, h)
		}
	}
	return r, nil
}

// Folders returns the workspace folders, primary first.
func (r *Roots) Folders() []string { return append([]string(nil), r.folders...) }

// Primary returns the folder that relative paths resolve against.
func (r *Roots) Primary() string { return r.folders[0] }

// Contains reports whether the absolute, cleaned path abs lies inside (or
// is) a workspace folder. It is a lexical check: use it on paths Resolve
// returned, not on untrusted input.
func (r *Roots) Contains(abs string) bool {
	return r.containing(abs) != ""
}

// containing returns the deepest folder holding abs, or "".
func (r *Roots) containing(abs string) string {
	best := ""
	for _, f := range r.folders {
		if pathWithin(f, abs) && len(f) > len(best) {
			best = f
		}
	}
	return best
}

// pathWithin reports whether p is dir or below it; both must be clean.
func pathWithin(dir, p string) bool {
	if p == dir {
		return true
	}
	if dir == string(filepath.Separator) {
		return strings.HasPrefix(p, dir)
	}
	return strings.HasPrefix(p, dir+string(filepath.Separator))
}

// Rel returns abs relative to the deepest workspace folder holding it,
// with forward slashes ("." for the folder itself), and whether abs is
// inside the workspace at all. Outside, abs is returned unchanged.
func (r *Roots) Rel(abs string) (string, bool) {
	abs = filepath.Clean(abs)
	f := r.containing(abs)
	if f == "" {
		return abs, false
	}
	rel, err := filepath.Rel(f, abs)
	if err != nil {
		return abs, false
	}
	return filepath.ToSlash(rel), true
}

// Display returns the form of abs to show the model: relative to the
// primary folder when inside it (which is how the model is told to write
// paths), otherwise absolute, which Resolve also accepts.
func (r *Roots) Display(abs string) string {
	abs = filepath.Clean(abs)
	if pathWithin(r.folders[0], abs) {
		if rel, err := filepath.Rel(r.folders[0], abs); err == nil {
			rel = filepath.ToSlash(rel)
			if pathHasScheme(rel) {
				// "notes:v2.txt" would read back as a URI.
				rel = "./" + rel
			}
			return rel
		}
	}
	return abs
}

// Resolve turns a model- or client-given path into an absolute path inside
// a workspace folder. p may be relative to the primary folder, absolute, or
// a file: URI (any other URI is refused, see pathScheme). The result is real: every symlink along the existing part
// of the path is evaluated, so opening it cannot be redirected elsewhere,
// and writing to it writes the link's target. A target that does not exist
// yet (a file to create, perhaps in new folders) is allowed; its deepest
// existing ancestor is resolved and checked. Refusals are *PathError.
func (r *Roots) Resolve(p string) (string, error) {
	return r.resolve(r.folders[0], p)
}

// ResolveIn is Resolve with relative paths taken against dir, an absolute
// folder (a session's working folder, say). Only a path that is relative
// once read (not a URI, not absolute) starts there, and the result must
// lie in a workspace folder all the same, so a dir outside the workspace
// leaves only paths into it usable.
func (r *Roots) ResolveIn(dir, p string) (string, error) {
	dir = filepath.Clean(dir)
	if !filepath.IsAbs(dir) {
		return "", fmt.Errorf("workspace: base folder %q is not absolute", dir)
	}
	return r.resolve(dir, p)
}

func (r *Roots) resolve(base, given string) (string, error) {
	fail := func(kind PathErrorKind, format string, args ...any) (string, error) {
		return "", &PathError{Path: given, Kind: kind, Reason: fmt.Sprintf(format, args...)}
	}
	if kind, reason := pathCheckSyntax(given); kind != 0 {
		return fail(kind, "%s", reason)
	}
	p := given
	if pathHasScheme(p) {
		local, kind, reason := pathFromURI(p)
		if kind != 0 {
			return fail(kind, "%s", reason)
		}
		// Percent-decoding can produce anything: check again.
		if kind, reason := pathCheckSyntax(local); kind != 0 {
			return fail(kind, "%s (after decoding the URI)", reason)
		}
		p = local
	}

	var abs string
	if filepath.IsAbs(p) {
		abs = filepath.Clean(p)
	} else {
		abs = filepath.Join(base, p)
		if pathHasDotDot(p) && !r.Contains(abs) {
			return fail(PathDotDot, "'..' leads out of the workspace; paths must stay inside %s", r.describe())
		}
	}
	if len(abs) > maxPathBytes {
		return fail(PathTooLong, "the path is longer than %d bytes", maxPathBytes)
	}
	if pathIsSystem(abs) {
		return fail(PathSystem, "system folders (/proc, /sys, /dev) are not accessible; paths must stay inside %s", r.describe())
	}
	lexicallyInside := r.Contains(abs)

	// Walk from the deepest folder that lexically holds abs (it is real
	// already); a path outside every folder is walked from "/" because a
	// symlinked alias of a folder (/home/u/proj -> /data/proj) is fine.
	start := r.containing(abs)
	if start == "" {
		start = string(filepath.Separator)
	}
	resolved, link, kind, reason := pathEvalSymlinks(start, abs, r.Contains)
	if kind != 0 {
		return fail(kind, "%s", reason)
	}
	if r.own.Holds(abs) || r.own.Holds(resolved) {
		return fail(PathOutside, "the path is in cline-ls's own state directory, which is not part of the workspace")
	}
	if r.Contains(resolved) {
		return resolved, nil
	}
	if lexicallyInside && link != "" {
		rel, _ := r.Rel(link)
		return fail(PathSymlinkEscape, "the symbolic link %q leads outside the workspace; only files inside %s are accessible", rel, r.describe())
	}
	return fail(PathOutside, "the path is outside the workspace; use a path inside %s, or a relative one", r.describe())
}

// describe names the workspace folders for error messages, marking the
// one that relative paths start from.
func (r *Roots) describe() string {
	if len(r.folders) == 1 {
		return "the workspace folder " + r.folders[0]
	}
	return "the workspace folders " + r.folders[0] + " (relative paths start here), " + strings.Join(r.folders[1:], ", ")
}

// pathCheckSyntax refuses malformed paths before any file system access.
func pathCheckSyntax(p string) (PathErrorKind, string) {
	switch {
	case p == "":
		return PathEmpty, "the path is empty; give a path relative to the workspace folder"
	case strings.IndexByte(p, 0) >= 0:
		return PathNUL, "the path contains a NUL byte"
	case !utf8.ValidString(p):
		return PathInvalidUTF8, "the path is not valid UTF-8"
	case len(p) > maxPathBytes:
		return PathTooLong, fmt.Sprintf("the path is longer than %d bytes", maxPathBytes)
	}
	for _, c := range p {
		if unicode.IsControl(c) {
			return PathControl, fmt.Sprintf("the path contains the control character %U", c)
		}
	}
	if p[0] == '~' {
		return PathExpansion, "'~' is not expanded; give a path inside the workspace instead"
	}
	if pathIsVarRef(p) {
		return PathExpansion, "environment variables are not expanded; give a path inside the workspace instead"
	}
	if strings.HasPrefix(p, `\\`) || strings.HasPrefix(p, "//") {
		return PathWindows, "UNC network paths are not supported; give a path inside the workspace"
	}
	if len(p) >= 2 && p[1] == ':' && pathIsASCIILetter(p[0]) {
		return PathWindows, "Windows drive paths are not valid here; use forward-slash paths inside the workspace"
	}
	if strings.IndexByte(p, '\\') >= 0 {
		return PathWindows, "backslashes are not path separators here; use '/'"
	}
	if !pathHasScheme(p) {
		for _, name := range strings.Split(p, "/") {
			if len(name) > maxNameBytes {
				return PathTooLong, fmt.Sprintf("a file name in the path is longer than %d bytes", maxNameBytes)
			}
		}
	}
	return 0, ""
}

func pathIsASCIILetter(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }

// pathIsVarRef reports "$NAME..." or "${...": a shell variable the model
// expected to be expanded. Names merely containing '$' elsewhere
// (Outer$Inner.class) are ordinary files.
func pathIsVarRef(p string) bool {
	if len(p) < 2 || p[0] != '$' {
		return false
	}
	c := p[1]
	return c == '{' || c == '_' || pathIsASCIILetter(c)
}

// pathScheme returns the URI scheme p starts with, as RFC 3986 spells
// one (a letter, then letters, digits, '+', '-' or '.', then ':'), or "".
// Such a path is a URI, never a folder or file named after the scheme:
// "untitled:Untitled-1" and "vscode-remote://..." are refused, not
// created. A scheme is two characters or more so that "C:/" stays a
// drive path, and one that follows a '/' ("notes/a:b.txt") is a name. A
// file whose own name starts so is written "./notes:v2.txt", as Display
// shows it.
func pathScheme(p string) string {
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case pathIsASCIILetter(c):
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		case c == ':' && i >= 2:
			return p[:i]
		default:
			return ""
		}
	}
	return ""
}

// pathHasScheme reports whether p is a URI (see pathScheme).
func pathHasScheme(p string) bool { return pathScheme(p) != "" }

// pathFromURI extracts the local path of a file URI: RFC 8089's forms
// (file:///p, file://localhost/p, file:/p), percent-decoded. Other
// schemes, other hosts and Windows drives are refused, each saying so.
func pathFromURI(raw string) (string, PathErrorKind, string) {
	if scheme := pathScheme(raw); !strings.EqualFold(scheme, "file") {
		return "", PathNotFile, fmt.Sprintf("a %s: URI does not name a local file; give a path inside the workspace (a file whose name starts with %q is written ./%s)",
			scheme, scheme+":", pathFirstName(raw))
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", PathNotFile, "the URI cannot be parsed: " + strings.TrimPrefix(err.Error(), "parse "+strconv.Quote(raw)+": ")
	}
	if pathIsDrive(u.Opaque) || pathIsDrive(u.Host) || pathIsDrive(strings.TrimPrefix(u.Path, "/")) {
		return "", PathWindows, "Windows drive paths are not valid here; give a path inside the workspace"
	}
	if u.Opaque != "" {
		return "", PathNotFile, "a file URI must be absolute (file:///path)"
	}
	if u.Host != "" && !strings.EqualFold(u.Host, "localhost") {
		return "", PathNotFile, fmt.Sprintf("file URIs on another host (%s) are not supported; give a path inside the workspace", u.Host)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return "", PathNotFile, "the URI has a query or fragment; give only the file's path"
	}
	if u.Path == "" {
		return "", PathEmpty, "the URI names no path"
	}
	return u.Path, 0, ""
}

// pathIsDrive reports a Windows drive at the start of s: "C:", "C|", "C:/x".
func pathIsDrive(s string) bool {
	return len(s) >= 2 && pathIsASCIILetter(s[0]) && (s[1] == ':' || s[1] == '|') && (len(s) == 2 || s[2] == '/' || s[2] == '\\')
}

// pathFirstName returns p up to its first '/'.
func pathFirstName(p string) string {
	if i := strings.IndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return p
}

// pathHasDotDot reports whether p has a ".." component.
func pathHasDotDot(p string) bool {
	for _, c := range strings.Split(p, "/") {
		if c == ".." {
			return true
		}
	}
	return false
}

// pathIsSystem reports paths in the kernel's pseudo file systems, where
// "files" alias other processes' memory, descriptors and root folders.
func pathIsSystem(abs string) bool {
	for _, d := range []string{"/proc", "/sys", "/dev"} {
		if pathWithin(d, abs) {
			return true
		}
	}
	return false
}

// pathEvalSymlinks resolves abs component by component, starting from
// start (a real folder that lexically holds abs, or "/"). Unlike
// filepath.EvalSymlinks it tolerates a missing tail, which is appended
// as is, and it follows dangling symlinks to where they point, so a
// file created through one is checked where it would land. It returns
// the last symlink traversed that lies inside the workspace (per inside),
// which is the one to blame when the result is outside.
func pathEvalSymlinks(start, abs string, inside func(string) bool) (resolved, lastLink string, kind PathErrorKind, reason string) {
	rel, err := filepath.Rel(start, abs)
	if err != nil {
		return "", "", PathOutside, "the path cannot be made relative to " + start
	}
	todo := strings.Split(filepath.ToSlash(rel), "/")
	cur := start
	hops := 0
	for len(todo) > 0 {
		name := todo[0]
		todo = todo[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, name)
		if pathIsSystem(next) {
			return "", lastLink, PathSystem, "the path leads into a system folder (/proc, /sys or /dev)"
		}
		fi, err := os.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				// Nothing below a missing name exists either; the tail is
				// lexical. Join cleans any ".." that a symlink target left.
				return filepath.Join(append([]string{next}, todo...)...), lastLink, 0, ""
			}
			if errors.Is(err, syscall.ENOTDIR) {
				return "", lastLink, PathNotDir, fmt.Sprintf("%q is not a folder", filepath.Base(cur))
			}
			return "", lastLink, PathInaccessible, fmt.Sprintf("cannot examine %q: %v", name, pathErrnoText(err))
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			hops++
			if hops > maxSymlinkHops {
				return "", lastLink, PathSymlinkLoop, "too many levels of symbolic links"
			}
			target, err := os.Readlink(next)
			if err != nil {
				return "", lastLink, PathInaccessible, fmt.Sprintf("cannot read the symbolic link %q: %v", name, pathErrnoText(err))
			}
			if inside(next) {
				lastLink = next
			}
			if filepath.IsAbs(target) {
				cur = string(filepath.Separator)
			}
			todo = append(strings.Split(filepath.ToSlash(target), "/"), todo...)
			continue
		}
		if !fi.IsDir() && pathHasMore(todo) {
			return "", lastLink, PathNotDir, fmt.Sprintf("%q is a file, not a folder", name)
		}
		cur = next
	}
	return cur, lastLink, 0, ""
}

// pathHasMore reports whether components remain that need a folder.
func pathHasMore(todo []string) bool {
	for _, c := range todo {
		if c != "" {
			return true // even "." and ".." need the name before them to be a folder
		}
	}
	return false
}

// pathErrnoText drops the path from an *fs.PathError: the message already
// names the component, and the full real path would only add noise.
func pathErrnoText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
