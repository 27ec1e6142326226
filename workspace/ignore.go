package workspace

import (
	"bytes"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Names of the files that hold ignore rules. .clineignore uses the
// .gitignore syntax and hides files from the agent on top of .gitignore.
const (
	GitignoreFile   = ".gitignore"
	ClineignoreFile = ".clineignore"
)

// ignoreMaxFileBytes caps how much of one ignore file is read; a larger
// one is not a list of patterns anyone wrote by hand.
const ignoreMaxFileBytes = 1 << 20

// IsIgnoreFile reports whether a file name (not a path) holds ignore
// rules, so that a watcher knows when to call Invalidate.
func IsIgnoreFile(name string) bool {
	return name == GitignoreFile || name == ClineignoreFile
}

// IgnoreMatcher decides which paths of the workspace folders are hidden:
// those matched by .gitignore files (per folder level, with git's
// precedence: deeper files and later lines win), by .git/info/exclude,
// by .clineignore files (same syntax, nested too), and everything named
// .git, and the temporary files of our atomic writes (IsAtomicTemp). The
// two families are separate layers: a path is ignored if either
// ignores it, so a .gitignore negation cannot reveal what .clineignore
// hides. As in git, nothing inside an ignored folder can be re-included.
//
// Rules are read lazily per folder and cached; call Invalidate when an
// ignore file changes. An IgnoreMatcher is safe for concurrent use.
//
// Matching is our own rather than go-git's gitignore.Matcher, whose
// patterns also match every path below a matching one: combined with a
// negation ("*.txt" then "!keep") that re-includes "keep/a.txt", which
// git ignores.
type IgnoreMatcher struct {
	roots []string
	extra []ignoreRule // global patterns, lowest priority, relative to each root

	mu    sync.Mutex
	cache map[string]*ignoreDirRules // folder → its rules
	// stacks holds, per folder, what its ancestors decide about it, so
	// that deciding a path costs one lookup of its folder and the rules
	// that apply, not a pass over every level above it for every entry
	// a walk meets (which made a walk of a deep tree cubic).
	stacks map[string]*ignoreStack
	epoch  uint64 // bumped by Invalidate; stale loads are not cached
}

// ignoreStack is what applies inside one folder: whether the folder
// itself is ignored by each layer (by a rule above it; for git, by being
// .git too), and the folders from the root down to it that have rules of
// their own.
type ignoreStack struct {
	git, cline bool
	levels     []ignoreLevel
}

// ignoreLevel is a folder with rules; the names below it start at
// offset start of any path inside it.
type ignoreLevel struct {
	start int
	rules *ignoreDirRules
}

// ignoreDirRules are the rules that one folder's files contribute.
type ignoreDirRules struct {
	git   []ignoreRule // .git/info/exclude (roots only), then .gitignore
	cline []ignoreRule // .clineignore
}

// NewIgnoreMatcher returns a matcher for the given workspace folders
// (absolute and clean). extra holds gitignore-syntax patterns that apply
// below every folder with the lowest priority, like git's
// core.excludesFile; "node_modules/" is a typical one.
func NewIgnoreMatcher(folders []string, extra ...string) *IgnoreMatcher {
	m := &IgnoreMatcher{
		roots:  append([]string(nil), folders...),
		cache:  make(map[string]*ignoreDirRules),
		stacks: make(map[string]*ignoreStack),
	}
	for _, line := range extra {
		if r, ok := parseIgnoreLine(line); ok {
			m.extra = append(m.extra, r)
		}
	}
	return m
}

// Ignored reports whether the absolute path abs is hidden. isDir says
// whether abs is a folder (patterns ending in "/" match only folders).
// Paths outside every workspace folder, and the folders themselves, are
// never ignored.
func (m *IgnoreMatcher) Ignored(abs string, isDir bool) bool {
	st, rel, ok := m.place(abs)
	if !ok {
		return false
	}
	// The folders above decided first is git's rule that a file inside
	// an excluded folder stays excluded whatever later lines say.
	// Our own temporary files are never the user's: hidden like .git.
	base := ignoreBase(rel)
	return st.git || st.cline || base == ".git" || !isDir && IsAtomicTemp(base) ||
		ignoreDecide(st.levels, rel, isDir, false) || ignoreDecide(st.levels, rel, isDir, true)
}

// ClineIgnored reports whether .clineignore rules alone hide abs (or a
// folder above it). Unlike .gitignore, which only keeps files out of
// listings and searches, .clineignore says the agent must not touch the
// file at all, even when the model names it.
func (m *IgnoreMatcher) ClineIgnored(abs string, isDir bool) bool {
	st, rel, ok := m.place(abs)
	return ok && (st.cline || ignoreDecide(st.levels, rel, isDir, true))
}

// place returns the stack of abs's folder and abs with forward slashes,
// or false for a path the rules do not apply to. A path costs one lookup
// of its folder and the rules that apply, not a pass over every level
// above it: with that, a walk of a deep tree was cubic in its depth.
func (m *IgnoreMatcher) place(abs string) (*ignoreStack, string, bool) {
	abs = filepath.ToSlash(filepath.Clean(abs))
	root := m.rootOf(filepath.FromSlash(abs))
	if root == "" || filepath.FromSlash(abs) == root {
		return nil, "", false
	}
	root = filepath.ToSlash(root)
	return m.stackOf(root, abs, ignoreParent(abs)), abs, true
}

// ignoreRootLen is where the names below root start in a path inside it.
func ignoreRootLen(root string) int {
	if strings.HasSuffix(root, "/") {
		return len(root)
	}
	return len(root) + 1
}

// ignoreParent is where the last name of p starts, less its separator:
// p[:ignoreParent(p)] is p's folder.
func ignoreParent(p string) int {
	i := strings.LastIndexByte(p, '/')
	if i == 0 {
		return 1 // the root "/"
	}
	return i
}

// ignoreBase is the last name of p.
func ignoreBase(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }

// stackOf returns the stack of the folder abs[:end], inside root. Folders
// are looked up from that one upwards until one is known, and the
// missing ones computed downwards from it: a walk, which asks about a
// folder's entries right after the folder, finds it at once.
func (m *IgnoreMatcher) stackOf(root, abs string, end int) *ignoreStack {
	var missing []int // ends of folders without a stack, deepest first
	m.mu.Lock()
	epoch := m.epoch
	var known *ignoreStack
	for {
		if st, ok := m.stacks[abs[:end]]; ok {
			known = st
			break
		}
		missing = append(missing, end)
		if end <= len(root) {
			break
		}
		end = ignoreParent(abs[:end])
	}
	m.mu.Unlock()
	for i := len(missing) - 1; i >= 0; i-- {
		end := missing[i]
		dir := abs[:end]
		st := &ignoreStack{}
		if known != nil { // dir is not the root: decide it by the rules above
			st.git = known.git || ignoreBase(dir) == ".git" ||
				ignoreDecide(known.levels, dir, true, false)
			st.cline = known.cline || ignoreDecide(known.levels, dir, true, true)
			st.levels = slices.Clip(known.levels) // appending below copies
		}
		if r := m.rulesOf(filepath.FromSlash(dir), end <= len(root)); len(r.git) > 0 || len(r.cline) > 0 {
			st.levels = append(st.levels, ignoreLevel{start: ignoreRootLen(dir), rules: r})
		}
		m.mu.Lock()
		if m.epoch == epoch {
			m.stacks[dir] = st
		}
		m.mu.Unlock()
		known = st
	}
	return known
}

// ignoreDecide applies one layer (git or cline) of the levels to the
// path p (with forward slashes), from the deepest folder's rules up and
// from each file's last line back; the first rule that matches decides.
func ignoreDecide(levels []ignoreLevel, p string, isDir, cline bool) bool {
	for d := len(levels) - 1; d >= 0; d-- {
		rules := levels[d].rules.git
		if cline {
			rules = levels[d].rules.cline
		}
		rel := p[levels[d].start:]
		for j := len(rules) - 1; j >= 0; j-- {
			if rules[j].match(rel, isDir) {
				return !rules[j].negate
			}
		}
	}
	return false
}

// Invalidate drops the cached rules of folder dir (absolute), so the next
// Ignored call rereads its ignore files. Call it with the folder of a
// .gitignore or .clineignore that was created, changed or removed.
func (m *IgnoreMatcher) Invalidate(dir string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.cache, filepath.Clean(dir))
	clear(m.stacks) // the folders below dir inherited its rules
	m.epoch++
}

