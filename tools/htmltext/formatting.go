package htmltext

import "slices"

// The inline formatting elements (a, b, code, em...): a block that
// closes them reopens them, and a misnested end tag is repaired.

func (b *builder) pushFormatting(n *Node) {
	// At most three equal ones after the last boundary.
	same, first := 0, -1
	for i := len(b.afe) - 1; i >= 0 && b.afe[i] != nil; i-- {
		b.steps++
		b.steps += len(n.Attr)
		if e := b.afe[i]; e.Tag == n.Tag && sameAttrs(e.Attr, n.Attr) {
			same++
			first = i
		}
	}
	if same >= 3 {
		b.afe = slices.Delete(b.afe, first, first+1)
	}
	if len(b.afe) >= maxFormatting {
		b.afe = slices.Delete(b.afe, 0, 1)
	}
	b.afe = append(b.afe, n)
}

func sameAttrs(a, c []Attr) bool {
	if len(a) != len(c) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(c, x) {
			return false
		}
	}
	return true
}

func (b *builder) clearFormattingToMarker() {
	for len(b.afe) > 0 {
		n := b.afe[len(b.afe)-1]
		b.afe = b.afe[:len(b.afe)-1]
		if n == nil {
			return
		}
	}
}

// reconstruct reopens the formatting elements that a block closed.
func (b *builder) reconstruct() {
	if len(b.afe) == 0 {
		return
	}
	if e := b.afe[len(b.afe)-1]; e == nil || e.open {
		return
	}
	i := len(b.afe) - 1
	for i > 0 && b.afe[i-1] != nil && !b.afe[i-1].open {
		b.steps++
		i--
	}
	for ; i < len(b.afe); i++ {
		b.steps++
		e := b.afe[i]
		n := b.insert(token{name: e.Tag, attr: e.Attr}, e.ns)
		if n == nil {
			b.afe = b.afe[:i]
			return
		}
		b.afe[i] = n
	}
}

func (b *builder) lastFormatting(tag string) int {
	for i := len(b.afe) - 1; i >= 0 && b.afe[i] != nil; i-- {
		b.steps++
		if b.afe[i].Tag == tag {
			return i
		}
	}
	return -1
}

func (b *builder) removeFormatting(n *Node) {
	if i := slices.Index(b.afe, n); i >= 0 {
		b.afe = slices.Delete(b.afe, i, i+1)
	}
}

// adopt ends a formatting element that may be misnested ("<b><p>x</b>"):
// the standard's adoption agency, which moves the blocks opened inside
// it out and reopens it within them.
func (b *builder) adopt(tag string) {
	if cur := b.top(); cur.ns == nsHTML && cur.Tag == tag && slices.Index(b.afe, cur) < 0 {
		b.pop()
		return
	}
	for range 8 {
		fi := b.lastFormatting(tag)
		if fi < 0 {
			b.anyOtherEnd(tag)
			return
		}
		fe := b.afe[fi]
		si := b.indexOf(fe)
		if si < 0 {
			b.afe = slices.Delete(b.afe, fi, fi+1)
			return
		}
		if !b.elementInScope(fe) {
			return
		}
		var furthest *Node
		fbi := -1
		for i := si + 1; i < len(b.oe); i++ {
			b.steps++
			if isSpecial(b.oe[i]) {
				furthest, fbi = b.oe[i], i
				break
			}
		}
		if furthest == nil {
			b.truncate(si)
			b.afe = slices.Delete(b.afe, fi, fi+1)
			return
		}
		ancestor := b.oe[si-1]
		bookmark := fi
		node, last := furthest, furthest
		ni := fbi
		for inner := 1; ; inner++ {
			b.steps++
			ni--
			node = b.oe[ni]
			if node == fe {
				break
			}
			ai := slices.Index(b.afe, node)
			if inner > 3 && ai >= 0 {
				b.afe = slices.Delete(b.afe, ai, ai+1)
				if ai < bookmark {
					bookmark--
				}
				ai = -1
			}
			if ai < 0 {
				b.closed(node)
				b.oe = slices.Delete(b.oe, ni, ni+1)
				fbi--
				continue
			}
			clone := b.newElement(node.Tag, node.Attr, node.ns)
			b.afe[ai] = clone
			b.oe[ni] = clone
			node.open, clone.open = false, true
			node = clone
			if last == furthest {
				bookmark = ai + 1
			}
			if last.Parent != nil {
				last.Parent.removeChild(last)
			}
			node.appendChild(last)
			last = node
		}
		if last.Parent != nil {
			last.Parent.removeChild(last)
		}
		switch ancestor.Tag {
		case "table", "tbody", "tfoot", "thead", "tr":
			if ancestor.ns == nsHTML {
				b.fosterAppend(last)
				break
			}
			ancestor.appendChild(last)
		default:
			ancestor.appendChild(last)
		}
		clone := b.newElement(fe.Tag, fe.Attr, fe.ns)
		for c := furthest.FirstChild; c != nil; c = furthest.FirstChild {
			b.steps++
			furthest.removeChild(c)
			clone.appendChild(c)
		}
		furthest.appendChild(clone)
		if i := slices.Index(b.afe, fe); i >= 0 {
			b.afe = slices.Delete(b.afe, i, i+1)
			if i < bookmark {
				bookmark--
			}
		}
		b.afe = slices.Insert(b.afe, min(bookmark, len(b.afe)), clone)
		b.removeFromStack(fe)
		fbi = b.indexOf(furthest)
		b.oe = slices.Insert(b.oe, fbi+1, clone)
		clone.open = true
	}
}

// fosterAppend puts n before the last open table.
func (b *builder) fosterAppend(n *Node) {
	for i := len(b.oe) - 1; i > 0; i-- {
		b.steps++
		if t := b.oe[i]; t.ns == nsHTML && t.Tag == "table" {
			if t.Parent != nil {
				t.Parent.insertBefore(n, t)
			} else {
				b.oe[i-1].appendChild(n)
			}
			return
		}
	}
	b.oe[0].appendChild(n)
}

// anyOtherEnd closes the innermost element named tag, unless an element
// with rules of its own is open inside it.
func (b *builder) anyOtherEnd(tag string) {
	for i := len(b.oe) - 1; i > 0; i-- {
		b.steps++
		n := b.oe[i]
		if n.ns == nsHTML && n.Tag == tag {
			b.impliedEnd(tag)
			b.truncate(i)
			return
		}
		if isSpecial(n) {
			return
		}
	}
}
