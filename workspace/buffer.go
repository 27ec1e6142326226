package workspace

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Change is one content change of a didChange notification. With Range nil
// it replaces the whole text.
type Change struct {
	Range *Range
	Text  string
}

// ErrStaleVersion is returned for a change whose version does not move the
// document forward. LSP versions strictly increase; a change that arrives
// with an older version was computed against text the mirror has already
// moved past, and applying it would corrupt the buffer.
var ErrStaleVersion = errors.New("stale document version")

// ErrNotOpen is returned for a change or close of a document that was never
// opened.
var ErrNotOpen = errors.New("document is not open")

// Snapshot is an immutable view of an open buffer at one version.
type Snapshot struct {
	URI        string
	Path       string // absolute file path, "" for non-file URIs
	LanguageID string
	Version    int32
	Text       string
}

// Buffers mirrors the text of every document the editor has open. All
// document changes go through Open, Change and Close; each document is
// changed under its own lock, so changes apply strictly in order and a
// keystroke costs a splice of the lines it touches, not a copy of the whole
// buffer.
type Buffers struct {
	mu   sync.RWMutex
	docs map[string]*document // by URI
	// path holds the open documents of each file, by its absolute real
	// path, oldest first: two URIs can name one file (a symbolic link,
	// "./" in the URI), each with its own buffer, and closing one must
	// leave the other findable. Guarded by mu, like docs.
	path map[string][]*document
}

// NewBuffers returns an empty mirror.
func NewBuffers() *Buffers {
	return &Buffers{docs: make(map[string]*document), path: make(map[string][]*document)}
}

// document is one open buffer, kept as a slice of lines. Every line but the
// last ends with its terminator ("\n", "\r\n" or "\r"); the last has none,
// so the concatenation of lines is exactly the text.
type document struct {
	uri, path, lang string

	mu      sync.Mutex
	version int32
	lines   []string
	size    int
	joined  string // cache of the whole text; valid when !dirty
	dirty   bool
	changed chan struct{} // closed and replaced on every change
}

// Open records a newly opened document. Opening a URI that is already open
// replaces it, as a client that reopens a document expects.
func (b *Buffers) Open(uri, path, languageID string, version int32, text string) {
	d := &document{uri: uri, path: path, lang: languageID, version: version,
		lines: splitLines(text), size: len(text), joined: text, changed: make(chan struct{})}
	b.mu.Lock()
	if old := b.docs[uri]; old != nil {
		old.notify()
		b.unlinkPath(old)
	}
	b.docs[uri] = d
	if path != "" {
		b.path[path] = append(b.path[path], d)
	}
	b.mu.Unlock()
}

// unlinkPath drops d from the documents of its file; b.mu is held.
func (b *Buffers) unlinkPath(d *document) {
	if d.path == "" {
		return
	}
	list := slices.DeleteFunc(b.path[d.path], func(x *document) bool { return x == d })
	if len(list) == 0 {
		delete(b.path, d.path)
	} else {
		b.path[d.path] = list
	}
}

// Close forgets a document.
func (b *Buffers) Close(uri string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	d := b.docs[uri]
	if d == nil {
		return fmt.Errorf("close %s: %w", uri, ErrNotOpen)
	}
	delete(b.docs, uri)
	b.unlinkPath(d)
	d.mu.Lock()
	d.notify()
	d.mu.Unlock()
	return nil
}