// Reload drops every cached rule, for changes Invalidate cannot name
// (.git/info/exclude, say).
func (m *IgnoreMatcher) Reload() {
	m.mu.Lock()
	defer m.mu.Unlock()
	clear(m.cache)
	clear(m.stacks)
	m.epoch++
}

// rootOf returns the outermost workspace folder holding abs: rules of an
// enclosing folder apply inside a nested one, as they would in git.
func (m *IgnoreMatcher) rootOf(abs string) string {
	best := ""
	for _, r := range m.roots {
		if pathWithin(r, abs) && (best == "" || len(r) < len(best)) {
			best = r
		}
	}
	return best
}

// rulesOf returns the rules of folder dir, reading them on first use.
func (m *IgnoreMatcher) rulesOf(dir string, isRoot bool) *ignoreDirRules {
	m.mu.Lock()
	rules, ok := m.cache[dir]
	epoch := m.epoch
	m.mu.Unlock()
	if ok {
		return rules
	}

	rules = &ignoreDirRules{}
	if isRoot {
		rules.git = append(rules.git, m.extra...)
		rules.git = append(rules.git, ignoreReadFile(filepath.Join(dir, ".git", "info", "exclude"))...)
	}
	rules.git = append(rules.git, ignoreReadFile(filepath.Join(dir, GitignoreFile))...)
	rules.cline = ignoreReadFile(filepath.Join(dir, ClineignoreFile))

	m.mu.Lock()
	// An Invalidate while we read may mean we read the old file: use
	// the rules for this call but do not keep them.
	if m.epoch == epoch {
		m.cache[dir] = rules
	}
	m.mu.Unlock()
	return rules
}

