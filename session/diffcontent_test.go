package session_test

import (
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/diff"
	"github.com/cline-ls/cline-ls/session"
	"github.com/cline-ls/cline-ls/wire"
)

// TestDiffContentBoundedPerCall: one call's diff content stays within
// diff.MaxRegionBytes however many files it changes; what does not fit
// is named in a text item, never sent cut.
func TestDiffContentBoundedPerCall(t *testing.T) {
	big := func(c string) string { return strings.Repeat(strings.Repeat(c, 99)+"\n", 4000) } // ~400 KB
	var files []session.DiffFile
	for _, p := range []string{"/w/a", "/w/b", "/w/c", "/w/d"} {
		files = append(files, session.DiffFile{Path: p, OldText: big("o"), NewText: big("n"), Existed: true})
	}
	files = append(files, session.DiffFile{Path: "/w/new", NewText: big("x")})
	items := session.DiffContent(files)
	total, diffs := 0, 0
	var notes []string
	for _, it := range items {
		switch v := it.(type) {
		case wire.DiffItem:
			diffs++
			b, _ := wire.Marshal(v)
			total += len(b)
		case wire.ContentItem:
			b, _ := wire.Marshal(v)
			notes = append(notes, string(b))
		}
	}
	if diffs != 1 || total > diff.MaxRegionBytes+4<<10 {
		t.Errorf("%d diff items of %d bytes, want the first file's alone within %d", diffs, total, diff.MaxRegionBytes)
	}
	if len(notes) != 4 || !strings.Contains(notes[0], "/w/b") || !strings.Contains(notes[3], "/w/new: new file of") {
		t.Errorf("notes %q, want one per file left out", notes)
	}
}
