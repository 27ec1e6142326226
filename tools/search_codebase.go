package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/cline-ls/cline-ls/tools/search"
	"github.com/cline-ls/cline-ls/workspace"
)

const (
	// searchMaxResults is how many matches one call shows, shared among
	// its queries.
	searchMaxResults = 300
	// searchMaxLine cuts long matched lines to a window around the match.
	searchMaxLine = 500
)

// OpenBufferLister is implemented by Files that know which files are
// open in the editor (absolute paths). search_codebase then searches
// those files' buffer text, read through Files.Read, instead of what is
// saved on disk; other Files are searched on disk only.
type OpenBufferLister interface {
	OpenBuffers() []string
}

type searchCodebaseArgs struct {
	Queries     []string `json:"queries"`
	Path        string   `json:"path"`
	FilePattern string   `json:"file_pattern"`
}

func (e *wsEnv) buildSearchCodebase(a searchCodebaseArgs) (Invocation, error) {
	var probs []Problem
	for i, q := range a.Queries {
		if err := search.CheckQuery(i, q); err != nil {
			msg := err.Error()
			var qe *search.QueryError
			if errors.As(err, &qe) {
				msg = fmt.Sprintf("%q is %s", q, strings.TrimPrefix(qe.Reason, "the query is "))
			}
			probs = append(probs, Problem{Path: fmt.Sprintf("queries[%d]", i), Message: msg})
		}
	}
	if a.FilePattern != "" && !doublestar.ValidatePattern(a.FilePattern) {
		probs = append(probs, Problem{Path: "file_pattern",
			Message: fmt.Sprintf("%q is not a valid glob; use patterns such as *.go, src/**/*.ts or *.{js,jsx}", a.FilePattern)})
	}
	if len(probs) > 0 {
		return nil, &ValidationError{Problems: probs}
	}
	p := a.Path
	if strings.TrimSpace(p) == "" {
		p = "."
	}
	abs, err := e.files.Resolve(p)
	return &searchCodebaseCall{env: e, args: a, root: abs, err: err}, nil
}

type searchCodebaseCall struct {
	env  *wsEnv
	args searchCodebaseArgs
	root string
	err  error
}

// Describe names the queries and where they look.
func (c *searchCodebaseCall) Describe(context.Context) Description {
	var qs []string
	for _, q := range c.args.Queries {
		qs = append(qs, "`"+q+"`")
	}
	d := Description{Kind: KindSearch, Title: "Search " + wsTitleList(qs)}
	if c.err == nil {
		d.Title += " in " + searchPlace(c.env.files.Display(c.root))
		d.Locations = []Location{{Path: c.root}}
	}
	if c.args.FilePattern != "" {
		d.Title += " (" + c.args.FilePattern + ")"
	}
	return d
}

// Execute searches and formats the matches, grep style with a line of
// context on each side, grouped by query and file.
func (c *searchCodebaseCall) Execute(ctx context.Context, _ ExecOptions) (Result, error) {
	if c.err != nil {
		return Errorf("%v", c.err), nil
	}
	files := c.env.files
	where := searchPlace(files.Display(c.root))
	disk, err := files.Disk()
	if err != nil {
		return Errorf("The search failed: %s", readFilesErrText(err)), nil
	}
	within, _, err := disk.Folder(c.root)
	if err != nil {
		return Errorf("The search failed: %s", readFilesErrText(err)), nil
	}
	opts := search.Options{
		Root:         c.root,
		Within:       within,
		Queries:      c.args.Queries,
		Glob:         c.args.FilePattern,
		Ignored:      files.Ignored,
		Context:      1,
		MaxResults:   searchMaxResults,
		MaxLineBytes: searchMaxLine,
	}
	// A folder the rules hide is searched when asked for by name, with
	// the rules off inside it, since all of it would be hidden.
	bypass := files.Ignored(c.root, true)
	if bypass {
		opts.Ignored = nil
	}
	if lister, ok := files.(OpenBufferLister); ok {
		opts.Overlay = c.openBuffers(ctx, lister)
	}
	res, err := search.Search(ctx, opts)
	switch {
	case ctx.Err() != nil:
		return Result{}, ctx.Err()
	case errors.Is(err, fs.ErrNotExist):
		return Errorf("Not found: %s. Give a folder or file inside the workspace, or leave path out to search everything.", where), nil
	case err != nil:
		return Errorf("The search failed: %s", readFilesErrText(err)), nil
	}

	out := c.format(res, where)
	if bypass {
		out += "[This folder is itself excluded by .gitignore or .clineignore; it was searched because you asked for it, with those rules off inside it.]\n"
	}
	return Result{Content: wsCutMiddle(out, MaxToolOutput)}, nil
}

// openBuffers reads the open editor buffers under the search root.
func (c *searchCodebaseCall) openBuffers(ctx context.Context, lister OpenBufferLister) map[string][]byte {
	overlay := map[string][]byte{}
	for _, abs := range lister.OpenBuffers() {
		if abs != c.root && !strings.HasPrefix(abs, c.root+string(filepath.Separator)) {
			continue
		}
		if ft, err := c.env.files.Read(ctx, abs); err == nil && ft.Exists {
			overlay[abs] = []byte(ft.Text)
		}
	}
	return overlay
}

