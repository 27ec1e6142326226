package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cline-ls/cline-ls/tools/htmltext"
)

// fetchMaxRedirects bounds the redirects one fetch follows.
const fetchMaxRedirects = 5

type fetchArgs struct {
	Requests []fetchRequest `json:"requests"`
}

type fetchRequest struct {
	URL    string `json:"url"`
	Prompt string `json:"prompt"`
}

func (e *wsEnv) buildFetchWebContent(a fetchArgs) (Invocation, error) {
	var probs []Problem
	urls := make([]*url.URL, len(a.Requests))
	for i, r := range a.Requests {
		u, why := fetchParseURL(r.URL)
		if why != "" {
			probs = append(probs, Problem{Path: fmt.Sprintf("requests[%d].url", i), Message: why})
		}
		urls[i] = u
	}
	if len(probs) > 0 {
		return nil, &ValidationError{Problems: probs}
	}
	return &fetchCall{env: e, requests: a.Requests, urls: urls}, nil
}

// fetchParseURL accepts absolute http and https URLs only: file: and
// other schemes would read the machine rather than the web.
func fetchParseURL(raw string) (*url.URL, string) {
	u, err := url.Parse(strings.TrimSpace(raw))
	switch {
	case err != nil:
		return nil, fmt.Sprintf("%q is not a URL: %v", raw, errors.Unwrap(err))
	case u.Scheme == "":
		return nil, fmt.Sprintf("%q has no scheme; give a full URL such as https://%s", raw, strings.TrimPrefix(raw, "//"))
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Sprintf("%q: only http and https URLs can be fetched, not %s:", raw, u.Scheme)
	case u.Host == "":
		return nil, fmt.Sprintf("%q names no host", raw)
	}
	return u, ""
}

type fetchCall struct {
	env      *wsEnv
	requests []fetchRequest
	urls     []*url.URL
}

// URLs returns the pages the call fetches (Fetcher).
func (c *fetchCall) URLs() []*url.URL {
	out := make([]*url.URL, len(c.urls))
	for i, u := range c.urls {
		cp := *u
		out[i] = &cp
	}
	return out
}

// Describe names the pages.
func (c *fetchCall) Describe(context.Context) Description {
	var names []string
	for _, u := range c.urls {
		names = append(names, u.Host+strings.TrimSuffix(u.EscapedPath(), "/"))
	}
	return Description{Kind: KindFetch, Title: "Fetch " + wsTitleList(names)}
}

// Execute fetches the pages one after another; the call is an error only
// when none could be fetched.
func (c *fetchCall) Execute(ctx context.Context, _ ExecOptions) (Result, error) {
	share := MaxToolOutput / len(c.requests)
	var b strings.Builder
	failed := 0
	for i, r := range c.requests {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		if i > 0 {
			b.WriteString("\n")
		}
		text, ok := c.fetchOne(ctx, c.urls[i], r.Prompt, share)
		if !ok {
			failed++
		}
		b.WriteString(text)
	}
	return Result{Content: b.String(), IsError: failed == len(c.requests)}, nil
}

func (c *fetchCall) client() *http.Client {
	client := http.DefaultClient
	if c.env.cfg.httpClient != nil {
		client = c.env.cfg.httpClient
	}
	if client.CheckRedirect != nil {
		return client
	}
	withPolicy := *client
	withPolicy.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= fetchMaxRedirects {
			return fmt.Errorf("more than %d redirects", fetchMaxRedirects)
		}
		if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
			return fmt.Errorf("a redirect to a %s: URL, which is not fetched", req.URL.Scheme)
		}
		return nil
	}
	return &withPolicy
}

