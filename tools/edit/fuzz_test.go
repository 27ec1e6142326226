package edit

import (
	"maps"
	"strings"
	"testing"
)

// canonical makes s a text the round-trip properties hold for: no '\r'
// (terminators are preserved, not normalised, and lone CRs split lines),
// no BOM, and a final newline when not empty (the final-newline rule is
// tested on its own).
func canonical(s string) string {
	// Removing one BOM from invalid UTF-8 can splice the bytes around it
	// into another, hence the loop.
	for strings.ContainsAny(s, "\r"+bom) {
		s = strings.ReplaceAll(s, "\r", "")
		s = strings.ReplaceAll(s, bom, "")
	}
	if s != "" && !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s
}

func textLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// FuzzApplyPatch checks that parsing and planning any patch against any
// small tree never panics, never changes the tree, and that a plan, once
// applied, leaves exactly the files it describes. It also checks a round
// trip: a patch that removes all of a.txt's lines and adds the lines of
// another text turns a.txt into that text.
func FuzzApplyPatch(f *testing.F) {
	f.Add("*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+2\n*** End Patch\n", "one\ntwo\n", "x\n")
	f.Add("*** Begin Patch\n*** Add File: dir/c.txt\n+new\n*** Delete File: dir/b.txt\n*** End Patch", "", "b\n")
	f.Add("apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: dir/b.txt\n*** Move to: a.txt\n@@ b\n+after b\n*** End of File\n*** End Patch\nEOF\n", "a", "b\r\nc\r\n")
	f.Add("*** Begin Patch\n*** Update File: a.txt\n@@ -1,2 +1,2 @@\n \u201cq\u201d\n-x\n+y\n\n*** End Patch", "\"q\"  \nx", "")
	f.Fuzz(func(t *testing.T, patch, a, b string) {
		tree := MemFS{"a.txt": a, "dir/b.txt": b}
		before := maps.Clone(tree)
		plan, err := PlanPatch(patch, tree)
		if !maps.Equal(tree, before) {
			t.Fatalf("planning changed the tree")
		}
		if err == nil {
			if err := Apply(plan, tree); err != nil {
				t.Fatalf("Apply: %v", err)
			}
			for _, fc := range plan.Files {
				got, ok := tree[fc.Path]
				if ok != fc.Exists || ok && got != fc.NewText {
					t.Fatalf("after Apply %s = %q (%v), plan says %q (%v)", fc.Path, got, ok, fc.NewText, fc.Exists)
				}
			}
		} else if _, ok := err.(*PatchError); !ok {
			t.Fatalf("error of type %T: %v", err, err)
		}

		// Round trip.
		a, b = canonical(a), canonical(b)
		var p strings.Builder
		p.WriteString("*** Begin Patch\n*** Update File: a.txt\n@@\n")
		for _, l := range textLines(a) {
			p.WriteString("-" + l + "\n")
		}
		for _, l := range textLines(b) {
			p.WriteString("+" + l + "\n")
		}
		p.WriteString("*** End Patch\n")
		if a == "" && b == "" {
			return // a hunk with no lines is rightly refused
		}
		if _, ok := Placeholder(b, a); ok {
			return // refused, never written (TestPlaceholderRefused)
		}
		plan, err = PlanPatch(p.String(), MemFS{"a.txt": a})
		if err != nil {
			t.Fatalf("round trip %q -> %q: %v", a, b, err)
		}
		if got := plan.Changes[0].NewText; got != b {
			t.Fatalf("round trip %q -> %q gave %q", a, b, got)
		}
	})
}

