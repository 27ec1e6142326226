package edit

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"strings"
	"testing"
)

func TestPlanPatch(t *testing.T) {
	const goFile = "class A:\n    def f(self):\n        return 1\n\nclass B:\n    def f(self):\n        return 1\n"
	tests := []struct {
		name   string
		tree   MemFS
		patch  string
		want   MemFS
		notes  int
		errHas []string
	}{
		{name: "heredoc wrapper",
			tree:  MemFS{"a.txt": "x\n"},
			patch: "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: a.txt\n@@\n-x\n+y\n*** End Patch\nEOF\n",
			want:  MemFS{"a.txt": "y\n"}},
		{name: "bash -lc wrapper closing its quote",
			tree:  MemFS{"a.txt": "x\n"},
			patch: "bash -lc 'apply_patch <<\"EOF\"\n*** Begin Patch\n*** Update File: a.txt\n-x\n+y\n*** End Patch\nEOF'\n",
			want:  MemFS{"a.txt": "y\n"}},
		{name: "CRLF patch text",
			tree:  MemFS{"a.txt": "x\n"},
			patch: "*** Begin Patch\r\n*** Update File: a.txt\r\n@@\r\n-x\r\n+y\r\n*** End Patch\r\n",
			want:  MemFS{"a.txt": "y\n"}},
		{name: "prose before the patch", tree: MemFS{}, patch: "Here is the patch:\n*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n",
			errHas: []string{"before '*** Begin Patch'"}},
		{name: "cut-off patch applies nothing", tree: MemFS{}, patch: "*** Begin Patch\n*** Add File: a\n+x\n",
			errHas: []string{"'*** End Patch'", "cut off"}},
		{name: "anchors narrow to the right class",
			tree:  MemFS{"m.py": goFile},
			patch: "*** Begin Patch\n*** Update File: m.py\n@@ class B:\n@@     def f(self):\n-        return 1\n+        return 2\n*** End Patch\n",
			want:  MemFS{"m.py": strings.Replace(goFile, "B:\n    def f(self):\n        return 1", "B:\n    def f(self):\n        return 2", 1)}},
		{name: "pure addition goes after its anchor",
			tree:  MemFS{"a": "one\ntwo\nthree\n"},
			patch: "*** Begin Patch\n*** Update File: a\n@@ one\n+inserted\n*** End Patch\n",
			want:  MemFS{"a": "one\ninserted\ntwo\nthree\n"}},
		{name: "unified-diff range header is not an anchor",
			tree:  MemFS{"a": "one\ntwo\n"},
			patch: "*** Begin Patch\n*** Update File: a\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n*** End Patch\n",
			want:  MemFS{"a": "one\n2\n"}},
		{name: "context keeps the file's whitespace and punctuation",
			tree:  MemFS{"a": "say \u201chi\u201d \u2014 ok  \nold\n"},
			patch: "*** Begin Patch\n*** Update File: a\n@@\n say \"hi\" - ok\n-old\n+new\n*** End Patch\n",
			want:  MemFS{"a": "say \u201chi\u201d \u2014 ok  \nnew\n"}, notes: 1},
		{name: "non-breaking space",
			tree:  MemFS{"a": "x\u00a0=\u00a01\n"},
			patch: "*** Begin Patch\n*** Update File: a\n@@\n-x = 1\n+x = 2\n*** End Patch\n",
			want:  MemFS{"a": "x = 2\n"}, notes: 1},
		{name: "exact match preferred over an earlier loose one",
			tree:  MemFS{"a": "v  \nv\n"},
			patch: "*** Begin Patch\n*** Update File: a\n@@\n-v\n+w\n*** End Patch\n",
			want:  MemFS{"a": "v  \nw\n"}},
		{name: "end of file hunk matches at the end",
			tree:  MemFS{"a": "x\ny\nx\ny\n"},
			patch: "*** Begin Patch\n*** Update File: a\n@@\n x\n-y\n+z\n*** End of File\n*** End Patch\n",
			want:  MemFS{"a": "x\ny\nx\nz\n"}},
		{name: "end of file hunk not at the end",
			tree:   MemFS{"a": "x\ny\nmore\n"},
			patch:  "*** Begin Patch\n*** Update File: a\n@@\n x\n-y\n+z\n*** End of File\n*** End Patch\n",
			errHas: []string{"at its end"}},
		{name: "blank separator line before the next file",
			tree:  MemFS{"a": "x\n", "b": "y\n"},
			patch: "*** Begin Patch\n*** Update File: a\n@@\n-x\n+X\n\n*** Update File: b\n@@\n-y\n+Y\n*** End Patch\n",
			want:  MemFS{"a": "X\n", "b": "Y\n"}},
		{name: "file without final newline keeps it so",
			tree:  MemFS{"a": "x\ny"},
			patch: "*** Begin Patch\n*** Update File: a\n@@\n-y\n+z\n+w\n*** End Patch\n",
			want:  MemFS{"a": "x\nz\nw"}},
		{name: "BOM and CRLF kept",
			tree:  MemFS{"a": bom + "x\r\ny\r\n"},
			patch: "*** Begin Patch\n*** Update File: a\n@@\n-x\n+X\n*** End Patch\n",
			want:  MemFS{"a": bom + "X\r\ny\r\n"}},
		{name: "add then update the same file",
			tree:  MemFS{},
			patch: "*** Begin Patch\n*** Add File: n.txt\n+a\n+b\n*** Update File: n.txt\n@@\n-b\n+c\n*** End Patch\n",
			want:  MemFS{"n.txt": "a\nc\n"}},
		{name: "delete then add the same path",
			tree:  MemFS{"n.txt": "old\n"},
			patch: "*** Begin Patch\n*** Delete File: n.txt\n*** Add File: n.txt\n+new\n*** End Patch\n",
			want:  MemFS{"n.txt": "new\n"}},
		{name: "update after delete fails",
			tree:   MemFS{"n.txt": "old\n"},
			patch:  "*** Begin Patch\n*** Delete File: n.txt\n*** Update File: n.txt\n@@\n-old\n+x\n*** End Patch\n",
			errHas: []string{"an earlier part of this patch deleted or moved it"}},
		{name: "pure rename",
			tree:  MemFS{"a/x": "1\n"},
			patch: "*** Begin Patch\n*** Update File: a/x\n*** Move to: b/y\n*** End Patch\n",
			want:  MemFS{"b/y": "1\n"}},
		{name: "cannot create below a file",
			tree:   MemFS{},
			patch:  "*** Begin Patch\n*** Add File: a\n+1\n*** Add File: a/b\n+2\n*** End Patch\n",
			errHas: []string{"a is a file"}},
		{name: "blank lines without '+' inside an added file",
			tree:  MemFS{},
			patch: "*** Begin Patch\n*** Add File: a\n+1\n\n+2\n\n*** End Patch\n",
			want:  MemFS{"a": "1\n\n2\n"}},
		{name: "hunks out of order",
			tree:   MemFS{"a": "1\n2\n3\n"},
			patch:  "*** Begin Patch\n*** Update File: a\n@@\n-3\n+c\n@@\n-1\n+a\n*** End Patch\n",
			errHas: []string{"hunk 2 of 2", "They occur at line 1", "file's order"}},
		{name: "missing context is quoted with the closest place",
			tree:   MemFS{"a": "alpha\nbeta\ngamma\n"},
			patch:  "*** Begin Patch\n*** Update File: a\n@@\n alpha\n-delta\n+x\n*** End Patch\n",
			errHas: []string{"Update File a: hunk 1 of 1", "    alpha\n    delta\n", "> 2 | beta", `(you sent: "delta")`}},
		{name: "context line without its space",
			tree:   MemFS{"a": "x\n"},
			patch:  "*** Begin Patch\n*** Update File: a\n@@\nx\n+y\n*** End Patch\n",
			errHas: []string{"must start with ' ' (context)"}},
		{name: "second failure names its file",
			tree:   MemFS{"a": "x\n"},
			patch:  "*** Begin Patch\n*** Update File: a\n@@\n-x\n+y\n*** Delete File: gone.txt\n*** End Patch\n",
			errHas: []string{"Delete File gone.txt", "does not exist", "No files were changed."}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := maps.Clone(tc.tree)
			plan, err := PlanPatch(tc.patch, tc.tree)
			if tc.errHas != nil {
				if err == nil {
					t.Fatalf("succeeded, want an error")
				}
				var pe *PatchError
				if !errors.As(err, &pe) {
					t.Errorf("error is not a *PatchError: %#v", err)
				}
				for _, s := range tc.errHas {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error does not contain %q:\n%v", s, err)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if !maps.Equal(tc.tree, before) {
				t.Fatalf("planning changed the tree")
			}
			if err := Apply(plan, tc.tree); err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(tc.tree, tc.want) {
				t.Errorf("tree\n got %q\nwant %q", tc.tree, tc.want)
			}
			if len(plan.Notes) != tc.notes {
				t.Errorf("notes %q, want %d", plan.Notes, tc.notes)
			}
		})
	}
}

