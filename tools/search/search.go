// Package search is the content search engine behind the search_codebase
// tool: a parallel, ignore-aware walk of a folder that runs RE2 queries
// line by line and keeps the first matches in path order.
//
// It is built for speed on large trees:
//   - Workers (GOMAXPROCS by default) take folders and files from one
//     queue ordered by path, so the tree is read in parallel but roughly
//     in order. Once a query has its MaxResults matches, files that sort
//     after the last one kept are not searched for it, and the result is
//     the same as a sequential search would give.
//   - A query that requires a literal (a plain word, or a literal part
//     such as "New" in `func\s+New\w+`, or each branch of an alternation)
//     is run as a scan for that literal's rarest byte with the vectorised
//     bytes.IndexByte; the regexp only confirms candidate lines. Case-
//     insensitive literals are scanned for in both cases, without lowering
//     the text.
//   - Binary files (sniffed from their first 8 KiB), files over a size cap
//     and minified files (very long lines on average) are skipped unread or
//     after that first look; symbolic links are not followed and .git is
//     never entered.
//
// It reads files from disk, or from Options.Overlay for files whose
// current text is elsewhere (the editor's unsaved buffers).
package search

import (
	"bytes"
	"cmp"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/cline-ls/cline-ls/workspace"
)

// Defaults of Options.
const (
	// DefaultMaxResults is how many matches a query keeps.
	DefaultMaxResults = 300
	// DefaultMaxFileBytes is the largest file searched: bigger ones are
	// logs, dumps and generated data rather than code.
	DefaultMaxFileBytes = 4 << 20
	// DefaultMaxLineBytes is the longest line a match keeps whole.
	DefaultMaxLineBytes = 2000
)

const (
	sniffBytes = 8 << 10
	// A file whose lines average more than minifiedAvgLine bytes over
	// its first minifiedSample bytes is minified or generated: a match
	// there is one enormous line of no use to read.
	minifiedSample  = 64 << 10
	minifiedAvgLine = 400
	minifiedMinSize = 4 << 10
)

// Options say what to search and how.
type Options struct {
	// Root is the absolute path of the folder to search, or of one file.
	Root string
	// Within, when set, is a handle on a folder holding Root (the
	// workspace folder): every folder and file is opened through it, and
	// nothing outside it is read even if a folder on the way is swapped
	// for a symbolic link while the search runs. Without it the search
	// opens its own handle on Root (or on the folder of a file Root).
	Within *os.Root
	// Queries are RE2 regular expressions (Go regexp syntax), each
	// matched against one line at a time.
	Queries []string
	// Glob, when set, keeps only the files it matches (doublestar
	// syntax: *.go, **/*_test.go, *.{ts,tsx}); a glob without "/" is
	// matched against file names, one with "/" against paths relative to
	// Root. It is not applied when Root is a file.
	Glob string
	// Ignored hides files and folders (.gitignore and .clineignore
	// rules); nil hides nothing. Folders named .git are always skipped.
	Ignored func(abs string, isDir bool) bool
	// SkipHidden skips files and folders whose names start with ".",
	// as ripgrep does by default.
	SkipHidden bool
	// MaxResults is how many matches each query keeps, the first ones
	// in path order; 0 means DefaultMaxResults, a negative value no cap.
	MaxResults int
	// MaxFileBytes skips larger files; 0 means DefaultMaxFileBytes.
	MaxFileBytes int64
	// MaxLineBytes cuts longer matched lines to a window around the
	// match, marked with "…"; 0 means DefaultMaxLineBytes.
	MaxLineBytes int
	// Context is how many lines before and after each match to keep.
	Context int
	// Workers is how many files are read at once; 0 means GOMAXPROCS.
	Workers int
	// Overlay holds the texts of files, by absolute path, to search
	// instead of what is on disk (open editor buffers). Only files the
	// walk meets are searched.
	Overlay map[string][]byte
}

// Match is one matching line.
type Match struct {
	Path string // absolute
	Line int    // 1-based
	Text string // the line, without its line break
	// Before and After are the context lines, nearest last and first.
	Before, After []string
}

// QueryResult is what one query found.
type QueryResult struct {
	Query   string
	Matches []Match // sorted by path (components in order), then line
	// Complete is false when the query reached MaxResults: there may be
	// matches in files after the last one kept.
	Complete bool
}

