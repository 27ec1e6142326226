package htmltext

import (
	"slices"
	"strings"
)

// Tables, and the select element, whose rules change inside them.

func (b *builder) clearTo(tags ...string) {
	for {
		n := b.top()
		if n == b.html || n.ns == nsHTML && (n.Tag == "template" || slices.Contains(tags, n.Tag)) {
			return
		}
		b.pop()
	}
}

func (b *builder) inTable(t token) {
	switch t.typ {
	case textToken:
		s := strings.ReplaceAll(t.data, "\x00", "")
		if cur := b.top(); cur.ns == nsHTML {
			switch cur.Tag {
			case "table", "tbody", "tfoot", "thead", "tr":
				if strings.Trim(s, spaces) == "" {
					b.insertText(s)
					return
				}
			}
		}
	case startTagToken:
		switch t.name {
		case "caption":
			b.clearTo("table")
			b.afe = append(b.afe, nil)
			b.insert(t, nsHTML)
			return
		case "colgroup":
			b.clearTo("table")
			b.insert(t, nsHTML)
			return
		case "col":
			b.clearTo("table")
			if b.insert(token{name: "colgroup"}, nsHTML) != nil {
				b.process(t)
			}
			return
		case "tbody", "tfoot", "thead":
			b.clearTo("table")
			b.insert(t, nsHTML)
			return
		case "td", "th", "tr":
			b.clearTo("table")
			if b.insert(token{name: "tbody"}, nsHTML) != nil {
				b.process(t)
			}
			return
		case "table":
			if b.inScope(tableScope, "table") {
				b.popTag("table")
				b.process(t)
			}
			return
		case "style", "script":
			b.rawText(t, false)
			return
		case "template":
			b.startInBody(t)
			return
		case "input":
			if strings.EqualFold(attrVal(t.attr, "type"), "hidden") {
				b.insertVoid(t)
				return
			}
		case "form":
			if b.form == nil && b.templates == 0 {
				if n := b.insert(t, nsHTML); n != nil {
					b.form = n
					b.pop()
				}
			}
			return
		}
	case endTagToken:
		switch t.name {
		case "table":
			if b.inScope(tableScope, "table") {
				b.popTag("table")
			}
			return
		case "body", "caption", "col", "colgroup", "html", "tbody", "td", "tfoot", "th", "thead", "tr":
			return
		case "template":
			b.endInBody(t)
			return
		}
	}
	b.foster = true
	b.inBody(t)
	b.foster = false
}

func (b *builder) inTableBody(t token) {
	switch t.typ {
	case startTagToken:
		switch t.name {
		case "tr":
			b.clearTo("tbody", "tfoot", "thead")
			b.insert(t, nsHTML)
			return
		case "th", "td":
			b.clearTo("tbody", "tfoot", "thead")
			if b.insert(token{name: "tr"}, nsHTML) != nil {
				b.process(t)
			}
			return
		case "caption", "col", "colgroup", "tbody", "tfoot", "thead":
			if b.inScope(tableScope, "tbody", "thead", "tfoot") {
				b.clearTo("tbody", "tfoot", "thead")
				b.pop()
				b.process(t)
			}
			return
		}
	case endTagToken:
		switch t.name {
		case "tbody", "tfoot", "thead":
			if b.inScope(tableScope, t.name) {
				b.clearTo("tbody", "tfoot", "thead")
				b.pop()
			}
			return
		case "table":
			if b.inScope(tableScope, "tbody", "thead", "tfoot") {
				b.clearTo("tbody", "tfoot", "thead")
				b.pop()
				b.process(t)
			}
			return
		case "body", "caption", "col", "colgroup", "html", "td", "th", "tr":
			return
		}
	}
	b.inTable(t)
}

func (b *builder) inRow(t token) {
	switch t.typ {
	case startTagToken:
		switch t.name {
		case "th", "td":
			b.clearTo("tr")
			if b.insert(t, nsHTML) != nil {
				b.afe = append(b.afe, nil)
			}
			return
		case "caption", "col", "colgroup", "tbody", "tfoot", "thead", "tr":
			if b.inScope(tableScope, "tr") {
				b.clearTo("tr")
				b.pop()
				b.process(t)
			}
			return
		}
	case endTagToken:
		switch t.name {
		case "tr":
			if b.inScope(tableScope, "tr") {
				b.clearTo("tr")
				b.pop()
			}
			return
		case "table":
			if b.inScope(tableScope, "tr") {
				b.clearTo("tr")
				b.pop()
				b.process(t)
			}
			return
		case "tbody", "tfoot", "thead":
			if b.inScope(tableScope, t.name) && b.inScope(tableScope, "tr") {
				b.clearTo("tr")
				b.pop()
				b.process(t)
			}
			return
		case "body", "caption", "col", "colgroup", "html", "td", "th":
			return
		}
	}
	b.inTable(t)
}