// fetchOne fetches one page and renders it as text of at most budget
// bytes; ok is false for a failure.
func (c *fetchCall) fetchOne(ctx context.Context, u *url.URL, prompt string, budget int) (string, bool) {
	cfg := c.env.cfg
	fail := func(format string, args ...any) (string, bool) {
		return fmt.Sprintf("URL: %s — error: %s\n", u, fmt.Sprintf(format, args...)), false
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.fetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return fail("%v", err)
	}
	req.Header.Set("User-Agent", "cline-ls (coding agent; fetch_web_content)")
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.5")
	resp, err := c.client().Do(req)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fail("no complete answer within %s", cfg.fetchTimeout)
		}
		return fail("%v", fetchErrText(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, cfg.fetchMaxBytes+1))
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fail("the page did not finish loading within %s", cfg.fetchTimeout)
		}
		return fail("reading the page: %v", err)
	}
	cut := int64(len(body)) > cfg.fetchMaxBytes
	if cut {
		body = body[:cfg.fetchMaxBytes]
	}
	final := resp.Request.URL
	ctype := resp.Header.Get("Content-Type")
	if ctype == "" {
		ctype = http.DetectContentType(body)
	}
	media, _, _ := mime.ParseMediaType(ctype)

	var title, text string
	switch {
	case media == "text/html" || media == "application/xhtml+xml":
		text = htmltext.Decode(body, ctype)
		title, text = fetchHTMLText(text, final)
	case fetchIsText(media, body):
		text = htmltext.Decode(body, ctype)
	default:
		return fmt.Sprintf("URL: %s (HTTP %d, %s, %s) — binary content, not shown as text\n",
			final, resp.StatusCode, media, wsSize(int64(len(body)))), resp.StatusCode < 400
	}

	var b strings.Builder
	fmt.Fprintf(&b, "URL: %s (HTTP %d, %s, %s)\n", final, resp.StatusCode, media, wsSize(int64(len(body))))
	if title != "" {
		fmt.Fprintf(&b, "Title: %s\n", title)
	}
	if resp.StatusCode >= 400 {
		fmt.Fprintf(&b, "The server answered %s.\n", resp.Status)
		if text = strings.TrimSpace(text); text != "" {
			b.WriteString("\n" + wsCutMiddle(text, 1000) + "\n")
		}
		return b.String(), false
	}
	if cut {
		fmt.Fprintf(&b, "[Only the first %s of the page were read.]\n", wsSize(cfg.fetchMaxBytes))
	}
	b.WriteString("\n")
	b.WriteString(fetchSelect(strings.TrimSpace(text), prompt, max(budget-b.Len(), 1000)))
	b.WriteString("\n")
	return b.String(), true
}

// fetchErrText shortens the client's error: it repeats the method and URL
// that the result already shows.
func fetchErrText(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// fetchIsText reports media types that are text however they are
// labelled, and unlabelled content that sniffs as text.
func fetchIsText(media string, body []byte) bool {
	switch {
	case strings.HasPrefix(media, "text/"),
		media == "application/json", media == "application/xml", media == "application/javascript",
		media == "application/x-yaml", media == "application/yaml", media == "application/toml",
		strings.HasSuffix(media, "+json"), strings.HasSuffix(media, "+xml"):
		return true
	}
	return utf8.Valid(body[:min(len(body), 8<<10)]) && !bytes.ContainsRune(body[:min(len(body), 8<<10)], 0) &&
		(media == "" || media == "application/octet-stream")
}

// fetchHTMLText turns an HTML page into readable text, markdown-like:
// headings marked with #, list items with -, code in fences, links as
// "text (URL)". Scripts, styles, navigation, forms and page furniture
// (nav, aside, footer, and the page header outside an article) are left
// out; when the page has a <main> or <article>, only that is read.
func fetchHTMLText(page string, base *url.URL) (title, text string) {
	return fetchDocText(htmltext.Parse(page), base)
}

// fetchDocText is fetchHTMLText on a parsed page.
func fetchDocText(doc *htmltext.Node, base *url.URL) (title, text string) {
	if t := fetchFind(doc, func(n *htmltext.Node) bool { return n.Tag == "title" }); t != nil {
		title = strings.Join(strings.Fields(fetchPlain(t)), " ")
	}
	root := fetchFind(doc, func(n *htmltext.Node) bool { return n.Tag == "main" })
	if root == nil {
		root = fetchLongestArticle(doc)
	}
	w := &fetchWriter{base: base, keepHeader: root != nil}
	if root == nil {
		root = fetchFind(doc, func(n *htmltext.Node) bool { return n.Tag == "body" })
	}
	if root == nil {
		root = doc
	}
	w.walk(root)
	return title, w.text()
}

func fetchFind(n *htmltext.Node, ok func(*htmltext.Node) bool) *htmltext.Node {
	if n.Type == htmltext.ElementNode && ok(n) {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if f := fetchFind(c, ok); f != nil {
			return f
		}
	}
	return nil
}

// fetchLongestArticle is the <article> with the most text, the first of
// those with as much, when there are several (a blog's index). Articles
// may nest, so their lengths are summed in one pass, not read again for
// each.
func fetchLongestArticle(doc *htmltext.Node) *htmltext.Node {
	var best *htmltext.Node
	bestLen, bestAt, at := 0, 0, 0
	var plainLen func(*htmltext.Node) int
	plainLen = func(n *htmltext.Node) int {
		switch {
		case n.Type == htmltext.TextNode:
			return len(n.Data)
		case n.Type == htmltext.ElementNode && (n.Tag == "script" || n.Tag == "style"):
			return 0
		}
		at++
		pos, l := at, 0
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			l += plainLen(c)
		}
		if n.Type == htmltext.ElementNode && n.Tag == "article" && (l > bestLen || l == bestLen && l > 0 && pos < bestAt) {
			best, bestLen, bestAt = n, l, pos
		}
		return l
	}
	plainLen(doc)
	return best
}