// Result is the outcome of a search.
type Result struct {
	Queries []QueryResult // in the order of Options.Queries
	// Searched counts the files read; the others were skipped.
	Searched   int
	Binary     int // skipped: binary content
	Large      int // skipped: over MaxFileBytes
	Minified   int // skipped: minified or generated
	Unreadable int // could not be opened or read
	// TooDeep counts the folders workspace.MaxWalkDepth levels down,
	// which were not entered.
	TooDeep int
	// Stopped is true when the walk met workspace.MaxWalkEntries
	// entries and went no further.
	Stopped bool
}

// Search runs the queries over the files under opts.Root. Invalid queries
// give a *QueryError, an invalid glob an error saying so; both before any
// file is read. A cancelled ctx stops the search and returns ctx.Err().
func Search(ctx context.Context, opts Options) (*Result, error) {
	if len(opts.Queries) == 0 {
		return nil, errors.New("search: no query")
	}
	matchers := make([]*matcher, len(opts.Queries))
	for i, q := range opts.Queries {
		m, err := compileQuery(i, q)
		if err != nil {
			return nil, err
		}
		matchers[i] = m
	}
	if opts.Glob != "" && !doublestar.ValidatePattern(opts.Glob) {
		return nil, fmt.Errorf("the file pattern %q is not a valid glob", opts.Glob)
	}
	root := filepath.Clean(opts.Root)
	within := opts.Within
	base := root
	if within == nil {
		fi, err := os.Stat(root)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			base = filepath.Dir(root)
		}
		within, err = os.OpenRoot(base)
		if err != nil {
			return nil, err
		}
		defer within.Close()
	} else {
		base = filepath.Clean(within.Name())
	}
	s := newSearcher(opts, matchers)
	if err := s.openBase(within, base); err != nil {
		return nil, err
	}
	defer s.closeBase()
	s.dirs = workspace.NewDirHandles(within)
	defer s.dirs.Close()
	fi, err := within.Stat(s.rel(root))
	if err != nil {
		return nil, err
	}
	s.queue.push([]walkItem{{path: root, dir: fi.IsDir()}})

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, s.queue.stop)
	defer stop()

	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	// The calling goroutine is one of the workers: under load each
	// goroutine that must be scheduled before the result is ready is one
	// more wait for a processor.
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(func() { s.work(ctx) })
	}
	s.work(ctx)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return s.result(), nil
}

// searcher is the state one Search shares among its workers.
type searcher struct {
	opts     Options
	root     string
	base     string   // the folder within is a handle on
	within   *os.Root // every open goes through it
	basef    *os.File // within's folder opened, for openat2 (readfile_*.go)
	matchers []*matcher
	queue    walkQueue
	visited  atomic.Int64 // entries listed so far
	dirs     *workspace.DirHandles

	mu    sync.Mutex
	keep  []keeper
	stats Result
}

func newSearcher(opts Options, matchers []*matcher) *searcher {
	if opts.MaxResults == 0 {
		opts.MaxResults = DefaultMaxResults
	}
	if opts.MaxFileBytes <= 0 {
		opts.MaxFileBytes = DefaultMaxFileBytes
	}
	if opts.MaxLineBytes <= 0 {
		opts.MaxLineBytes = DefaultMaxLineBytes
	}
	s := &searcher{opts: opts, root: filepath.Clean(opts.Root), matchers: matchers, keep: make([]keeper, len(matchers))}
	for i := range s.keep {
		s.keep[i] = keeper{max: opts.MaxResults, complete: true}
	}
	s.queue.cond.L = &s.queue.mu
	return s
}

// worker holds one worker's reusable buffers.
type worker struct {
	buf   []byte
	want  []int
	found []Match
}

func (s *searcher) work(ctx context.Context) {
	w := &worker{}
	for {
		it, ok := s.queue.pop()
		if !ok {
			return
		}
		var children []walkItem
		if ctx.Err() == nil {
			if it.dir {
				children = s.readDir(it)
			} else {
				s.searchFile(w, it)
			}
		}
		s.queue.done(children)
	}
}