// FuzzSearchReplace checks that parsing and applying any diff to any text
// never panics and fails only with a *DiffError, and that a block whose
// SEARCH is the whole of one text and whose REPLACE is another turns the
// one into the other.
func FuzzSearchReplace(f *testing.F) {
	f.Add("line1\nline2\nline3", "------- SEARCH\nline2\n=======\nreplaced\n+++++++ REPLACE")
	f.Add("", "------- SEARCH\n=======\nnew\n+++++++ REPLACE\n")
	f.Add("a\r\n  b  \r\nc\r\nd", "<<<<<<< SEARCH\nb\n=======\nB\n>>>>>>> REPLACE\n\n------- SEARCH\na\nx\nc\n=======\n+++++++ REPLACE\n")
	f.Add("x\nx\n", "------- SEARCH\nx\n======= \nx\n+++++++ REPLACE")
	f.Fuzz(func(t *testing.T, text, diff string) {
		res, err := ReplaceInFile("f", text, diff)
		if err != nil {
			if _, ok := err.(*DiffError); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			if res.Text != "" {
				t.Fatalf("text returned with an error")
			}
		}

		// Round trip, unless a line of either text would read as a marker.
		a, b := canonical(text), canonical(diff)
		for _, l := range append(textLines(a), textLines(b)...) {
			if isSearchMarker(l) || isReplaceMarker(l) || isSeparator(l) {
				return
			}
		}
		if _, ok := Placeholder(b, a); ok {
			return // refused, never written (TestPlaceholderRefused)
		}
		var d strings.Builder
		d.WriteString("------- SEARCH\n" + a + "=======\n" + b + "+++++++ REPLACE\n")
		res, err = ReplaceInFile("f", a, d.String())
		if err != nil {
			t.Fatalf("round trip %q -> %q: %v", a, b, err)
		}
		if res.Text != b {
			t.Fatalf("round trip %q -> %q gave %q", a, b, res.Text)
		}
	})
}

// FuzzEditor checks Replace and Insert against a plain string model on
// texts without '\r' (where no line-ending conversion applies).
func FuzzEditor(f *testing.F) {
	f.Add("a\nb\nc", "b", "B", 2)
	f.Add("aaa", "aa", "$&", 4)
	f.Add(bom+"x\r\ny", "x\ny", "z", 1)
	f.Fuzz(func(t *testing.T, text, old, repl string, lineNo int) {
		got, err := Replace(text, old, repl)
		ins, insErr := Insert(text, lineNo, repl)
		if strings.ContainsRune(text+old+repl, '\r') {
			return
		}
		// The occurrences that count: overlapping ones included, those
		// that begin or end inside a word (TestEditorWordBoundary) left out.
		valid, at := 0, -1
		for i := 0; old != "" && i <= len(text); {
			k := strings.Index(text[i:], old)
			if k < 0 {
				break
			}
			if !insideWord(text, i+k, i+k+len(old)) {
				valid, at = valid+1, i+k
			}
			i += k + 1
		}
		reason := Reason(0)
		if e, ok := err.(*EditorError); ok {
			reason = e.Reason
		}
		switch {
		case old == "":
			if err == nil {
				t.Fatalf("empty old text accepted")
			}
		case valid == 1 && err == nil:
			if want := text[:at] + repl + text[at+len(old):]; got != want {
				t.Fatalf("Replace(%q, %q, %q) = %q, want %q", text, old, repl, got, want)
			}
		case valid == 1 && reason != ReasonUnsafe:
			// Only a placeholder in the new text refuses a unique match.
			t.Fatalf("Replace(%q, %q) failed on a unique occurrence: %v", text, old, err)
		case valid > 1 && reason != ReasonMultipleMatches:
			t.Fatalf("Replace(%q, %q) with %d occurrences: %q, %v", text, old, valid, got, err)
		}

		body := strings.TrimPrefix(text, bom)
		lines := textLines(body)
		if body != "" && !strings.HasSuffix(body, "\n") {
			lines = strings.Split(body, "\n")
		}
		if lineNo < 1 || lineNo > len(lines)+1 {
			if insErr == nil {
				t.Fatalf("Insert at %d of %d lines accepted", lineNo, len(lines))
			}
			return
		}
		if insErr != nil {
			t.Fatalf("Insert(%q, %d): %v", text, lineNo, insErr)
		}
		insLines := textLines(canonical(repl))
		if len(insLines) == 0 {
			insLines = []string{""}
		}
		ins1 := strings.Join(insLines, "\n")
		prefix := text[:len(text)-len(body)]
		var want string
		switch {
		case lineNo <= len(lines):
			off := 0
			for _, l := range lines[:lineNo-1] {
				off += len(l) + 1
			}
			want = prefix + body[:off] + ins1 + "\n" + body[off:]
		case body == "" || strings.HasSuffix(body, "\n"):
			want = prefix + body + ins1 + "\n"
		default:
			want = prefix + body + "\n" + ins1
		}
		if ins != want {
			t.Fatalf("Insert(%q, %d, %q) = %q, want %q", text, lineNo, repl, ins, want)
		}
	})
}