func (c *searchCodebaseCall) format(res *search.Result, where string) string {
	counts := make([]int, len(res.Queries))
	for i, q := range res.Queries {
		counts[i] = len(q.Matches)
	}
	shares := searchShares(counts, searchMaxResults)
	files := c.env.files
	scope := where
	if c.args.FilePattern != "" {
		scope += " (" + c.args.FilePattern + ")"
	}

	var b strings.Builder
	for i, q := range res.Queries {
		ms := q.Matches[:shares[i]]
		complete := q.Complete && len(ms) == len(q.Matches)
		if len(res.Queries) > 1 {
			b.WriteString("## ")
		}
		fmt.Fprintf(&b, "`%s`: %s", q.Query, searchCount(q.Matches, complete))
		if !complete {
			fmt.Fprintf(&b, " (showing the first %d, in path order: narrow path or file_pattern, or make the query more specific, to see others)", len(ms))
		}
		b.WriteString("\n")
		searchFormatMatches(&b, ms, files.Display)
		if i < len(res.Queries)-1 {
			b.WriteString("\n")
		}
	}
	fmt.Fprintf(&b, "\nSearched %s in %s", plural(res.Searched, "file"), scope)
	var skipped []string
	if res.Binary > 0 {
		skipped = append(skipped, plural(res.Binary, "binary file"))
	}
	if res.Large > 0 {
		skipped = append(skipped, fmt.Sprintf("%s over %s", plural(res.Large, "file"), wsSize(search.DefaultMaxFileBytes)))
	}
	if res.Minified > 0 {
		skipped = append(skipped, plural(res.Minified, "minified file"))
	}
	if res.Unreadable > 0 {
		skipped = append(skipped, fmt.Sprintf("%d unreadable", res.Unreadable))
	}
	if res.TooDeep > 0 {
		skipped = append(skipped, fmt.Sprintf("%s at %d levels deep, not entered (the search stops at that depth)", plural(res.TooDeep, "folder"), workspace.MaxWalkDepth))
	}
	if res.Stopped {
		skipped = append(skipped, fmt.Sprintf("everything after the first %d entries (the search visits no more)", workspace.MaxWalkEntries))
	}
	if len(skipped) > 0 {
		b.WriteString("; skipped " + strings.Join(skipped, ", "))
	}
	b.WriteString(".\n")
	return b.String()
}

// searchPlace names the folder or file searched.
func searchPlace(display string) string {
	if display == "." || display == "" {
		return "the workspace folder"
	}
	return display
}

// searchCount says how many matches a query has in how many files.
func searchCount(ms []search.Match, complete bool) string {
	if len(ms) == 0 {
		return "no matches"
	}
	nFiles := 0
	for i, m := range ms {
		if i == 0 || m.Path != ms[i-1].Path {
			nFiles++
		}
	}
	n := fmt.Sprintf("%d matches", len(ms))
	if len(ms) == 1 {
		n = "1 match"
	}
	if !complete {
		n = "at least " + n
	}
	return n + " in " + plural(nFiles, "file")
}

// searchFormatMatches writes matches grouped by file, grep style:
// "12:text" for a matching line, "11-text" for context, "--" between
// groups of lines that are not adjacent.
func searchFormatMatches(b *strings.Builder, ms []search.Match, display func(string) string) {
	type line struct {
		text  string
		match bool
	}
	for start := 0; start < len(ms); {
		end := start
		for end < len(ms) && ms[end].Path == ms[start].Path {
			end++
		}
		lines := map[int]line{}
		for _, m := range ms[start:end] {
			lines[m.Line] = line{m.Text, true}
			for k, t := range m.Before {
				n := m.Line - len(m.Before) + k
				if _, ok := lines[n]; !ok {
					lines[n] = line{t, false}
				}
			}
			for k, t := range m.After {
				n := m.Line + 1 + k
				if l, ok := lines[n]; !ok || !l.match {
					lines[n] = line{t, false}
				}
			}
		}
		nums := make([]int, 0, len(lines))
		for n := range lines {
			nums = append(nums, n)
		}
		slices.Sort(nums)
		b.WriteString(display(ms[start].Path))
		b.WriteString("\n")
		for i, n := range nums {
			if i > 0 && n != nums[i-1]+1 {
				b.WriteString("--\n")
			}
			sep := "-"
			if lines[n].match {
				sep = ":"
			}
			fmt.Fprintf(b, "%d%s%s\n", n, sep, lines[n].text)
		}
		start = end
	}
}

// searchShares splits a budget of results among queries: a query with
// few matches shows all of them, and the others share what is left
// evenly, so one common query cannot crowd out a rare one.
func searchShares(counts []int, budget int) []int {
	shares := make([]int, len(counts))
	left := budget
	open := 0
	for _, n := range counts {
		if n > 0 {
			open++
		}
	}
	for open > 0 && left > 0 {
		each := max(left/open, 1)
		progress := false
		for i, n := range counts {
			if shares[i] == n || left == 0 {
				continue
			}
			give := min(each, n-shares[i], left)
			shares[i] += give
			left -= give
			progress = progress || give > 0
			if shares[i] == n {
				open--
			}
		}
		if !progress {
			break
		}
	}
	return shares
}