// readDir lists a folder's entries that the search should visit: none
// once the walk has met MaxWalkEntries, and no folder past MaxWalkDepth.
func (s *searcher) readDir(it walkItem) []walkItem {
	dir := it.path
	if it.depth >= workspace.MaxWalkDepth {
		s.addStats(func(r *Result) { r.TooDeep++ })
		return nil
	}
	if s.visited.Load() >= workspace.MaxWalkEntries {
		s.addStats(func(r *Result) { r.Stopped = true })
		return nil
	}
	entries, err := s.dirs.ReadDir(s.rel(dir))
	if err != nil && len(entries) == 0 {
		s.addStats(func(r *Result) { r.Unreadable++ })
		return nil
	}
	items := make([]walkItem, 0, len(entries))
	for _, e := range entries {
		name := e.Name()
		if name == ".git" || s.opts.SkipHidden && name[0] == '.' {
			continue
		}
		typ := e.Type()
		isDir := typ.IsDir()
		if !isDir && (!typ.IsRegular() || workspace.IsAtomicTemp(name)) {
			continue // symbolic links, devices, pipes, sockets; our own temporary files
		}
		path := dir + string(filepath.Separator) + name
		if !isDir && s.opts.Glob != "" && !s.globMatch(path, name) {
			continue
		}
		if s.opts.Ignored != nil && s.opts.Ignored(path, isDir) {
			continue
		}
		items = append(items, walkItem{path: path, dir: isDir, depth: it.depth + 1})
	}
	s.visited.Add(int64(len(entries)))
	return items
}

// rel is path (base or under it) relative to base, for within.
func (s *searcher) rel(path string) string {
	if path == s.base {
		return "."
	}
	if r, ok := strings.CutPrefix(path, s.base+string(filepath.Separator)); ok {
		return r
	}
	if s.base == string(filepath.Separator) {
		return strings.TrimPrefix(path, s.base)
	}
	return path // outside: within refuses it
}

func (s *searcher) globMatch(path, name string) bool {
	if !strings.Contains(s.opts.Glob, "/") {
		ok, _ := doublestar.Match(s.opts.Glob, name)
		return ok
	}
	rel, err := filepath.Rel(s.root, path)
	if err != nil {
		return false
	}
	ok, _ := doublestar.Match(s.opts.Glob, filepath.ToSlash(rel))
	return ok
}

func (s *searcher) addStats(f func(*Result)) {
	s.mu.Lock()
	f(&s.stats)
	s.mu.Unlock()
}

// searchFile runs the queries that still want matches from path.
func (s *searcher) searchFile(w *worker, it walkItem) {
	w.want = w.want[:0]
	s.mu.Lock()
	for qi := range s.keep {
		if s.keep[qi].accepts(it.path) {
			w.want = append(w.want, qi)
		} else {
			s.keep[qi].complete = false
		}
	}
	s.mu.Unlock()
	if len(w.want) == 0 {
		return
	}

	data, skip := s.load(w, it.path)
	if skip != nil {
		s.addStats(skip)
		return
	}
	for _, qi := range w.want {
		var cut bool
		w.found, cut = s.matchFile(w.found[:0], s.matchers[qi], it.path, data)
		if len(w.found) == 0 {
			continue
		}
		s.mu.Lock()
		if cut {
			s.keep[qi].complete = false
		}
		for _, m := range w.found {
			if !s.keep[qi].add(m) {
				break // later lines sort after this one
			}
		}
		s.mu.Unlock()
	}
	s.addStats(func(r *Result) { r.Searched++ })
}

// load returns path's text, or the statistic to count when skipping it.
// The bytes are valid until the worker's next load.
func (s *searcher) load(w *worker, path string) ([]byte, func(*Result)) {
	data, ok := s.opts.Overlay[path]
	if !ok {
		var skip func(*Result)
		if data, skip = s.readFile(w, path); skip != nil {
			return nil, skip
		}
	}
	if int64(len(data)) > s.opts.MaxFileBytes {
		return nil, func(r *Result) { r.Large++ }
	}
	if looksBinary(data[:min(len(data), sniffBytes)]) {
		return nil, func(r *Result) { r.Binary++ }
	}
	if looksMinified(data) {
		return nil, func(r *Result) { r.Minified++ }
	}
	return data, nil
}

// readRefusal says why readInto did not return a file's bytes.
type readRefusal int

const (
	refusedLarge readRefusal = iota + 1 // over the size cap
	refusedStop                         // its first bytes showed it is binary
)