func TestPlanReportsOverwritesAndNetEffect(t *testing.T) {
	tree := MemFS{"src": "s\n", "dst": "d\n", "tmp": "t\n"}
	plan, err := PlanPatch("*** Begin Patch\n*** Update File: src\n*** Move to: dst\n@@\n-s\n+S\n*** Add File: scratch\n+x\n*** Delete File: scratch\n*** Update File: tmp\n@@\n-t\n+t\n*** End Patch", tree)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Changes) != 4 || !plan.Changes[0].Overwrote || plan.Changes[0].MoveTo != "dst" || plan.Changes[1].Overwrote {
		t.Errorf("changes = %+v", plan.Changes)
	}
	var got []string
	for _, f := range plan.Files {
		got = append(got, fmt.Sprintf("%s %v>%v %q", f.Path, f.Existed, f.Exists, f.NewText))
	}
	// scratch is added and deleted, tmp rewritten unchanged: neither
	// has a net effect.
	want := []string{`src true>false ""`, `dst true>true "S\n"`}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("files\n got %q\nwant %q", got, want)
	}
}

// recorder is a Writer that logs calls and fails on one path.
type recorder struct {
	log    []string
	failOn string
}

func (r *recorder) WriteFile(p, text string) error {
	if p == r.failOn {
		return errors.New("disk full")
	}
	r.log = append(r.log, "write "+p)
	return nil
}

