package htmltext

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// check verifies the tree's links and caps, and returns its depth and
// number of nodes.
func check(t testing.TB, doc *Node) (depth, nodes int) {
	t.Helper()
	var walk func(n *Node, d int)
	walk = func(n *Node, d int) {
		nodes++
		depth = max(depth, d)
		if n.more != nil {
			t.Fatalf("text %q left unjoined", n.Data)
		}
		var prev *Node
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Parent != n || c.PrevSibling != prev {
				t.Fatalf("bad links at <%s> under <%s>", c.Tag, n.Tag)
			}
			if c.Type == DocumentNode || n.Type == TextNode {
				t.Fatalf("a %v under a %v", c.Type, n.Type)
			}
			if c.Type == TextNode && prev != nil && prev.Type == TextNode {
				t.Fatalf("two text nodes side by side: %q %q", prev.Data, c.Data)
			}
			prev = c
			walk(c, d+1)
		}
		if n.LastChild != prev {
			t.Fatalf("bad last child of <%s>", n.Tag)
		}
	}
	walk(doc, 0)
	return depth, nodes
}

func render(n *Node) string {
	var b strings.Builder
	var walk func(*Node)
	walk = func(n *Node) {
		switch n.Type {
		case TextNode:
			b.WriteString(n.Data)
		case ElementNode:
			b.WriteString("<" + n.Tag + ">")
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
		if n.Type == ElementNode {
			b.WriteString("</" + n.Tag + ">")
		}
	}
	walk(n)
	return b.String()
}

func TestParseCapsDepth(t *testing.T) {
	page := strings.Repeat("<div>", 5000) + "deep text" + strings.Repeat("</div>", 5000) + "after"
	doc := Parse(page)
	depth, _ := check(t, doc)
	if depth > MaxDepth+1 {
		t.Errorf("depth %d", depth)
	}
	if got := render(doc); !strings.Contains(got, "deep text</div>") || !strings.HasSuffix(got, "after</body></html>") {
		t.Errorf("text lost: …%s", got[max(len(got)-200, 0):])
	}
}

func TestParseCapsNodes(t *testing.T) {
	b := newBuilder(strings.Repeat("<br>x<p>y", 1000))
	b.maxNodes = 500
	b.run()
	_, nodes := check(t, b.doc)
	if nodes > 500+2 {
		t.Errorf("%d nodes", nodes)
	}
}

// TestParseWorkIsLinear counts the work of the tree builder (the
// elements its scans of the open elements and formatting elements
// visit) on pages built to be slow, at two sizes: eight times the page
// must be at most about eight times the work and the memory allocated
// (which would show text copied over and over). The depth cap is lowered
// to 64 for both sizes to be past it.
func TestParseWorkIsLinear(t *testing.T) {
	pages := map[string]func(n int) string{
		"nested divs":     func(n int) string { return strings.Repeat("<div>x", n) },
		"nested tables":   func(n int) string { return strings.Repeat("<table><tr><td>x", n) },
		"unclosed tables": func(n int) string { return strings.Repeat("<table>x", n) },
		"reopened formatting": func(n int) string {
			return "<p>" + strings.Repeat("<b>", 50) + strings.Repeat("<p>x", n)
		},
		"distinct formatting": func(n int) string {
			var b strings.Builder
			for i := range n {
				fmt.Fprintf(&b, "<i id=%d>", i)
			}
			return b.String() + strings.Repeat("<p>x", n)
		},
		"misnested": func(n int) string { return strings.Repeat("<b><div><i><p>x</b>y</i>", n) },
		"links":     func(n int) string { return strings.Repeat("<a href=x><div>y", n) },
		"end tags":  func(n int) string { return strings.Repeat("<div>", 60) + strings.Repeat("</span>", n) },
		"end formatting": func(n int) string {
			return strings.Repeat("<div>", 60) + strings.Repeat("<b>", 3) + strings.Repeat("</b></em>x", n)
		},
		"scoped ends": func(n int) string { return strings.Repeat("<span>", 60) + strings.Repeat("</p></li></dd>", n) },
		"body attrs": func(n int) string {
			var b strings.Builder
			for i := range n {
				fmt.Fprintf(&b, "<body a%d b%d>", i, i)
			}
			return b.String()
		},
		"text pieces":   func(n int) string { return strings.Repeat("abc<!---->", n) },
		"foster pieces": func(n int) string { return "<table>" + strings.Repeat("x<!----> <!---->", n) },
		"select":        func(n int) string { return "<table><tr><td>" + strings.Repeat("<select><option>x", n) },
		"svg":           func(n int) string { return strings.Repeat("<svg><g>", n) },
		"li":            func(n int) string { return strings.Repeat("<span>", 60) + strings.Repeat("<li>x", n) },
	}
	for name, page := range pages {
		t.Run(name, func(t *testing.T) {
			small, smallBytes := work(page(500))
			big, bigBytes := work(page(4000))
			if big > 10*max(small, 1000) {
				t.Errorf("work %d for 500, %d for 4000", small, big)
			}
			if bigBytes > 10*max(smallBytes, 64<<10) {
				t.Errorf("%d bytes allocated for 500, %d for 4000", smallBytes, bigBytes)
			}
		})
	}
}

// work is the builder's steps and the bytes it allocates for a page.
func work(page string) (steps int, bytes uint64) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b := newBuilder(page)
	b.maxDepth = 64
	b.run()
	runtime.ReadMemStats(&after)
	return b.steps + len(page), after.TotalAlloc - before.TotalAlloc
}
