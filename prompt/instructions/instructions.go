// Package instructions gathers what the agent is told about the project
// besides its code: the instruction files people write for coding agents
// (AGENTS.md, .clinerules, CLAUDE.md or GEMINI.md, and the user's own
// rules in the config folder), which go into the system prompt, and the
// facts of the moment (date, git branch and status), which go into each
// turn's context block.
//
// Which files count, and in what order (least specific first, so that a
// later section wins where two disagree):
//
//  1. The user's rules: AGENTS.md in the user's cline-ls config folder,
//     then the .md files of its rules/ folder in name order.
//  2. For each workspace folder: its AGENTS.md, or when there is none
//     its CLAUDE.md, or else its GEMINI.md (only one: projects that keep
//     several usually keep copies); then .clinerules, a file or a folder
//     of .md files read in name order.
//  3. The same AGENTS.md / CLAUDE.md / GEMINI.md choice in sub-folders,
//     shallower first. A sub-folder's file applies to the files under
//     that folder on top of the root's, as in Codex. Its text is included
//     with its scope named while the size cap allows; the files that no
//     longer fit are still named, with their scope, so the model can read
//     them before it works there.
//
// Workspace files hidden by .clineignore are never read, nor sub-folder
// files that .gitignore hides (vendored code brings its own AGENTS.md);
// only regular files are read (a FIFO cannot hang the daemon), with byte
// caps: MaxFileBytes per file and MaxTotalBytes in all, with a note where
// a file was cut.
package instructions

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/cline-ls/cline-ls/workspace"
)

// Caps on what the instructions add to the system prompt, in bytes of
// file text: a file longer than MaxFileBytes is cut, and files past
// MaxTotalBytes in all are only named.
const (
	MaxFileBytes  = 16 << 10
	MaxTotalBytes = 32 << 10
)

// minCutBytes is the least of a file worth including cut; with less room
// left, a file that does not fit whole is only named.
const minCutBytes = 1 << 10

// maxReadBytes is the largest instruction file read at all; a bigger one
// is not something a person wrote for an agent.
const maxReadBytes = 1 << 20

// maxWalkDirs bounds the search for sub-folder files when no file index
// is ready: past it, deeper files are not found until the index is.
const maxWalkDirs = 4000

// File names that hold instructions.
const (
	AgentsFile  = "AGENTS.md"
	ClaudeFile  = "CLAUDE.md"
	GeminiFile  = "GEMINI.md"
	ClineRules  = ".clinerules"
	userRuleDir = "rules"
)

// levelFiles are the names one folder's instructions may have, in order
// of preference: the first that exists is the folder's file.
var levelFiles = []string{AgentsFile, ClaudeFile, GeminiFile}

// Ignorer is what the loader needs of the workspace's ignore rules
// (*workspace.IgnoreMatcher).
type Ignorer interface {
	Ignored(abs string, isDir bool) bool
	ClineIgnored(abs string, isDir bool) bool
}

// Index is a file index kept up to date by a watcher
// (*workspace.Watcher): sub-folder files are found in it without walking
// the tree, and only when its generation moved.
type Index interface {
	Generation() uint64
	Files() []string
}

// Config says where a Loader looks.
type Config struct {
	// Folders returns the workspace folders (absolute, symlinks
	// evaluated), asked at every Load since folders come and go.
	Folders func() []string
	// CWD is the session's working directory: paths inside it are shown
	// relative to it, as the model writes them.
	CWD string
	// UserDir is the user's cline-ls config folder (tools.ConfigDir);
	// "" means none.
	UserDir string
	// Ignore returns the workspace's ignore rules; nil means none.
	Ignore func() Ignorer
	// Index returns the workspace's file index, or nil while there is
	// none ready; then sub-folders are walked, at most maxWalkDirs.
	Index func() Index
}

// File is one instruction file the system prompt holds (PROTOCOL.md §9's
// files[]).
type File struct {
	Path string `json:"path"` // absolute
	// Chars counts the characters of the file's text that were included.
	Chars int `json:"chars"`
	// Truncated is set when the file was cut or left out by the caps.
	Truncated bool `json:"truncated"`
}

// Set is the instructions at one moment: the files and the text for the
// system prompt, "" when there are none.
type Set struct {
	Files []File `json:"files"`
	Text  string `json:"text"`
}

// Loader reads a workspace's instruction files and rereads them when
// they change. Load stats the candidate files each time (a few system
// calls) and reads them again only when a size or a modification time
// moved. A Loader is safe for concurrent use.
type Loader struct {
	cfg Config

	mu       sync.Mutex // guards the fields below
	stamp    string     // sizes and times of the files last read
	set      Set
	indexGen uint64   // the index generation nested was found at
	indexOK  bool     // nested came from the index
	nested   []string // sub-folder candidates, from the index
	nestedOf string   // the folders nested was found for
}

