package tools

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/cline-ls/cline-ls/workspace"
)

// Limits of read_files, per file.
const (
	readFilesMaxLines     = 2000
	readFilesMaxChars     = MaxToolOutput
	readFilesMaxLineChars = 2000
	// readFilesSniffBytes is how much of a file decides that it is
	// binary, as in workspace.ReadTextFile.
	readFilesSniffBytes = 8 << 10
)

type readFilesArgs struct {
	Files []readFilesItem `json:"files"`
}

type readFilesItem struct {
	Path      string `json:"path"`
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
}

// readFilesTarget is one requested file, resolved at build time so that
// Describe can name it; a path the workspace refused keeps its error for
// the result, so the other files are still read.
type readFilesTarget struct {
	item readFilesItem
	abs  string
	err  error
}

func (e *wsEnv) buildReadFiles(a readFilesArgs) (Invocation, error) {
	var probs []Problem
	for i, f := range a.Files {
		if f.StartLine > 0 && f.EndLine > 0 && f.EndLine < f.StartLine {
			probs = append(probs, Problem{
				Path:    fmt.Sprintf("files[%d].end_line", i),
				Message: fmt.Sprintf("must be ≥ start_line (%d), got %d", f.StartLine, f.EndLine),
			})
		}
	}
	if len(probs) > 0 {
		return nil, &ValidationError{Problems: probs}
	}
	c := &readFilesCall{env: e}
	for _, f := range a.Files {
		abs, err := e.files.Resolve(f.Path)
		c.targets = append(c.targets, readFilesTarget{item: f, abs: abs, err: err})
	}
	return c, nil
}

type readFilesCall struct {
	env     *wsEnv
	targets []readFilesTarget
}

// Describe names the files.
func (c *readFilesCall) Describe(context.Context) Description {
	d := Description{Kind: KindRead}
	var names []string
	for _, t := range c.targets {
		if t.err != nil {
			names = append(names, t.item.Path)
			continue
		}
		names = append(names, c.env.files.Display(t.abs))
		d.Locations = append(d.Locations, Location{Path: t.abs, Line: t.item.StartLine})
	}
	d.Title = "Read " + wsTitleList(names)
	return d
}

// Execute reads every file; a file that cannot be read gets its error in
// its place, and the call is an error only when no file could be read.
func (c *readFilesCall) Execute(ctx context.Context, _ ExecOptions) (Result, error) {
	var b strings.Builder
	var images []Image
	failed := 0
	for i, t := range c.targets {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		if i > 0 {
			b.WriteString("\n")
		}
		section, img, ok := c.readOne(ctx, t)
		if !ok {
			failed++
		}
		if img != nil {
			images = append(images, *img)
		}
		b.WriteString(section)
	}
	return Result{Content: b.String(), IsError: failed == len(c.targets), Images: images}, nil
}

