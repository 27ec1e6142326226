package edit

import (
	"fmt"
	"strings"
	"testing"
)

// benchLines returns n lines of Go-like code, each starting alike, which
// is the hard case for substring search: every line is a near-miss.
func benchLines(from, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("\tvalue_%07d := compute(%d, \"the quick brown fox\") // jumps over the lazy dog", from+i, (from+i)*7)
	}
	return out
}

// BenchmarkReplace5000LinesIn10MiB replaces 5,000 consecutive lines in the
// middle of a 10 MiB file with Replace, as one editor call would.
func BenchmarkReplace5000LinesIn10MiB(b *testing.B) {
	const size = 10 << 20
	var sb strings.Builder
	sb.Grow(size + 200)
	n := 0
	for sb.Len() < size {
		sb.WriteString(benchLines(n, 1)[0])
		sb.WriteByte('\n')
		n++
	}
	text := sb.String()
	start := n / 2
	oldLines := benchLines(start, 5000)
	old := strings.Join(oldLines, "\n")
	repl := strings.ReplaceAll(old, "compute(", "evaluate(")
	got, err := Replace(text, old, repl)
	if err != nil || len(got) != len(text)+5000 {
		b.Fatalf("Replace: %v (len %d, want %d)", err, len(got), len(text)+5000)
	}
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := Replace(text, old, repl); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkApplyPatch200Hunks50Files parses and plans a patch of 50
// updates with 4 hunks each against 50 in-memory files of 400 lines.
func BenchmarkApplyPatch200Hunks50Files(b *testing.B) {
	tree := MemFS{}
	var p strings.Builder
	p.WriteString("*** Begin Patch\n")
	for f := range 50 {
		name := fmt.Sprintf("pkg%02d/file.go", f)
		lines := benchLines(f*1000, 400)
		tree[name] = strings.Join(lines, "\n") + "\n"
		fmt.Fprintf(&p, "*** Update File: %s\n", name)
		for h := range 4 {
			at := 50 + h*100
			p.WriteString("@@\n")
			for _, l := range lines[at-3 : at] {
				p.WriteString(" " + l + "\n")
			}
			p.WriteString("-" + lines[at] + "\n")
			p.WriteString("+" + strings.Replace(lines[at], "compute", "evaluate", 1) + "\n")
			for _, l := range lines[at+1 : at+4] {
				p.WriteString(" " + l + "\n")
			}
		}
	}
	p.WriteString("*** End Patch\n")
	patch := p.String()
	plan, err := PlanPatch(patch, tree)
	if err != nil || len(plan.Files) != 50 || strings.Count(plan.Files[7].NewText, "evaluate") != 4 {
		b.Fatalf("plan: %v", err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := PlanPatch(patch, tree); err != nil {
			b.Fatal(err)
		}
	}
}
