package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cline-ls/cline-ls/workspace"
)

const (
	// listFilesMaxEntries is how many entries list_files shows.
	listFilesMaxEntries = 200
	// listFilesCountCap bounds the walk that counts the entries left out,
	// so that listing a huge tree stays quick.
	listFilesCountCap = 100_000
)

type listFilesArgs struct {
	Path      string `json:"path"`
	Recursive bool   `json:"recursive"`
}

func (e *wsEnv) buildListFiles(a listFilesArgs) (Invocation, error) {
	p := a.Path
	if strings.TrimSpace(p) == "" {
		p = "." // models send "" for the workspace itself
	}
	abs, err := e.files.Resolve(p)
	return &listFilesCall{env: e, args: a, abs: abs, err: err}, nil
}

type listFilesCall struct {
	env  *wsEnv
	args listFilesArgs
	abs  string
	err  error
}

// Describe names the folder.
func (c *listFilesCall) Describe(context.Context) Description {
	d := Description{Kind: KindRead, Title: "List " + c.args.Path}
	if c.err == nil {
		d.Title = "List " + listFilesDirName(c.env.files.Display(c.abs))
		d.Locations = []Location{{Path: c.abs}}
	}
	if c.args.Recursive {
		d.Title += " (recursive)"
	}
	return d
}

// listFilesEntry is one listed file or folder.
type listFilesEntry struct {
	abs string
	dir bool
}

// Execute lists the folder breadth first, so that a listing cut at the
// limit shows the upper levels whole, and prints what it kept sorted by
// path.
func (c *listFilesCall) Execute(ctx context.Context, _ ExecOptions) (Result, error) {
	if c.err != nil {
		return Errorf("%v", c.err), nil
	}
	files := c.env.files
	name := listFilesDirName(files.Display(c.abs))
	if rest, ok := strings.CutPrefix(name, "the "); ok {
		name = "The " + rest // it starts the listing's first sentence
	}
	disk, err := files.Disk()
	if err != nil {
		return Errorf("Cannot list %s: %s", name, readFilesErrText(err)), nil
	}
	// Every listing goes through the folder handles: a folder swapped for
	// a link out of the workspace after the call was checked is refused.
	fi, err := disk.Stat(c.abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Errorf("Folder not found: %s. List its parent folder to see what is there.", name), nil
	case err != nil:
		return Errorf("Cannot list %s: %s", name, readFilesErrText(err)), nil
	case !fi.IsDir():
		return Errorf("%s is a file, not a folder; use read_files to read it.", files.Display(c.abs)), nil
	}
	// A folder the rules hide is listed when asked for by name (node_modules/pkg,
	// say), with the rules off inside it, since all of it would be hidden.
	bypass := files.Ignored(c.abs, true)

	type queued struct {
		abs   string
		depth int
	}
	var shown []listFilesEntry
	more, ignored, unreadable, tooDeep := 0, 0, 0, 0
	queue := []queued{{c.abs, 0}}
	reader := disk.DirReader()
	defer reader.Close()
	for len(queue) > 0 && len(shown)+more < listFilesCountCap {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		dir, depth := queue[0].abs, queue[0].depth
		queue = queue[1:]
		entries, err := reader.ReadDir(dir)
		if err != nil {
			unreadable++
		}
		for _, e := range entries {
			if e.Name() == ".git" || !e.IsDir() && workspace.IsAtomicTemp(e.Name()) {
				continue // ours, never the user's: even with the rules off
			}
			abs := filepath.Join(dir, e.Name())
			isDir := e.IsDir()
			link := e.Type()&fs.ModeSymlink != 0
			if link {
				// Shown as what it points to, but never followed: it may
				// lead out of the workspace or into a loop.
				// Resolve gives the link's real target (an absolute
				// link is fine when it stays inside), which the
				// folder handles can examine.
				if real, err := files.Resolve(abs); err == nil {
					if target, err := disk.Stat(real); err == nil {
						isDir = target.IsDir()
					}
				}
			}
			if !bypass && files.Ignored(abs, isDir) {
				ignored++
				continue
			}
			if len(shown) < listFilesMaxEntries {
				shown = append(shown, listFilesEntry{abs: abs, dir: isDir})
			} else {
				more++
			}
			switch {
			case !isDir || link || !c.args.Recursive:
			case depth+1 >= workspace.MaxWalkDepth:
				tooDeep++
			default:
				queue = append(queue, queued{abs, depth + 1})
			}
		}
	}
	moreIsLowerBound := len(queue) > 0

	slices.SortFunc(shown, func(a, b listFilesEntry) int { return listFilesCompare(a.abs, b.abs) })
	var b strings.Builder
	what := "entries"
	if c.args.Recursive {
		what = "entries, recursive"
	}
	total := len(shown) + more
	switch {
	case total == 0:
		fmt.Fprintf(&b, "%s is empty", name)
		if ignored > 0 {
			fmt.Fprintf(&b, " apart from %s hidden by .gitignore or .clineignore", listFilesEntries(ignored))
			ignored = 0
		}
		b.WriteString(".\n")
	case more == 0:
		fmt.Fprintf(&b, "%s (%d %s):\n", name, total, what)
	default:
		fmt.Fprintf(&b, "%s (%s):\n", name, what)
	}
	for _, e := range shown {
		b.WriteString(files.Display(e.abs))
		if e.dir {
			b.WriteString("/")
		}
		b.WriteString("\n")
	}
	if more > 0 {
		count := fmt.Sprint(total)
		if moreIsLowerBound {
			count = "more than " + count
		}
		fmt.Fprintf(&b, "[Showing %d of %s entries: the list was cut at %d. List a subfolder, or use search_codebase, to see the rest.]\n",
			len(shown), count, listFilesMaxEntries)
	}
	if ignored > 0 {
		fmt.Fprintf(&b, "[%s hidden by .gitignore or .clineignore %s not listed.]\n", listFilesEntries(ignored), listFilesVerb(ignored))
	}
	if bypass {
		b.WriteString("[This folder is itself excluded by .gitignore or .clineignore; it is listed because you asked for it, with those rules off inside it.]\n")
	}
	if unreadable > 0 {
		fmt.Fprintf(&b, "[%s could not be read.]\n", plural(unreadable, "folder"))
	}
	if tooDeep > 0 {
		fmt.Fprintf(&b, "[The listing stopped at %d folder levels below %s: %s at that depth %s not entered. List one of them to see inside.]\n",
			workspace.MaxWalkDepth, listFilesDirName(files.Display(c.abs)), plural(tooDeep, "folder"), listFilesVerb(tooDeep))
	}
	return Result{Content: b.String()}, nil
}

func listFilesEntries(n int) string {
	if n == 1 {
		return "1 entry"
	}
	return fmt.Sprintf("%d entries", n)
}

func listFilesVerb(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// listFilesDirName shows a folder as "name/", and the workspace root as
// "the workspace folder".
func listFilesDirName(display string) string {
	if display == "." || display == "" {
		return "the workspace folder"
	}
	return strings.TrimSuffix(display, "/") + "/"
}

// listFilesCompare orders paths component by component, so that a
// folder's entries follow it directly ("a/b" before "a.go").
func listFilesCompare(a, b string) int {
	as := strings.Split(filepath.ToSlash(a), "/")
	bs := strings.Split(filepath.ToSlash(b), "/")
	return slices.Compare(as, bs)
}