// Change applies the content changes of one didChange, in order, moving the
// document to version. Positions are in enc. A version that does not
// increase is refused with ErrStaleVersion and changes nothing.
func (b *Buffers) Change(uri string, version int32, enc Encoding, changes []Change) error {
	d := b.get(uri)
	if d == nil {
		return fmt.Errorf("change %s: %w", uri, ErrNotOpen)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if version <= d.version {
		return fmt.Errorf("change %s to version %d, mirror has %d: %w", uri, version, d.version, ErrStaleVersion)
	}
	for _, c := range changes {
		if c.Range == nil {
			d.lines = splitLines(c.Text)
			d.size = len(c.Text)
			d.joined, d.dirty = c.Text, false
			continue
		}
		d.splice(*c.Range, c.Text, enc)
	}
	d.version = version
	d.notify()
	return nil
}

// Get returns a snapshot of an open document by URI.
func (b *Buffers) Get(uri string) (Snapshot, bool) {
	d := b.get(uri)
	if d == nil {
		return Snapshot{}, false
	}
	return d.snapshot(), true
}

// GetPath returns a snapshot of the open document for an absolute path:
// when several URIs name the file, the one opened last.
func (b *Buffers) GetPath(path string) (Snapshot, bool) {
	b.mu.RLock()
	var d *document
	if list := b.path[path]; len(list) > 0 {
		d = list[len(list)-1]
	}
	b.mu.RUnlock()
	if d == nil {
		return Snapshot{}, false
	}
	return d.snapshot(), true
}

// URIs lists the open documents.
func (b *Buffers) URIs() []string {
	b.mu.RLock()
	defer b.mu.RUnlock()
	out := make([]string, 0, len(b.docs))
	for u := range b.docs {
		out = append(out, u)
	}
	return out
}

// Wait blocks until the open document satisfies ok, the document is closed
// (ErrNotOpen) or ctx ends. It is how an edit sent to the editor learns that
// the mirror has caught up with it.
func (b *Buffers) Wait(ctx context.Context, uri string, ok func(Snapshot) bool) (Snapshot, error) {
	for {
		d := b.get(uri)
		if d == nil {
			return Snapshot{}, fmt.Errorf("wait for %s: %w", uri, ErrNotOpen)
		}
		d.mu.Lock()
		s := d.snapshotLocked()
		ch := d.changed
		d.mu.Unlock()
		if ok(s) {
			return s, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return s, ctx.Err()
		}
	}
}

func (b *Buffers) get(uri string) *document {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.docs[uri]
}

func (d *document) notify() {
	close(d.changed)
	d.changed = make(chan struct{})
}

func (d *document) snapshot() Snapshot {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.snapshotLocked()
}

func (d *document) snapshotLocked() Snapshot {
	if d.dirty {
		var sb strings.Builder
		sb.Grow(d.size)
		for _, l := range d.lines {
			sb.WriteString(l)
		}
		d.joined, d.dirty = sb.String(), false
	}
	return Snapshot{URI: d.uri, Path: d.path, LanguageID: d.lang, Version: d.version, Text: d.joined}
}

// content returns line n without its terminator.
func (d *document) content(n int) string {
	l := d.lines[n]
	return l[:len(l)-terminatorLen(l)]
}

// offset resolves p to (line index, byte offset within that line's
// content), clamping as LSP says.
func (d *document) offset(p Position, enc Encoding) (int, int) {
	if int64(p.Line) >= int64(len(d.lines)) {
		n := len(d.lines) - 1
		return n, len(d.lines[n]) // the last line has no terminator
	}
	n := int(p.Line)
	return n, LineByteOffset(d.content(n), p.Character, enc)
}

// splice replaces the text in r with text. Only the lines r touches are
// rebuilt (plus the line before, when its lone "\r" fuses with a "\n" the
// edit brings), so a keystroke costs a splice of one line, not a copy of
// the whole buffer.
func (d *document) splice(r Range, text string, enc Encoding) {
	sl, sb := d.offset(r.Start, enc)
	el, eb := d.offset(r.End, enc)
	if el < sl || el == sl && eb < sb { // a reversed range: treat as empty at start
		el, eb = sl, sb
	}
	// The suffix keeps the end line's whole terminator, so mid ends with a
	// line break exactly when the end line is not the last one.
	mid := d.lines[sl][:sb] + text + d.lines[el][eb:]
	if sl > 0 && strings.HasSuffix(d.lines[sl-1], "\r") && strings.HasPrefix(mid, "\n") {
		sl--
		mid = d.lines[sl] + mid
	}
	removed := 0
	for _, l := range d.lines[sl : el+1] {
		removed += len(l)
	}
	repl := splitLines(mid)
	if el < len(d.lines)-1 {
		repl = repl[:len(repl)-1] // the "" after mid's final break
	}
	d.size += len(mid) - removed
	d.lines = slices.Replace(d.lines, sl, el+1, repl...)
	d.dirty = true
}

// splitLines splits text after each line break; the last element holds what
// follows the final break (possibly "").
func splitLines(text string) []string {
	starts := LineStarts(text)
	lines := make([]string, len(starts))
	for i, s := range starts {
		if i+1 < len(starts) {
			lines[i] = text[s:starts[i+1]]
		} else {
			lines[i] = text[s:]
		}
	}
	return lines
}

// terminatorLen is the length of l's line break: 2 for "\r\n", 1 for "\n"
// or "\r", 0 for none.
func terminatorLen(l string) int {
	switch {
	case strings.HasSuffix(l, "\r\n"):
		return 2
	case strings.HasSuffix(l, "\n"), strings.HasSuffix(l, "\r"):
		return 1
	}
	return 0
}