// ignoreReadFile parses one ignore file; a missing or unreadable file, or
// a symlink (which git does not follow for .gitignore either), has no rules.
func ignoreReadFile(name string) []ignoreRule {
	fi, err := os.Lstat(name)
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	// Non-blocking and checked again on the descriptor: a FIFO swapped in
	// after the Lstat must not hang the rules' loading.
	f, err := os.OpenFile(name, os.O_RDONLY|readOpenFlags, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	data, _ := io.ReadAll(io.LimitReader(f, ignoreMaxFileBytes))
	return parseIgnoreRules(data)
}

// parseIgnoreRules parses the lines of an ignore file.
func parseIgnoreRules(data []byte) []ignoreRule {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var rules []ignoreRule
	for line := range strings.SplitSeq(string(data), "\n") {
		if r, ok := parseIgnoreLine(line); ok {
			rules = append(rules, r)
		}
	}
	return rules
}

// ignoreRule is one gitignore pattern.
type ignoreRule struct {
	segs     []string // the pattern split at "/"; "**" is a segment of its own
	anchored bool     // had a "/" before its end: matches from its folder only
	negate   bool     // "!pattern"
	dirOnly  bool     // "pattern/"
}

// parseIgnoreLine parses one line of gitignore syntax; ok is false for
// blank lines and comments.
func parseIgnoreLine(line string) (r ignoreRule, ok bool) {
	line = strings.TrimSuffix(line, "\r")
	if line == "" || line[0] == '#' {
		return r, false
	}
	// Trailing spaces are dropped unless escaped with a backslash.
	for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, `\ `) {
		line = line[:len(line)-1]
	}
	if strings.HasPrefix(line, "!") {
		r.negate = true
		line = line[1:]
	}
	// "\#" and "\!" stay escaped: path.Match reads them as the literal
	// character, which is what gitignore means by them.
	if strings.HasSuffix(line, "/") {
		r.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if line == "" {
		return r, false
	}
	r.anchored = strings.Contains(line, "/")
	for seg := range strings.SplitSeq(strings.TrimPrefix(line, "/"), "/") {
		switch {
		case seg == "":
			continue // "a//b" means "a/b"
		case seg == "**" && len(r.segs) > 0 && r.segs[len(r.segs)-1] == "**":
			continue // "**/**" is one "**"
		}
		// fnmatch negates a class with "[!...]", path.Match with "[^...]".
		seg = strings.ReplaceAll(seg, "[!", "[^")
		r.segs = append(r.segs, seg)
	}
	if len(r.segs) == 0 {
		return r, false
	}
	if n := len(r.segs); n > 1 && r.segs[n-1] == "**" {
		// "dir/**" matches everything inside dir but not dir itself.
		r.segs = append(r.segs[:n-1], "*", "**")
	}
	return r, true
}

// match reports whether the rule matches a path given relative to the
// rule's folder, with forward slashes.
func (r *ignoreRule) match(rel string, isDir bool) bool {
	if rel == "" || r.dirOnly && !isDir {
		return false
	}
	if !r.anchored {
		return ignoreSegMatch(r.segs[0], ignoreBase(rel))
	}
	return ignoreMatchSegs(r.segs, rel)
}

// ignoreMatchSegs matches pattern segments against the names of a path,
// where a "**" segment matches any number of names. Backtracking only to
// the most recent "**" keeps it linear in practice, as in wildcard
// matching. The names are read in place: a path deep in a tree is not
// split into a slice for every question.
func ignoreMatchSegs(pat []string, p string) bool {
	// next returns the name starting at i and where the one after starts
	// (len(p)+1 past the last).
	next := func(i int) (string, int) {
		j := strings.IndexByte(p[i:], '/')
		if j < 0 {
			return p[i:], len(p) + 1
		}
		return p[i : i+j], i + j + 1
	}
	pi, ni := 0, 0
	starPi, starNi := -1, 0
	for ni <= len(p) {
		name, after := next(ni)
		switch {
		case pi < len(pat) && pat[pi] == "**":
			starPi, starNi = pi, ni
			pi++
		case pi < len(pat) && ignoreSegMatch(pat[pi], name):
			pi++
			ni = after
		case starPi >= 0:
			_, starNi = next(starNi)
			pi, ni = starPi+1, starNi
		default:
			return false
		}
	}
	for pi < len(pat) && pat[pi] == "**" {
		pi++
	}
	return pi == len(pat)
}

// ignoreSegMatch matches one glob segment against one name. A malformed
// pattern matches nothing, as in git.
func ignoreSegMatch(pat, name string) bool {
	if pat == "**" {
		return true
	}
	ok, err := path.Match(pat, name)
	return err == nil && ok
}