// NewLoader returns a loader for cfg.
func NewLoader(cfg Config) *Loader {
	if cfg.Folders == nil {
		cfg.Folders = func() []string { return nil }
	}
	return &Loader{cfg: cfg, set: Set{Files: []File{}}}
}

// candidate is an instruction file to read, and how to present it.
type candidate struct {
	path  string
	info  fs.FileInfo
	scope string // the folder it applies to, for sub-folder files
	user  bool   // the user's own rules
	guard string // the workspace folder it must stay in; "" for the user's
}

// Load returns the instructions now, reading the files again only when
// they changed since the last Load.
func (l *Loader) Load() Set {
	l.mu.Lock()
	defer l.mu.Unlock()
	cands := l.candidates()
	var stamp strings.Builder
	for _, c := range cands {
		stamp.WriteString(c.path)
		stamp.WriteByte(0)
		stamp.WriteString(strconv.FormatInt(c.info.Size(), 10))
		stamp.WriteByte(0)
		stamp.WriteString(strconv.FormatInt(c.info.ModTime().UnixNano(), 10))
		stamp.WriteByte('\n')
	}
	if s := stamp.String(); s != l.stamp {
		l.stamp = s
		l.set = l.render(cands)
	}
	return Set{Files: slices.Clone(l.set.Files), Text: l.set.Text}
}

// candidates lists the files that apply now, in prompt order, each with
// a stat taken through its symlinks.
func (l *Loader) candidates() []candidate {
	var out []candidate
	seen := map[string]bool{}
	add := func(c candidate) {
		if seen[c.path] {
			return
		}
		fi, err := os.Stat(c.path)
		if err != nil || !fi.Mode().IsRegular() {
			// Regular files only; a FIFO or a device is passed over
			// without being opened.
			return
		}
		if c.guard != "" && l.clineIgnored(c.path, false) {
			return
		}
		seen[c.path] = true
		c.info = fi
		out = append(out, c)
	}
	if u := l.cfg.UserDir; u != "" {
		add(candidate{path: filepath.Join(u, AgentsFile), user: true})
		for _, p := range mdFiles(filepath.Join(u, userRuleDir)) {
			add(candidate{path: p, user: true})
		}
	}
	folders := l.cfg.Folders()
	for _, f := range folders {
		if p := levelFile(f); p != "" {
			add(candidate{path: p, guard: f})
		}
		rules := filepath.Join(f, ClineRules)
		if fi, err := os.Stat(rules); err == nil && fi.IsDir() {
			if !l.clineIgnored(rules, true) {
				for _, p := range mdFiles(rules) {
					add(candidate{path: p, guard: f})
				}
			}
		} else {
			add(candidate{path: rules, guard: f})
		}
	}
	for _, p := range l.nestedFiles(folders) {
		dir := filepath.Dir(p)
		for _, f := range folders {
			if within(f, dir) && dir != f {
				add(candidate{path: p, scope: dir, guard: f})
				break
			}
		}
	}
	return out
}

// levelFile returns the instruction file of one folder: AGENTS.md, else
// CLAUDE.md, else GEMINI.md; "" for none.
func levelFile(dir string) string {
	for _, name := range levelFiles {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p
		}
	}
	return ""
}