// readOne renders one file, or its error; ok is false for an error. A
// picture comes back as an image, which the section names.
func (c *readFilesCall) readOne(ctx context.Context, t readFilesTarget) (string, *Image, bool) {
	files := c.env.files
	if t.err != nil {
		return fmt.Sprintf("File: %s — error: %v\n", t.item.Path, t.err), nil, false
	}
	name := files.Display(t.abs)
	fail := func(format string, args ...any) (string, *Image, bool) {
		return fmt.Sprintf("File: %s — error: %s\n", name, fmt.Sprintf(format, args...)), nil, false
	}
	disk, err := files.Disk()
	if err != nil {
		return fail("%s", readFilesErrText(err))
	}
	// The file is examined on what its opened descriptor says, never on a
	// stat of the path: the path may be swapped between the two.
	if f, fi, err := disk.Open(t.abs); err == nil {
		defer f.Close()
		head := readFilesHead(f, fi.Size())
		if mime, ok := SniffImage(head); ok {
			return readFilesImage(f, name, mime, fi.Size())
		}
		if kind, binary := readFilesSniff(head); binary {
			return fmt.Sprintf("File: %s — %s, %s: not shown as text\n", name, kind, wsSize(fi.Size())), nil, true
		}
		if fi.Size() > workspace.DefaultMaxReadBytes {
			// Too big to hold whole: read the requested lines from disk.
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return fail("%s", readFilesErrText(err))
			}
			text, ok := c.readLarge(ctx, t, f, name, fi.Size())
			return text, nil, ok
		}
	} else if nr := (*workspace.NotRegularFileError)(nil); errors.As(err, &nr) {
		if nr.Mode.IsDir() {
			return fail("it is a folder, not a file; use list_files to see what it holds")
		}
		return fail("it is %s, not a regular file", workspace.FileKind(nr.Mode))
	}
	ft, err := files.Read(ctx, t.abs)
	if err != nil {
		if ctx.Err() != nil {
			return fail("cancelled")
		}
		return fail("%s", readFilesErrText(err))
	}
	if !ft.Exists {
		return fail("no such file; list_files or search_codebase can find the right path")
	}
	sample := ft.Text[:min(len(ft.Text), readFilesSniffBytes)]
	if binary, _ := workspace.SniffBinary([]byte(sample)); binary {
		return fmt.Sprintf("File: %s — binary content (%s), %s: not shown as text\n",
			name, http.DetectContentType([]byte(sample)), wsSize(int64(len(ft.Text)))), nil, true
	}
	lines := readFilesSplit(ft.Text)
	text, from, to, ok := readFilesRender(func(yield func(int, string) bool) {
		for i, l := range lines {
			if !yield(i+1, l) {
				return
			}
		}
	}, t.item, len(lines))
	if !ok {
		return fail("%s", text)
	}
	if from == 1 && to == len(lines) {
		// The model has now seen the whole current text.
		files.Seen(t.abs, ft.Text)
	}
	return readFilesHeader(name, t.item, from, to, len(lines)) + text, nil, true
}

// readFilesImage reads a picture whole from its opened file, up to
// MaxImageBytes; a larger one is named but not sent.
func readFilesImage(f io.ReadSeeker, name, mime string, size int64) (string, *Image, bool) {
	tooBig := fmt.Sprintf("File: %s — an image (%s), %s: over the %d MiB an image may be, not shown\n", name, mime, wsSize(size), MaxImageBytes>>20)
	if size > MaxImageBytes {
		return tooBig, nil, true
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Sprintf("File: %s — error: %s\n", name, readFilesErrText(err)), nil, false
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxImageBytes+1))
	if err != nil {
		return fmt.Sprintf("File: %s — error: %s\n", name, readFilesErrText(err)), nil, false
	}
	if len(data) > MaxImageBytes { // it grew since it was opened
		return tooBig, nil, true
	}
	return fmt.Sprintf("File: %s — an image (%s, %s)\n", name, mime, wsSize(int64(len(data)))), &Image{MIMEType: mime, Data: data}, true
}