// firstRead is how much of a file is read before the rest: enough to sniff
// it and to hold most source files whole in one read.
const firstRead = 64 << 10

// readFile reads a file into the worker's buffer, refusing one over the
// size cap before reading it and a binary one after its first bytes.
func (s *searcher) readFile(w *worker, path string) ([]byte, func(*Result)) {
	data, buf, refused, err := s.readInto(path, w.buf, s.opts.MaxFileBytes, firstRead, func(head []byte) bool {
		return looksBinary(head[:min(len(head), sniffBytes)])
	})
	w.buf = buf
	switch {
	case err != nil:
		return nil, func(r *Result) { r.Unreadable++ }
	case refused == refusedLarge:
		return nil, func(r *Result) { r.Large++ }
	case refused == refusedStop:
		return nil, func(r *Result) { r.Binary++ }
	}
	return data, nil
}

// looksBinary applies workspace.SniffBinary's rule, skipping its
// per-character check for the common case of valid UTF-8.
func looksBinary(sample []byte) bool {
	if bytes.IndexByte(sample, 0) >= 0 {
		return true
	}
	if utf8.Valid(sample) {
		return false
	}
	bin, _ := workspace.SniffBinary(sample)
	return bin
}

func looksMinified(data []byte) bool {
	if len(data) < minifiedMinSize {
		return false
	}
	sample := data[:min(len(data), minifiedSample)]
	lines := bytes.Count(sample, []byte{'\n'}) + 1
	return len(sample)/lines > minifiedAvgLine
}

// matchFile appends to found the matches of m in data, in line order, up
// to the query's cap; cut reports that the cap stopped it.
func (s *searcher) matchFile(found []Match, m *matcher, path string, data []byte) (_ []Match, cut bool) {
	limit := s.opts.MaxResults
	lineNo, counted := 1, 0
	m.lines(data, func(start, end int) bool {
		if limit >= 0 && len(found) == limit {
			cut = true
			return false
		}
		lineNo += bytes.Count(data[counted:start], []byte{'\n'})
		counted = start
		found = append(found, Match{
			Path:   path,
			Line:   lineNo,
			Text:   s.lineText(m, data[start:end]),
			Before: contextBefore(data, start, s.opts.Context, s.opts.MaxLineBytes),
			After:  contextAfter(data, end, s.opts.Context, s.opts.MaxLineBytes),
		})
		return true
	})
	return found, cut
}

// lineText copies a matched line, cutting a long one to a window that
// starts a little before the match.
func (s *searcher) lineText(m *matcher, line []byte) string {
	line = bytes.TrimSuffix(line, []byte{'\r'})
	limit := s.opts.MaxLineBytes
	if len(line) <= limit {
		return string(line)
	}
	at := 0
	if loc := m.line.FindIndex(line); loc != nil {
		at = loc[0]
	}
	start := max(0, min(at-limit/4, len(line)-limit))
	end := start + limit
	for start > 0 && !utf8.RuneStart(line[start]) {
		start++
	}
	for end < len(line) && !utf8.RuneStart(line[end]) {
		end--
	}
	var b strings.Builder
	if start > 0 {
		b.WriteString("…")
	}
	b.Write(line[start:end])
	if end < len(line) {
		b.WriteString("…")
	}
	return b.String()
}

func contextBefore(data []byte, start, n, limit int) []string {
	var out []string
	for ; n > 0 && start > 0; n-- {
		end := start - 1 // the line break ending the previous line
		start = bytes.LastIndexByte(data[:end], '\n') + 1
		out = append(out, contextLine(data[start:end], limit))
	}
	slices.Reverse(out)
	return out
}