// mdFiles lists the .md files of a folder in name order.
func mdFiles(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(strings.ToLower(e.Name()), ".md") {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out // os.ReadDir sorts by name
}

// nestedFiles returns the instruction file of each sub-folder that has
// one, in path order (a folder before its sub-folders).
func (l *Loader) nestedFiles(folders []string) []string {
	key := strings.Join(folders, "\x00")
	var idx Index
	if l.cfg.Index != nil {
		idx = l.cfg.Index()
	}
	var dirs []string
	if idx != nil {
		gen := idx.Generation()
		if l.indexOK && l.indexGen == gen && l.nestedOf == key {
			dirs = l.nested
		} else {
			dirs = l.dirsFromIndex(idx.Files(), folders)
			l.indexOK, l.indexGen, l.nested, l.nestedOf = true, gen, dirs, key
		}
	} else {
		l.indexOK = false
		dirs = l.walkDirs(folders)
	}
	var out []string
	for _, d := range dirs {
		if p := levelFile(d); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// dirsFromIndex returns the sub-folders holding a file with an
// instruction file's name, sorted.
func (l *Loader) dirsFromIndex(files, folders []string) []string {
	set := map[string]bool{}
	for _, p := range files {
		if !slices.Contains(levelFiles, filepath.Base(p)) {
			continue
		}
		dir := filepath.Dir(p)
		if !slices.Contains(folders, dir) {
			set[dir] = true
		}
	}
	out := make([]string, 0, len(set))
	for d := range set {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

// walkDirs walks the folders for sub-folders holding an instruction
// file, skipping ignored folders, at most maxWalkDirs in all.
func (l *Loader) walkDirs(folders []string) []string {
	var ign Ignorer
	if l.cfg.Ignore != nil {
		ign = l.cfg.Ignore()
	}
	set := map[string]bool{}
	budget := maxWalkDirs
	stop := errors.New("enough")
	for _, root := range folders {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if d != nil && d.IsDir() && p != root {
					return filepath.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				if p != root && (d.Name() == ".git" || ign != nil && ign.Ignored(p, true)) {
					return filepath.SkipDir
				}
				if budget--; budget < 0 {
					return stop
				}
				return nil
			}
			if dir := filepath.Dir(p); dir != root && slices.Contains(levelFiles, d.Name()) && (ign == nil || !ign.Ignored(p, false)) {
				set[dir] = true
			}
			return nil
		})
	}
	out := make([]string, 0, len(set))
	for d := range set {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

func (l *Loader) clineIgnored(abs string, isDir bool) bool {
	if l.cfg.Ignore == nil {
		return false
	}
	ign := l.cfg.Ignore()
	return ign != nil && ign.ClineIgnored(abs, isDir)
}

// render reads the candidates and writes the text, within the caps.
func (l *Loader) render(cands []candidate) Set {
	set := Set{Files: []File{}}
	var b strings.Builder
	var left []string // files the total cap left out
	budget := MaxTotalBytes
	for _, c := range cands {
		text, note, ok := l.read(c)
		if !ok {
			continue
		}
		f := File{Path: c.path}
		capped := min(MaxFileBytes, budget)
		if len(text) > capped && capped < minCutBytes {
			f.Truncated = true
			set.Files = append(set.Files, f)
			left = append(left, l.title(c))
			continue
		}
		if len(text) > capped {
			text = cut(text, capped)
			f.Truncated = true
			note = fmt.Sprintf("[cut here: the file has %d bytes and only the first %d fit; read the file for the rest]", c.info.Size(), len(text))
		}
		budget -= len(text)
		f.Chars = utf8.RuneCountInString(text)
		set.Files = append(set.Files, f)
		b.WriteString("\n## " + l.title(c) + "\n")
		if t := strings.TrimSpace(text); t != "" {
			b.WriteString(t + "\n")
		}
		if note != "" {
			b.WriteString(note + "\n")
		}
	}
	if len(left) > 0 {
		b.WriteString("\nLeft out for size, read each before working in its folder:\n")
		for _, t := range left {
			b.WriteString("- " + t + "\n")
		}
	}
	if b.Len() == 0 {
		return set
	}
	set.Text = "Follow these instructions. They go from the most general to the most specific: where two disagree, the later one wins, and a sub-folder's file applies only to the files under that folder.\n" + b.String()
	return set
}

// read reads one candidate through the workspace's guarded read: a
// regular file, opened without blocking, checked on the opened handle,
// text only, byte-capped. A workspace file whose symlinks lead out of its
// folder is refused, so a cloned repository cannot pull a file from
// elsewhere on the machine into the prompt. A file too large to read is
// kept with a note, so that its existence is not hidden.
func (l *Loader) read(c candidate) (text, note string, ok bool) {
	if c.guard != "" {
		real, err := filepath.EvalSymlinks(c.path)
		if err != nil || !within(c.guard, real) {
			return "", "", false
		}
	}
	data, err := workspace.ReadTextFile(c.path, workspace.ReadOptions{MaxBytes: maxReadBytes})
	var large *workspace.FileTooLargeError
	switch {
	case errors.As(err, &large):
		return "", fmt.Sprintf("[not read: the file has %d bytes, over the %d an instruction file may have]", large.Size, large.Limit), true
	case err != nil:
		return "", "", false
	}
	return strings.TrimPrefix(string(data), "\ufeff"), "", true
}

// title names a file in the prompt, with the scope of a sub-folder's.
func (l *Loader) title(c candidate) string {
	name := l.display(c.path)
	switch {
	case c.user:
		return name + " (the user's own rules, for every project)"
	case c.scope != "":
		return name + " (applies to files under " + l.display(c.scope) + "/)"
	}
	return name
}

// display shows a path relative to the working directory when inside it.
func (l *Loader) display(p string) string {
	if l.cfg.CWD != "" && within(l.cfg.CWD, p) {
		if rel, err := filepath.Rel(l.cfg.CWD, p); err == nil && rel != "." {
			return filepath.ToSlash(rel)
		}
	}
	return p
}

// cut shortens text to at most n bytes, at the last line break in its
// last quarter if there is one, else at a character boundary.
func cut(text string, n int) string {
	if len(text) <= n {
		return text
	}
	if i := strings.LastIndexByte(text[:n], '\n'); i >= n*3/4 {
		return text[:i+1]
	}
	for n > 0 && !utf8.RuneStart(text[n]) {
		n--
	}
	return text[:n]
}

// within reports whether path is dir or inside it.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