func (b *builder) closeCell() {
	b.impliedEnd("")
	b.popTag("td", "th")
	b.clearFormattingToMarker()
}

func (b *builder) inCell(t token) {
	switch t.typ {
	case startTagToken:
		switch t.name {
		case "caption", "col", "colgroup", "tbody", "td", "tfoot", "th", "thead", "tr":
			if b.inScope(tableScope, "td", "th") {
				b.closeCell()
				b.process(t)
			}
			return
		}
	case endTagToken:
		switch t.name {
		case "td", "th":
			if b.inScope(tableScope, t.name) {
				b.impliedEnd("")
				b.popTag(t.name)
				b.clearFormattingToMarker()
			}
			return
		case "body", "caption", "col", "colgroup", "html":
			return
		case "table", "tbody", "tfoot", "thead", "tr":
			if b.inScope(tableScope, t.name) {
				b.closeCell()
				b.process(t)
			}
			return
		}
	}
	b.inBody(t)
}

func (b *builder) inCaption(t token) {
	closeCaption := func() bool {
		if !b.inScope(tableScope, "caption") {
			return false
		}
		b.impliedEnd("")
		b.popTag("caption")
		b.clearFormattingToMarker()
		return true
	}
	switch t.typ {
	case startTagToken:
		switch t.name {
		case "caption", "col", "colgroup", "tbody", "td", "tfoot", "th", "thead", "tr":
			if closeCaption() {
				b.process(t)
			}
			return
		}
	case endTagToken:
		switch t.name {
		case "caption":
			closeCaption()
			return
		case "table":
			if closeCaption() {
				b.process(t)
			}
			return
		case "body", "col", "colgroup", "html", "tbody", "td", "tfoot", "th", "thead", "tr":
			return
		}
	}
	b.inBody(t)
}

func (b *builder) inColumnGroup(t token) {
	cur := b.top()
	switch t.typ {
	case textToken:
		s := t.data
		ws := len(s) - len(strings.TrimLeft(s, spaces))
		b.insertText(s[:ws])
		if s = s[ws:]; s == "" {
			return
		}
		t.data = s
	case startTagToken:
		switch t.name {
		case "col":
			b.insertVoid(t)
			return
		case "template":
			b.startInBody(t)
			return
		}
	case endTagToken:
		switch t.name {
		case "colgroup":
			if cur.Tag == "colgroup" {
				b.pop()
			}
			return
		case "col":
			return
		case "template":
			b.endInBody(t)
			return
		}
	}
	if cur.ns == nsHTML && cur.Tag == "colgroup" {
		b.pop()
		b.process(t)
	}
}

func (b *builder) inSelect(t token) {
	cur := b.top()
	switch t.typ {
	case textToken:
		b.insertText(strings.ReplaceAll(t.data, "\x00", ""))
	case startTagToken:
		switch t.name {
		case "option":
			if cur.Tag == "option" {
				b.pop()
			}
			b.insert(t, nsHTML)
		case "optgroup":
			if cur.Tag == "option" {
				b.pop()
			}
			if b.top().Tag == "optgroup" {
				b.pop()
			}
			b.insert(t, nsHTML)
		case "hr":
			if cur.Tag == "option" {
				b.pop()
			}
			if b.top().Tag == "optgroup" {
				b.pop()
			}
			b.insertVoid(t)
		case "select":
			if b.inScope(selectScope, "select") {
				b.popTag("select")
			}
		case "input", "keygen", "textarea":
			if b.inScope(selectScope, "select") {
				b.popTag("select")
				b.process(t)
			}
		case "script", "template":
			b.startInBody(t)
		case "caption", "table", "tbody", "tfoot", "thead", "tr", "td", "th":
			if b.mode() == inSelectInTable {
				b.popTag("select")
				b.process(t)
			}
		}
	case endTagToken:
		switch t.name {
		case "optgroup":
			if cur.Tag == "option" && len(b.oe) > 2 && b.oe[len(b.oe)-2].Tag == "optgroup" {
				b.pop()
			}
			if b.top().Tag == "optgroup" {
				b.pop()
			}
		case "option":
			if cur.Tag == "option" {
				b.pop()
			}
		case "select":
			if b.inScope(selectScope, "select") {
				b.popTag("select")
			}
		case "template":
			b.endInBody(t)
		case "caption", "table", "tbody", "tfoot", "thead", "tr", "td", "th":
			if b.mode() == inSelectInTable && b.inScope(tableScope, t.name) {
				b.popTag("select")
				b.process(t)
			}
		}
	}
}