// fetchPlain is the text inside n, scripts and styles left out.
func fetchPlain(n *htmltext.Node) string {
	var b strings.Builder
	var walk func(*htmltext.Node)
	walk = func(n *htmltext.Node) {
		switch {
		case n.Type == htmltext.TextNode:
			b.WriteString(n.Data)
		case n.Type == htmltext.ElementNode && (n.Tag == "script" || n.Tag == "style"):
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// fetchWriter renders HTML nodes as text.
type fetchWriter struct {
	base       *url.URL
	keepHeader bool // inside <main> or <article>, <header> is the article's
	b          strings.Builder
	newlines   int  // line breaks owed before the next text
	space      bool // a space is owed before the next word
	pre        int  // depth of <pre>
	lists      []fetchList
}

type fetchList struct {
	ordered bool
	n       int
}

// block asks for a blank line (n = 2) or a line break (n = 1) before
// what comes next.
func (w *fetchWriter) block(n int) {
	if w.b.Len() > 0 {
		w.newlines = max(w.newlines, n)
	}
	w.space = false
}

func (w *fetchWriter) write(s string) {
	if s == "" {
		return
	}
	if w.newlines > 0 {
		w.b.WriteString(strings.Repeat("\n", w.newlines))
		w.newlines = 0
	} else if w.space && w.b.Len() > 0 {
		w.b.WriteByte(' ')
	}
	w.space = false
	w.b.WriteString(s)
}

func (w *fetchWriter) text() string {
	return strings.TrimSpace(w.b.String())
}

// skipped reports elements that hold no content worth reading.
func (w *fetchWriter) skipped(n *htmltext.Node) bool {
	switch n.Tag {
	case "script", "style", "noscript", "template", "svg", "canvas", "iframe",
		"object", "embed", "nav", "footer", "aside", "form", "button", "select",
		"input", "textarea", "head", "dialog":
		return true
	case "header":
		return !w.keepHeader
	}
	for _, a := range n.Attr {
		switch {
		case a.Key == "hidden", a.Key == "aria-hidden" && a.Val == "true":
			return true
		case a.Key == "role" && (a.Val == "navigation" || a.Val == "banner" || a.Val == "contentinfo"):
			return true
		}
	}
	return false
}

func (w *fetchWriter) walk(n *htmltext.Node) {
	switch n.Type {
	case htmltext.TextNode:
		w.textNode(n.Data)
		return
	case htmltext.ElementNode:
	case htmltext.DocumentNode:
		w.children(n)
		return
	default:
		return
	}
	if w.skipped(n) {
		return
	}
	switch n.Tag {
	case "h1", "h2", "h3", "h4", "h5", "h6":
		w.block(2)
		w.write(strings.Repeat("#", int(n.Tag[1]-'0')))
		w.space = true
		w.children(n)
		w.block(2)
	case "p", "div", "section", "article", "main", "header", "figure", "blockquote",
		"table", "dl", "address", "details", "fieldset":
		w.block(2)
		w.children(n)
		w.block(2)
	case "tr", "dt", "dd", "figcaption", "summary", "caption":
		w.block(1)
		w.children(n)
		w.block(1)
	case "td", "th":
		for p := n.PrevSibling; p != nil; p = p.PrevSibling {
			if p.Type == htmltext.ElementNode {
				w.write("|")
				w.space = true
				break
			}
		}
		w.space = true
		w.children(n)
		w.space = true
	case "br":
		w.block(1)
	case "hr":
		w.block(2)
		w.write("---")
		w.block(2)
	case "ul", "ol":
		w.lists = append(w.lists, fetchList{ordered: n.Tag == "ol"})
		w.block(1)
		w.children(n)
		w.lists = w.lists[:len(w.lists)-1]
		w.block(2)
	case "li":
		w.block(1)
		indent := strings.Repeat("  ", max(len(w.lists)-1, 0))
		marker := "-"
		if len(w.lists) > 0 && w.lists[len(w.lists)-1].ordered {
			l := &w.lists[len(w.lists)-1]
			l.n++
			marker = fmt.Sprintf("%d.", l.n)
		}
		w.write(indent + marker)
		w.space = true
		w.children(n)
		w.block(1)
	case "pre":
		w.block(2)
		w.write("```")
		w.newlines = 1
		w.pre++
		w.children(n)
		w.pre--
		w.newlines = 0
		if !strings.HasSuffix(w.b.String(), "\n") {
			w.b.WriteString("\n")
		}
		w.b.WriteString("```")
		w.block(2)
	case "code":
		if w.pre > 0 {
			w.children(n)
			return
		}
		inner := strings.Join(strings.Fields(fetchPlain(n)), " ")
		if inner != "" {
			w.write("`" + inner + "`")
		}
	case "a":
		start := w.b.Len()
		w.children(n)
		href := w.link(n.AttrVal("href"))
		if href != "" && w.b.Len() > start && !strings.HasSuffix(w.b.String(), href) {
			w.space = true
			w.write("(" + href + ")")
		}
	case "img":
		if alt := strings.TrimSpace(n.AttrVal("alt")); alt != "" {
			w.write("[image: " + strings.Join(strings.Fields(alt), " ") + "]")
		}
	default:
		w.children(n)
	}
}

func (w *fetchWriter) children(n *htmltext.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		w.walk(c)
	}
}

func (w *fetchWriter) textNode(s string) {
	if w.pre > 0 {
		if w.newlines > 0 {
			w.b.WriteString(strings.Repeat("\n", w.newlines))
			w.newlines = 0
		}
		w.b.WriteString(s)
		return
	}
	if s != "" && unicode.IsSpace(rune(s[0])) {
		w.space = true
	}
	for _, word := range strings.Fields(s) {
		w.write(word)
		w.space = true
	}
	if s != "" && !unicode.IsSpace(rune(s[len(s)-1])) {
		w.space = false
	}
}

// link resolves an href against the page and keeps web links only.
func (w *fetchWriter) link(href string) string {
	href = strings.TrimSpace(href)
	if href == "" || strings.HasPrefix(href, "#") {
		return ""
	}
	u, err := url.Parse(href)
	if err != nil {
		return ""
	}
	if w.base != nil {
		u = w.base.ResolveReference(u)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return ""
	}
	return u.String()
}

// fetchSelect fits text into budget bytes. Text over it keeps its
// opening, then the paragraphs that mention the most words of the prompt,
// in page order; without such words, or with none found, it is cut in
// the middle like other long output.
func fetchSelect(text, prompt string, budget int) string {
	if len(text) <= budget {
		return text
	}
	keys := fetchKeywords(prompt)
	blocks := strings.Split(text, "\n\n")
	scores := make([]int, len(blocks))
	hits := false
	for i, bl := range blocks {
		lower := strings.ToLower(bl)
		for _, k := range keys {
			if strings.Contains(lower, k) {
				scores[i]++
				hits = true
			}
		}
	}
	if !hits {
		return wsCutMiddle(text, budget)
	}
	note := fmt.Sprintf("[The page has %d characters; shown are its start and the parts that mention %s.]\n\n",
		utf8.RuneCountInString(text), strings.Join(keys, ", "))
	left := budget - len(note)
	keep := make([]bool, len(blocks))
	// The opening: title, summary, what the page is.
	for i := 0; i < len(blocks) && len(blocks[i])+2 <= left && left > budget*7/8; i++ {
		keep[i] = true
		left -= len(blocks[i]) + 2
	}
	order := make([]int, len(blocks))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return scores[b] - scores[a] })
	take := func(i int) {
		if i >= 0 && i < len(blocks) && !keep[i] && len(blocks[i])+8 <= left {
			keep[i] = true
			left -= len(blocks[i]) + 8
		}
	}
	for _, i := range order {
		if scores[i] == 0 {
			break
		}
		take(i)
	}
	// Then the paragraphs around each match, for context.
	for _, i := range order {
		if scores[i] == 0 {
			break
		}
		take(i - 1)
		take(i + 1)
	}
	var b strings.Builder
	b.WriteString(note)
	gap := false
	for i, bl := range blocks {
		if !keep[i] {
			gap = true
			continue
		}
		if b.Len() > len(note) {
			b.WriteString("\n\n")
		}
		if gap && i > 0 {
			b.WriteString("[…]\n\n")
		}
		gap = false
		b.WriteString(bl)
	}
	if gap {
		b.WriteString("\n\n[…]")
	}
	return b.String()
}

// fetchKeywords picks the words of a prompt worth looking for.
func fetchKeywords(prompt string) []string {
	stop := []string{"the", "and", "for", "with", "that", "this", "what", "how", "does", "from", "are",
		"about", "which", "page", "find", "look", "looking", "information", "get", "use", "using", "into",
		"its", "all", "any", "can", "you", "your", "show", "tell", "me", "out", "there", "their", "when",
		"where", "why", "who", "was", "were", "has", "have", "docs", "documentation", "details", "list"}
	var keys []string
	for _, w := range strings.FieldsFunc(strings.ToLower(prompt), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '-' && r != '.'
	}) {
		w = strings.Trim(w, ".-")
		if utf8.RuneCountInString(w) >= 3 && !slices.Contains(stop, w) && !slices.Contains(keys, w) {
			keys = append(keys, w)
		}
	}
	return keys
}