// readLarge shows the requested lines of a file too large to read whole,
// streaming it from disk (an editor buffer of such a file is not asked
// for) and counting its lines to the end.
func (c *readFilesCall) readLarge(ctx context.Context, t readFilesTarget, f io.Reader, name string, size int64) (string, bool) {
	// Lines are kept only inside the window the model asked for.
	from := max(t.item.StartLine, 1)
	to := from + readFilesMaxLines - 1
	if t.item.EndLine > 0 {
		to = min(to, t.item.EndLine)
	}
	kept := map[int]string{}
	r := bufio.NewReaderSize(f, 64<<10)
	lineNo := 0
	var cur []byte
	for {
		if lineNo%100_000 == 0 && ctx.Err() != nil {
			return fmt.Sprintf("File: %s — error: cancelled\n", name), false
		}
		chunk, err := r.ReadSlice('\n')
		inWindow := lineNo+1 >= from && lineNo+1 <= to
		if inWindow && len(cur) < readFilesMaxLineChars+4 {
			cur = append(cur, chunk[:min(len(chunk), readFilesMaxLineChars+4-len(cur))]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue // the line goes on
		}
		if len(chunk) > 0 || err == nil {
			lineNo++
			if inWindow {
				kept[lineNo] = strings.TrimRight(string(cur), "\r\n")
			}
			cur = cur[:0]
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Sprintf("File: %s — error: %s\n", name, readFilesErrText(err)), false
		}
	}
	text, first, last, ok := readFilesRender(func(yield func(int, string) bool) {
		for n := from; n <= min(to, lineNo); n++ {
			if !yield(n, kept[n]) {
				return
			}
		}
	}, t.item, lineNo)
	if !ok {
		return fmt.Sprintf("File: %s — error: %s\n", name, text), false
	}
	label := fmt.Sprintf("%s [%s, read from disk]", name, wsSize(size))
	return readFilesHeader(label, t.item, first, last, lineNo) + text, true
}

// readFilesRender numbers the requested lines within the limits. lines
// yields (number, text) from the start of the window on; total is the
// file's line count. It returns the text and the lines shown, or ok
// false and a message for a window past the end.
func readFilesRender(lines func(yield func(int, string) bool), item readFilesItem, total int) (text string, from, to int, ok bool) {
	from = max(item.StartLine, 1)
	if total == 0 {
		return "", 1, 0, true
	}
	if from > total {
		return fmt.Sprintf("start_line %d is past the end of the file, which has %s", from, plural(total, "line")), 0, 0, false
	}
	to = total
	if item.EndLine > 0 {
		to = min(item.EndLine, total)
	}
	to = min(to, from+readFilesMaxLines-1)
	var b strings.Builder
	last := from - 1
	lines(func(n int, line string) bool {
		if n < from {
			return true
		}
		if n > to {
			return false
		}
		entry := fmt.Sprintf("%d | %s\n", n, wsCutLine(strings.TrimSuffix(line, "\r"), readFilesMaxLineChars))
		if b.Len()+len(entry) > readFilesMaxChars {
			return false
		}
		b.WriteString(entry)
		last = n
		return true
	})
	return b.String(), from, last, true
}

// readFilesHeader says what part of the file is shown and, when a limit
// cut it short, how to read on.
func readFilesHeader(name string, item readFilesItem, from, to, total int) string {
	switch {
	case total == 0:
		return fmt.Sprintf("File: %s (empty)\n", name)
	case from == 1 && to == total:
		return fmt.Sprintf("File: %s (%s)\n", name, plural(total, "line"))
	}
	h := fmt.Sprintf("File: %s — showing lines %d–%d of %d", name, from, to, total)
	wanted := total
	if item.EndLine > 0 {
		wanted = min(item.EndLine, total)
	}
	if to < wanted {
		limit := "the 2000-line limit"
		if to-from+1 < readFilesMaxLines {
			limit = "the 48,000-character limit"
		}
		h += fmt.Sprintf(" (cut at %s); read on with start_line %d", limit, to+1)
	}
	return h + "\n"
}

// readFilesSplit splits text into lines; a final line break ends the
// last line rather than starting an empty one.
func readFilesSplit(text string) []string {
	if text == "" {
		return nil
	}
	lines := strings.Split(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// readFilesHead reads the start of an opened file of size bytes (as its
// descriptor said), what decides how it is shown. The buffer is no bigger
// than the file: most files read are far smaller than the sniffed start.
func readFilesHead(f io.Reader, size int64) []byte {
	buf := make([]byte, min(readFilesSniffBytes, max(size, 0)))
	n, _ := io.ReadFull(f, buf)
	return buf[:n]
}

// readFilesSniff looks at the start of a file that is not a picture
// models take and reports what it is when it is not text: another image
// format, an archive, other binary data.
func readFilesSniff(buf []byte) (kind string, binary bool) {
	mime := http.DetectContentType(buf)
	if strings.HasPrefix(mime, "image/") && !bytes.Contains(buf[:min(len(buf), 512)], []byte("<svg")) {
		return "an image (" + mime + ")", true
	}
	if bin, _ := workspace.SniffBinary(buf); bin {
		return "a binary file (" + mime + ")", true
	}
	return "", false
}

// readFilesErrText is a read error without the absolute path, which the
// result already names by its display path.
func readFilesErrText(err error) string {
	var pe *workspace.PathError
	if errors.As(err, &pe) && pe.Reason != "" {
		return pe.Reason
	}
	var fe *os.PathError
	if errors.As(err, &fe) {
		return fe.Err.Error()
	}
	return err.Error()
}