func (r *recorder) Remove(p string) error {
	r.log = append(r.log, "remove "+p)
	return nil
}

func TestApplyWritesBeforeRemoving(t *testing.T) {
	tree := MemFS{"old": "1\n", "gone": "2\n"}
	plan, err := PlanPatch("*** Begin Patch\n*** Delete File: gone\n*** Update File: old\n*** Move to: new\n@@\n-1\n+one\n*** End Patch", tree)
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{}
	if err := Apply(plan, r); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.log, ", "); got != "write new, remove gone, remove old" {
		t.Errorf("calls: %s", got)
	}
	r = &recorder{failOn: "new"}
	err = Apply(plan, r)
	if err == nil || !strings.Contains(err.Error(), "disk full") || len(r.log) != 0 {
		t.Errorf("failing write: err %v, calls %q", err, r.log)
	}
}

func TestMemFS(t *testing.T) {
	m := MemFS{"d/f": "x"}
	if _, err := m.ReadFile("d"); err == nil || errors.Is(err, fs.ErrNotExist) {
		t.Errorf("reading a directory: %v", err)
	}
	if _, err := m.ReadFile("d/f/g"); err == nil {
		t.Errorf("reading below a file succeeded")
	}
	if err := m.WriteFile("d", "y"); err == nil {
		t.Errorf("writing over a directory succeeded")
	}
	if err := m.Remove("nope"); err == nil {
		t.Errorf("removing a missing file succeeded")
	}
	if t2, err := m.ReadFile("./d/../d/f"); err != nil || t2 != "x" {
		t.Errorf("cleaned path: %q, %v", t2, err)
	}
}