func contextAfter(data []byte, end, n, limit int) []string {
	var out []string
	for ; n > 0 && end+1 < len(data); n-- {
		start := end + 1
		end = bytes.IndexByte(data[start:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += start
		}
		out = append(out, contextLine(data[start:end], limit))
	}
	return out
}

// contextLine copies a context line, cut at limit bytes.
func contextLine(line []byte, limit int) string {
	line = bytes.TrimSuffix(line, []byte{'\r'})
	if len(line) > limit {
		end := limit
		for end > 0 && !utf8.RuneStart(line[end]) {
			end--
		}
		return string(line[:end]) + "…"
	}
	return string(line)
}

func (s *searcher) result() *Result {
	res := s.stats
	res.Queries = make([]QueryResult, len(s.keep))
	for i := range s.keep {
		k := &s.keep[i]
		ms := k.matches
		slices.SortFunc(ms, compareMatches)
		res.Queries[i] = QueryResult{Query: s.opts.Queries[i], Matches: ms, Complete: k.complete}
	}
	return &res
}

func compareMatches(a, b Match) int {
	if c := comparePaths(a.Path, b.Path); c != 0 {
		return c
	}
	return cmp.Compare(a.Line, b.Line)
}

// comparePaths orders paths component by component, as a sorted
// directory walk meets them: "a/b" before "a.go", since '/' counts as
// lower than every other byte.
func comparePaths(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		ca, cb := a[i], b[i]
		if ca == cb {
			continue
		}
		if ca == filepath.Separator {
			return -1
		}
		if cb == filepath.Separator {
			return 1
		}
		return cmp.Compare(ca, cb)
	}
	return cmp.Compare(len(a), len(b))
}

// keeper holds one query's best matches: all of them while fewer than
// max, then the first max in path order, as a max-heap so that the last
// one is at hand.
type keeper struct {
	max      int // < 0: no cap
	matches  []Match
	complete bool
}

// accepts reports whether a match in path could be kept.
func (k *keeper) accepts(path string) bool {
	return k.max < 0 || len(k.matches) < k.max || comparePaths(path, k.matches[0].Path) < 0
}

// add keeps m if it sorts before the last match kept or there is room,
// and reports whether it did.
func (k *keeper) add(m Match) bool {
	if k.max < 0 {
		k.matches = append(k.matches, m)
		return true
	}
	h := (*matchHeap)(&k.matches)
	if len(k.matches) < k.max {
		heap.Push(h, m)
		return true
	}
	k.complete = false
	if compareMatches(m, k.matches[0]) >= 0 {
		return false
	}
	k.matches[0] = m
	heap.Fix(h, 0)
	return true
}

// matchHeap is a max-heap of matches by path and line.
type matchHeap []Match

func (h matchHeap) Len() int           { return len(h) }
func (h matchHeap) Less(i, j int) bool { return compareMatches(h[i], h[j]) > 0 }
func (h matchHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *matchHeap) Push(x any)        { *h = append(*h, x.(Match)) }
func (h *matchHeap) Pop() any {
	old := *h
	m := old[len(old)-1]
	*h = old[:len(old)-1]
	return m
}

// walkItem is a folder to list or a file to search.
type walkItem struct {
	path  string
	dir   bool
	depth int // levels below the search's root
}

// walkQueue hands out walk items smallest path first, so that parallel
// workers still move through the tree in order. It ends when it is empty
// and no worker holds an item that may add more.
type walkQueue struct {
	mu      sync.Mutex
	cond    sync.Cond
	items   itemHeap
	busy    int
	stopped bool
}

func (q *walkQueue) push(items []walkItem) {
	q.mu.Lock()
	for _, it := range items {
		heap.Push(&q.items, it)
	}
	q.mu.Unlock()
}

// pop returns the next item, waiting while other workers may still add
// some; ok is false when the walk is over or stopped.
func (q *walkQueue) pop() (walkItem, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) == 0 && q.busy > 0 && !q.stopped {
		q.cond.Wait()
	}
	if len(q.items) == 0 || q.stopped {
		q.cond.Broadcast()
		return walkItem{}, false
	}
	q.busy++
	return heap.Pop(&q.items).(walkItem), true
}

// done returns a popped item, adding what it led to.
func (q *walkQueue) done(children []walkItem) {
	q.mu.Lock()
	for _, it := range children {
		heap.Push(&q.items, it)
	}
	q.busy--
	if len(children) > 0 || q.busy == 0 {
		q.cond.Broadcast()
	}
	q.mu.Unlock()
}

func (q *walkQueue) stop() {
	q.mu.Lock()
	q.stopped = true
	q.cond.Broadcast()
	q.mu.Unlock()
}

type itemHeap []walkItem

func (h itemHeap) Len() int           { return len(h) }
func (h itemHeap) Less(i, j int) bool { return comparePaths(h[i].path, h[j].path) < 0 }
func (h itemHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *itemHeap) Push(x any)        { *h = append(*h, x.(walkItem)) }
func (h *itemHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}
