// Command edits compares the edit engine with reference tools on data it
// generates into a temporary folder, all in one run, and prints Markdown
// tables of wall times and ratios for docs/BENCHMARKS.md:
//
//  1. One unique-match replacement of 5,000 lines in a 10 MiB file:
//     edit.Replace in memory, and the whole editor tool on disk (argument
//     decoding, read, match, atomic write with fsync, compact diff),
//     against python3 and perl doing the same literal replacement (read,
//     check that the old text occurs once, replace, write). Three parts
//     of the tool's work (Build, the compact diff, the durable write) are
//     also timed alone, to show where its time goes. The same edit is made
//     over the wire too: the cline-ls binary as an ACP agent (wire.go), a
//     replayed model making the editor call, one session/prompt timed from
//     request to answer, in yolo mode and with an approval, the daemon
//     writing the file or the client (fs/*); the bytes the daemon sent the
//     client in each runner's last run are counted, and the diff content
//     is checked to be the edit.
//  2. The compact diff of a 100,001-line file with one changed line:
//     diff.Compact against GNU diff on the same two files.
//  3. A 200-hunk patch over 50 files of 400 lines: the patch engine
//     (edit.PlanPatch and edit.Apply to disk) in this process and as its
//     own process (./applypatch), against git apply of the same changes
//     as a unified diff, each on a fresh copy of the tree. Every result
//     is compared byte for byte with the expected tree, and the trees the
//     tools leave are compared with each other; any difference stops the
//     run. The apply_patch tool, whose writes are atomic and fsynced, is
//     timed too, for reference.
//
// Each tool runs once to warm up, then -runs times. The tools of a case
// take turns, in an order that rotates every round, so a change in the
// machine's load hits all of them alike. Untimed set-up before every run
// restores the input, flushes the files about to be edited to disk (so
// each run starts from files that are cached but clean, as a workspace's
// files usually are, and no run pays for writing back an earlier one's
// output) and collects this process's garbage.
//
//	bench/edits.sh [-runs 21] [-keep] [-v] [-before BINARY] [-cases 1,2,3]
//	go run ./bench/edits [-runs 21] [-keep] [-v] [-before BINARY] [-cases 1,2,3]
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cline-ls/cline-ls/bench/edits/internal/dirfs"
	"github.com/cline-ls/cline-ls/diff"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/tools/edit"
	"github.com/cline-ls/cline-ls/tools/toolstest"
	"github.com/cline-ls/cline-ls/toolspec"
	"github.com/cline-ls/cline-ls/workspace"
)

// Sizes of the generated data.
const (
	replaceFileSize = 10 << 20 // case 1: bytes in the file
	replaceLines    = 5000     // case 1: lines replaced
	diffFileLines   = 100001   // case 2: lines in the file
	patchFiles      = 50       // case 3: files in the tree
	patchFileLines  = 400      // case 3: lines per file
	patchHunks      = 4        // case 3: hunks per file
)

// python is the python3 interpreter itself. A python3 on PATH may be a
// shim (pyenv's is a shell script) that costs more to start than the
// interpreter; the reference should not pay for it.
var python = "python3"

// verbose asks for every run's time on stderr (-v).
var verbose bool

// beforeBin is a cline-ls binary to measure over the wire beside the one
// built from this tree (-before), such as one built from main.
var beforeBin string

// onlyCases lists the cases to run (-cases).
var onlyCases string

// Targets from the issue.
const (
	replaceTarget = 20 * time.Millisecond
	compactTarget = 5 * time.Millisecond
	patchTarget   = 1.0 // engine time ÷ git apply time
	wireTarget    = 1.5 // the edit over ACP ÷ python3's durable edit
)

func main() {
	runs := flag.Int("runs", 21, "timed runs per tool, after one warm-up run")
	keep := flag.Bool("keep", false, "keep the temporary folder and print its path")
	flag.BoolVar(&verbose, "v", false, "print every tool's sorted times on stderr")
	flag.StringVar(&beforeBin, "before", "", "also measure this cline-ls `binary` over the wire, in the same rounds")
	flag.StringVar(&onlyCases, "cases", "1,2,3", "the `cases` to run, comma-separated")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("edits: ")
	if *runs < 1 {
		log.Fatal("-runs must be at least 1")
	}
	for _, tool := range []string{"python3", "perl", "diff", "git", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			log.Fatalf("%s is needed: %v", tool, err)
		}
	}
	if out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output(); err == nil && strings.TrimSpace(string(out)) != "" {
		python = strings.TrimSpace(string(out))
	}
	dir, err := os.MkdirTemp("", "cline-ls-bench-edits")
	if err != nil {
		log.Fatal(err)
	}
	if *keep {
		fmt.Fprintln(os.Stderr, "edits: data kept in", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	if err := run(dir, *runs); err != nil {
		if !*keep {
			os.RemoveAll(dir)
		}
		log.Fatal(err)
	}
}

// run measures the three cases and prints the report.
func run(dir string, runs int) error {
	started := time.Now()
	load0 := loadAvg()
	helper := filepath.Join(dir, "applypatch")
	if out, err := exec.Command("go", "build", "-o", helper, "github.com/cline-ls/cline-ls/bench/edits/applypatch").CombinedOutput(); err != nil {
		return fmt.Errorf("building the applypatch helper: %v\n%s", err, out)
	}
	if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "cline-ls"), "github.com/cline-ls/cline-ls/cmd/cline-ls").CombinedOutput(); err != nil {
		return fmt.Errorf("building cline-ls: %v\n%s", err, out)
	}
	var rows []row
	var checks []check
	for i, c := range []func(string, int) ([]row, []check, error){caseReplace, caseDiff, casePatch} {
		if !slices.Contains(strings.Split(onlyCases, ","), strconv.Itoa(i+1)) {
			continue
		}
		r, ch, err := c(dir, runs)
		if err != nil {
			return err
		}
		rows = append(rows, r...)
		checks = append(checks, ch...)
	}
	printReport(dir, runs, load0, loadAvg(), time.Since(started), rows, checks)
	return nil
}

// A runner is one tool of a case. Set-up and check are untimed; only run
// is timed. Each gets the runner's own run number k, 0 for the warm-up.
type runner struct {
	name  string
	setup func(k int) error
	run   func(k int) error
	check func(k int) error
	times []time.Duration
}

// measure runs every runner once to warm up and then runs times, taking
// turns, and records the timed runs.
func measure(runs int, rs []*runner) error {
	for k := 0; k <= runs; k++ {
		for i := range rs {
			r := rs[(i+k)%len(rs)]
			if r.setup != nil {
				if err := r.setup(k); err != nil {
					return fmt.Errorf("%s: set-up: %w", r.name, err)
				}
			}
			runtime.GC()
			start := time.Now()
			err := r.run(k)
			d := time.Since(start)
			if err != nil {
				return fmt.Errorf("%s: %w", r.name, err)
			}
			if r.check != nil {
				if err := r.check(k); err != nil {
					return fmt.Errorf("%s: wrong result: %w", r.name, err)
				}
			}
			if k > 0 {
				r.times = append(r.times, d)
			}
		}
	}
	return nil
}

// A row is one line of the times table.
type row struct {
	caseName string
	tool     string
	median   time.Duration
	min      time.Duration
}

// rowOf summarises a runner's times.
func rowOf(caseName string, r *runner) row {
	t := slices.Clone(r.times)
	slices.Sort(t)
	if verbose {
		fmt.Fprintf(os.Stderr, "%s / %s: %v\n", caseName, r.name, t)
	}
	return row{caseName: caseName, tool: r.name, median: t[len(t)/2], min: t[0]}
}

// A check is one line of the targets table: a time or a ratio of ours to
// a reference, and the target it should meet, if any.
type check struct {
	name        string
	median, min float64 // seconds for a time, else a ratio
	isTime      bool
	// isBytes marks a count of bytes sent to an ACP client, printed in a
	// table of its own: preview is what was sent besides the edit
	// (fs/write_text_file, write), total everything.
	isBytes               bool
	preview, total, write int
	target                string
	met                   string // "yes" or "no"; "" when there is no target
}

// timeCheck compares our median time with a limit.
func timeCheck(name string, r row, limit time.Duration) check {
	return check{name: name, median: r.median.Seconds(), min: r.min.Seconds(), isTime: true,
		target: "< " + fmtDur(limit), met: yesNo(r.median < limit)}
}

// ratioCheck divides our times by a reference's; limit <= 0 means no target.
func ratioCheck(name string, ours, ref row, limit float64) check {
	c := check{name: name, median: ours.median.Seconds() / ref.median.Seconds(), min: ours.min.Seconds() / ref.min.Seconds()}
	if limit > 0 {
		c.target = fmt.Sprintf("≤ %.1f×", limit)
		c.met = yesNo(c.median <= limit)
	}
	return c
}

// yesNo says whether a target was met.
func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}

// benchLine is line i of the generated Go-like code. Every line starts
// alike, the hard case for substring search, and each is unique.
func benchLine(i int) string {
	return fmt.Sprintf("\tvalue_%07d := compute(%d, \"the quick brown fox\") // jumps over the lazy dog", i, i*7)
}

// replacePy is the python3 reference for case 1: a literal replacement of
// the one occurrence of the old text, the way Python editing tools do it
// (str in, str out). With "atomic" it writes like the editor tool: a
// temporary file, fsync, rename, fsync of the folder.
const replacePy = `
import os, sys
path, old_path, new_path, mode = sys.argv[1:5]
def read(p):
    with open(p, encoding="utf-8", newline="") as f:
        return f.read()
old, new, text = read(old_path), read(new_path), read(path)
n = text.count(old)
if n != 1:
    sys.exit("expected one occurrence of the old text, found %d" % n)
text = text.replace(old, new, 1)
if mode == "atomic":
    folder = os.path.dirname(path) or "."
    tmp = os.path.join(folder, "." + os.path.basename(path) + ".tmp")
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fd = os.open(folder, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
else:
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text)
`

// replacePl is the perl reference for case 1, run as
// perl -0777 -i -pe replacePl OLDFILE NEWFILE FILE.
const replacePl = `BEGIN {
  open my $f, "<", shift @ARGV or die "old: $!"; $old = <$f>;
  open $f, "<", shift @ARGV or die "new: $!"; $new = <$f>;
}
my $n = () = /\Q$old\E/g;
die "expected one occurrence of the old text, found $n\n" if $n != 1;
s/\Q$old\E/$new/;`

// caseReplace measures case 1. Runs alternate between replacing the old
// lines with the new ones and back, so every run finds its text once.
func caseReplace(dir string, runs int) ([]row, []check, error) {
	const name = "1. replace 5,000 lines (one unique match) in a 10 MiB file"
	base := filepath.Join(dir, "replace")
	if err := os.MkdirAll(base, 0o755); err != nil {
		return nil, nil, err
	}
	var sb strings.Builder
	sb.Grow(replaceFileSize + 200)
	n := 0
	for sb.Len() < replaceFileSize {
		sb.WriteString(benchLine(n))
		sb.WriteByte('\n')
		n++
	}
	textA := sb.String()
	old := make([]string, replaceLines)
	for i := range old {
		old[i] = benchLine(n/2 + i)
	}
	oldText := strings.Join(old, "\n")
	newText := strings.ReplaceAll(oldText, "compute(", "evaluate(")
	textB := strings.Replace(textA, oldText, newText, 1)
	if strings.Count(textA, oldText) != 1 || strings.Count(textB, newText) != 1 || len(textB) != len(textA)+replaceLines {
		return nil, nil, errors.New("replace: generated data is not as intended")
	}
	// Even runs (the warm-up is run 0) turn A into B; odd runs turn B
	// back into A.
	from := func(k int) (text, o, n string) {
		if k%2 == 0 {
			return textA, oldText, newText
		}
		return textB, newText, oldText
	}
	want := func(k int) string {
		if k%2 == 0 {
			return textB
		}
		return textA
	}
	oldFile, newFile := filepath.Join(base, "old.txt"), filepath.Join(base, "new.txt")
	if err := os.WriteFile(oldFile, []byte(oldText), 0o644); err != nil {
		return nil, nil, err
	}
	if err := os.WriteFile(newFile, []byte(newText), 0o644); err != nil {
		return nil, nil, err
	}
	argFiles := func(k int) (o, n string) {
		if k%2 == 0 {
			return oldFile, newFile
		}
		return newFile, oldFile
	}

	// A disk runner edits its own copy of the file.
	onDisk := func(name, slug string, run func(k int, path string) error) (*runner, error) {
		d := filepath.Join(base, slug)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
		path := filepath.Join(d, "big.go")
		if err := os.WriteFile(path, []byte(textA), 0o644); err != nil {
			return nil, err
		}
		return &runner{
			name:  name,
			setup: func(int) error { return syncFile(path) },
			run:   func(k int) error { return run(k, path) },
			check: func(k int) error { return sameFile(path, want(k)) },
		}, nil
	}

	var got string
	inMemory := &runner{
		name: "cline-ls `edit.Replace`, in memory",
		run: func(k int) error {
			text, o, n := from(k)
			var err error
			got, err = edit.Replace(text, o, n)
			return err
		},
		check: func(k int) error {
			if got != want(k) {
				return errors.New("edit.Replace returned the wrong text")
			}
			return nil
		},
	}

	// Three parts of the editor tool's work, each timed on its own to
	// show its share: decoding the arguments, the compact diff, and the
	// durable write.
	var cd diff.CompactDiff
	compactOnly := &runner{
		name: "↳ alone: `diff.Compact` of this edit, in memory",
		run: func(k int) error {
			text, _, _ := from(k)
			cd = diff.Compact("big.go", text, want(k))
			return nil
		},
		check: func(int) error {
			if cd.Added != replaceLines || cd.Removed != replaceLines {
				return fmt.Errorf("diff.Compact found %d added and %d removed lines", cd.Added, cd.Removed)
			}
			return nil
		},
	}

	// The editor tool as a session calls it: Build decodes and validates
	// the JSON arguments, Execute reads, matches, writes and diffs.
	toolDir := filepath.Join(base, "tool")
	// Its run is set below, once the tool is looked up.
	toolRunner, err := onDisk("cline-ls `editor` tool, disk (decode, read, match, atomic write + fsync, compact diff)", "tool", nil)
	if err != nil {
		return nil, nil, err
	}
	editor, err := lookupTool(toolDir, tools.NameEditor)
	if err != nil {
		return nil, nil, err
	}
	var toolArgs [2]json.RawMessage
	for k := range toolArgs {
		_, o, n := from(k)
		if toolArgs[k], err = json.Marshal(map[string]string{"path": "big.go", "old_text": o, "new_text": n}); err != nil {
			return nil, nil, err
		}
	}
	toolRunner.run = func(k int) error {
		return execute(editor, toolArgs[k%2], "Edited big.go")
	}
	buildOnly := &runner{
		name: fmt.Sprintf("↳ alone: the tool's `Build` (schema check and decoding of %.2f MB of JSON arguments)", float64(len(toolArgs[0]))/1e6),
		run: func(k int) error {
			_, err := editor.Build(toolArgs[k%2])
			return err
		},
	}
	writeOnly, err := onDisk("↳ alone: `workspace.WriteFileAtomic` of the 10 MiB result (temp file, fsync, rename, fsync folder)", "atomic", func(k int, path string) error {
		return workspace.WriteFileAtomic(path, []byte(want(k)), 0o644)
	})
	if err != nil {
		return nil, nil, err
	}

	py, err := onDisk("python3: read, count == 1, `str.replace`, write", "python", func(k int, path string) error {
		o, n := argFiles(k)
		return command(python, "-c", replacePy, path, o, n, "plain")
	})
	if err != nil {
		return nil, nil, err
	}
	pythonAtomic, err := onDisk("python3, written like the tool (temp file, fsync, rename, fsync folder)", "python-atomic", func(k int, path string) error {
		o, n := argFiles(k)
		return command(python, "-c", replacePy, path, o, n, "atomic")
	})
	if err != nil {
		return nil, nil, err
	}
	perl, err := onDisk("`perl -0777 -i -pe` (count == 1, `s/\\Q…\\E/…/`)", "perl", func(k int, path string) error {
		o, n := argFiles(k)
		return command("perl", "-0777", "-i", "-pe", replacePl, o, n, path)
	})
	if err != nil {
		return nil, nil, err
	}

	// The same edit over the wire, through the daemon as an ACP agent.
	type wireCase struct {
		name, slug, mode string
		clientFS         bool
		bin              string
	}
	bin := filepath.Join(dir, "cline-ls")
	wcs := []wireCase{
		{"cline-ls over ACP, yolo, the daemon writes (prompt → call → atomic write + fsync → answer)", "wire-yolo", "yolo", false, bin},
		{"cline-ls over ACP, approval asked and given, the daemon writes", "wire-ask", "act", false, bin},
		{"cline-ls over ACP, yolo, the client reads and writes (`fs/*`)", "wire-fs", "yolo", true, bin},
	}
	if beforeBin != "" {
		for _, w := range slices.Clone(wcs) {
			w.name, w.slug, w.bin = "-before binary: "+w.name, w.slug+"-before", beforeBin
			wcs = append(wcs, w)
		}
	}
	var wires []*wireRun
	for _, w := range wcs {
		wr, err := newWireRun(w.name, w.slug, w.bin, base, w.mode, w.clientFS, textA, from, want)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", w.name, err)
		}
		defer wr.stop()
		wires = append(wires, wr)
	}

	// The same edit through cline/callTool over LSP, as an editor plugin
	// makes it.
	lsp, err := newLSPRun("cline-ls over LSP, `cline/callTool`, yolo, file not open, the daemon writes (call → atomic write + fsync → answer)", "lsp-yolo", bin, base, textA, from, want)
	if err != nil {
		return nil, nil, fmt.Errorf("over LSP: %w", err)
	}
	defer lsp.stop()

	rs := []*runner{inMemory, toolRunner, buildOnly, compactOnly, writeOnly, py, pythonAtomic, perl, lsp.r}
	for _, w := range wires {
		rs = append(rs, w.r)
	}
	var lspBefore *lspRun
	if beforeBin != "" {
		if lspBefore, err = newLSPRun("-before binary: "+lsp.r.name, "lsp-yolo-before", beforeBin, base, textA, from, want); err != nil {
			return nil, nil, fmt.Errorf("-before binary over LSP: %w", err)
		}
		defer lspBefore.stop()
		rs = append(rs, lspBefore.r)
	}
	if err := syncTree(base); err != nil {
		return nil, nil, err
	}
	if err := measure(runs, rs); err != nil {
		return nil, nil, fmt.Errorf("case 1: %w", err)
	}
	rows := make([]row, len(rs))
	for i, r := range rs {
		rows[i] = rowOf(name, r)
	}
	mem, tool, pyRow, pyA, pl := rows[0], rows[1], rows[5], rows[6], rows[7]
	checks := []check{
		timeCheck("1. `edit.Replace`, in memory", mem, replaceTarget),
		timeCheck("1. `editor` tool, disk", tool, replaceTarget),
		ratioCheck("1. `edit.Replace` ÷ python3", mem, pyRow, 0),
		ratioCheck("1. `editor` tool ÷ python3", tool, pyRow, 0),
		ratioCheck("1. `editor` tool ÷ python3 written like the tool", tool, pyA, 0),
		ratioCheck("1. `editor` tool ÷ perl", tool, pl, 0),
		ratioCheck("1. over LSP, `cline/callTool`, yolo, daemon writes ÷ python3 written like the tool", rows[8], pyA, wireTarget),
		ratioCheck("1. over ACP, yolo, daemon writes ÷ python3 written like the tool", rows[9], pyA, wireTarget),
		ratioCheck("1. over ACP, approval, daemon writes ÷ python3 written like the tool", rows[10], pyA, wireTarget),
		ratioCheck("1. over ACP, yolo, client writes ÷ python3 written like the tool", rows[11], pyA, 0),
		lspBytesCheck("1. over LSP, yolo, the daemon writes (every message and the answer)", lsp),
		bytesCheck("1. over ACP, yolo, the daemon writes", wires[0]),
		bytesCheck("1. over ACP, approval, the daemon writes", wires[1]),
		bytesCheck("1. over ACP, yolo, the client writes", wires[2]),
	}
	if beforeBin != "" {
		checks = append(checks,
			ratioCheck("1. -before binary over ACP, yolo, daemon writes ÷ python3 written like the tool", rows[12], pyA, wireTarget),
			ratioCheck("1. -before binary over ACP, approval, daemon writes ÷ python3 written like the tool", rows[13], pyA, wireTarget),
			ratioCheck("1. -before binary over ACP, yolo, client writes ÷ python3 written like the tool", rows[14], pyA, 0),
			bytesCheck("1. -before binary over ACP, yolo, the daemon writes", wires[3]),
			bytesCheck("1. -before binary over ACP, approval, the daemon writes", wires[4]),
			bytesCheck("1. -before binary over ACP, yolo, the client writes", wires[5]),
			ratioCheck("1. -before binary over LSP, `cline/callTool`, yolo, daemon writes ÷ python3 written like the tool", rows[15], pyA, wireTarget),
			lspBytesCheck("1. -before binary over LSP, yolo, the daemon writes (every message and the answer)", lspBefore),
		)
	}
	return rows, checks, nil
}

// caseDiff measures case 2.
func caseDiff(dir string, runs int) ([]row, []check, error) {
	const name = "2. compact diff, 100,001-line file, one line changed"
	base := filepath.Join(dir, "diff")
	if err := os.MkdirAll(base, 0o755); err != nil {
		return nil, nil, err
	}
	var ob, nb strings.Builder
	const changed = diffFileLines / 2
	for i := range diffFileLines {
		l := "line number " + strconv.Itoa(i) + " of a generated benchmark text\n"
		ob.WriteString(l)
		if i == changed {
			l = "a changed line\n"
		}
		nb.WriteString(l)
	}
	oldText, newText := ob.String(), nb.String()
	oldFile, newFile := filepath.Join(base, "old.txt"), filepath.Join(base, "new.txt")
	if err := os.WriteFile(oldFile, []byte(oldText), 0o644); err != nil {
		return nil, nil, err
	}
	if err := os.WriteFile(newFile, []byte(newText), 0o644); err != nil {
		return nil, nil, err
	}
	wantLine := fmt.Sprintf("-%d: line number %d of", changed+1, changed)

	var got diff.CompactDiff
	checkCompact := func(int) error {
		if got.Added != 1 || got.Removed != 1 || !strings.Contains(got.Text, wantLine) {
			return fmt.Errorf("diff.Compact found %d added and %d removed lines:\n%.300s", got.Added, got.Removed, got.Text)
		}
		return nil
	}
	inMemory := &runner{
		name:  "cline-ls `diff.Compact`, in memory",
		run:   func(int) error { got = diff.Compact("big.txt", oldText, newText); return nil },
		check: checkCompact,
	}
	withRead := &runner{
		name: "cline-ls `diff.Compact`, reading both files first",
		run: func(int) error {
			o, err := os.ReadFile(oldFile)
			if err != nil {
				return err
			}
			n, err := os.ReadFile(newFile)
			if err != nil {
				return err
			}
			got = diff.Compact("big.txt", string(o), string(n))
			return nil
		},
		check: checkCompact,
	}
	var out bytes.Buffer
	wantNormal := fmt.Sprintf("%dc%d\n", changed+1, changed+1)
	gnu := &runner{
		name: "GNU `diff old new`",
		run: func(int) error {
			out.Reset()
			cmd := exec.Command("diff", oldFile, newFile)
			cmd.Stdout = &out
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if errors.As(err, &exit) && exit.ExitCode() == 1 {
				return nil // differences found
			}
			if err == nil {
				return errors.New("diff found no difference")
			}
			return fmt.Errorf("%v: %s", err, stderr.Bytes())
		},
		check: func(int) error {
			if !strings.HasPrefix(out.String(), wantNormal) || strings.Count(out.String(), "\n") != 4 {
				return fmt.Errorf("unexpected output:\n%.300s", out.String())
			}
			return nil
		},
	}
	rs := []*runner{inMemory, withRead, gnu}
	if err := syncTree(base); err != nil {
		return nil, nil, err
	}
	if err := measure(runs, rs); err != nil {
		return nil, nil, fmt.Errorf("case 2: %w", err)
	}
	mem, read, g := rowOf(name, inMemory), rowOf(name, withRead), rowOf(name, gnu)
	checks := []check{
		timeCheck("2. `diff.Compact`, in memory", mem, compactTarget),
		ratioCheck("2. `diff.Compact` ÷ GNU diff", mem, g, 0),
		ratioCheck("2. `diff.Compact` reading the files ÷ GNU diff", read, g, 0),
	}
	return []row{mem, read, g}, checks, nil
}

// patchData is case 3's input and expected output.
type patchData struct {
	tree    map[string]string // slash path → text, before
	want    map[string]string // after
	ours    string            // the apply_patch format
	unified string            // the same changes as a git-style unified diff
}

// makePatch generates the tree and the changes. Each file gets four
// hunks of different shapes (one line changed, two lines inserted, one
// line deleted, three lines changed), each with three lines of context
// on either side, at places that differ from file to file.
func makePatch() (*patchData, error) {
	d := &patchData{tree: map[string]string{}, want: map[string]string{}}
	var ours, uni strings.Builder
	ours.WriteString("*** Begin Patch\n")
	for f := range patchFiles {
		p := fmt.Sprintf("pkg%02d/file%02d.go", f, f)
		lines := make([]string, patchFileLines)
		for i := range lines {
			lines[i] = benchLine(f*10000 + i)
		}
		d.tree[p] = strings.Join(lines, "\n") + "\n"
		fmt.Fprintf(&ours, "*** Update File: %s\n", p)
		fmt.Fprintf(&uni, "diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n", p, p, p, p)
		var after []string
		next, shift := 0, 0 // next old line to copy; new minus old line numbers
		for h := range patchHunks {
			at := 40 + h*90 + (f*7)%30 // first changed line, 0-based
			var removed, added []string
			switch h {
			case 0:
				removed = lines[at : at+1]
				added = []string{strings.Replace(lines[at], "compute", "evaluate", 1)}
			case 1:
				added = []string{"\t// inserted by the benchmark patch", fmt.Sprintf("\tcheck(%d)", f)}
			case 2:
				removed = lines[at : at+1]
			case 3:
				removed = lines[at : at+3]
				for _, l := range removed {
					added = append(added, strings.ReplaceAll(l, "lazy dog", "sleepy cat"))
				}
			}
			end := at + len(removed)
			before, trail := lines[at-3:at], lines[end:end+3]
			after = append(after, lines[next:at]...)
			after = append(after, added...)
			next = end
			ours.WriteString("@@\n")
			oldStart := at - 3 + 1
			fmt.Fprintf(&uni, "@@ -%d,%d +%d,%d @@\n", oldStart, 6+len(removed), oldStart+shift, 6+len(added))
			for _, w := range []*strings.Builder{&ours, &uni} {
				writePrefixed(w, ' ', before)
				writePrefixed(w, '-', removed)
				writePrefixed(w, '+', added)
				writePrefixed(w, ' ', trail)
			}
			shift += len(added) - len(removed)
		}
		after = append(after, lines[next:]...)
		d.want[p] = strings.Join(after, "\n") + "\n"
	}
	ours.WriteString("*** End Patch\n")
	d.ours, d.unified = ours.String(), uni.String()
	// The patch must be what it claims: checked in memory first.
	plan, err := edit.PlanPatch(d.ours, edit.MemFS(maps.Clone(d.tree)))
	if err != nil {
		return nil, fmt.Errorf("generated patch does not plan: %w", err)
	}
	if len(plan.Files) != patchFiles || len(plan.Notes) != 0 {
		return nil, fmt.Errorf("generated patch changes %d files with %d loose matches", len(plan.Files), len(plan.Notes))
	}
	for _, f := range plan.Files {
		if f.NewText != d.want[f.Path] {
			return nil, fmt.Errorf("generated patch: %s %s", f.Path, firstDifference(f.NewText, d.want[f.Path]))
		}
	}
	return d, nil
}

// writePrefixed writes each line with a one-character prefix, as both
// patch formats mark context, removed and added lines.
func writePrefixed(w *strings.Builder, prefix byte, lines []string) {
	for _, l := range lines {
		w.WriteByte(prefix)
		w.WriteString(l)
		w.WriteByte('\n')
	}
}

// casePatch measures case 3.
func casePatch(dir string, runs int) ([]row, []check, error) {
	name := fmt.Sprintf("3. patch, %d hunks over %d files of %d lines, fresh copy each run", patchFiles*patchHunks, patchFiles, patchFileLines)
	base := filepath.Join(dir, "patch")
	if err := os.MkdirAll(base, 0o755); err != nil {
		return nil, nil, err
	}
	d, err := makePatch()
	if err != nil {
		return nil, nil, err
	}
	oursFile, gitFile := filepath.Join(base, "ours.patch"), filepath.Join(base, "git.diff")
	if err := os.WriteFile(oursFile, []byte(d.ours), 0o644); err != nil {
		return nil, nil, err
	}
	if err := os.WriteFile(gitFile, []byte(d.unified), 0o644); err != nil {
		return nil, nil, err
	}
	helper := filepath.Join(dir, "applypatch")

	// Each runner applies to its own folder, rewritten before every run.
	fresh := func(slug string, after func(root string) error) (*runner, string) {
		root := filepath.Join(base, slug)
		return &runner{
			setup: func(int) error {
				if err := writeTree(root, d.tree); err != nil {
					return err
				}
				if after != nil {
					if err := after(root); err != nil {
						return err
					}
				}
				return syncTree(root)
			},
			check: func(int) error { return sameTree(root, d.want) },
		}, root
	}

	inProc, inRoot := fresh("engine", nil)
	inProc.name = "cline-ls engine in process (`edit.PlanPatch` + `edit.Apply`, plain writes)"
	inProc.run = func(int) error {
		fsys := dirfs.Dir(inRoot)
		plan, err := edit.PlanPatch(d.ours, fsys)
		if err != nil {
			return err
		}
		return edit.Apply(plan, fsys)
	}

	proc, procRoot := fresh("process", nil)
	proc.name = "cline-ls engine as a process (`applypatch`, plain writes)"
	proc.run = func(int) error { return command(helper, "-dir", procRoot, oursFile) }

	gitEnv := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
	git, gitRoot := fresh("git", func(root string) error {
		cmd := exec.Command("git", "init", "-q", root)
		cmd.Env = gitEnv
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git init: %v: %s", err, out)
		}
		return nil
	})
	git.name = "`git apply` (unified diff, in a `git init` repository)"
	git.run = func(int) error {
		cmd := exec.Command("git", "apply", gitFile)
		cmd.Dir = gitRoot
		cmd.Env = gitEnv
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		return nil
	}

	var applyPatch tools.Tool
	tool, toolRoot := fresh("tool", func(root string) (err error) {
		applyPatch, err = lookupTool(root, tools.NameApplyPatch)
		return err
	})
	tool.name = "cline-ls `apply_patch` tool (decode, plan, atomic writes + fsync, compact diffs)"
	toolArgs, err := json.Marshal(map[string]string{"input": d.ours})
	if err != nil {
		return nil, nil, err
	}
	tool.run = func(int) error { return execute(applyPatch, toolArgs, "") }

	rs := []*runner{inProc, proc, git, tool}
	if err := syncTree(base); err != nil {
		return nil, nil, err
	}
	if err := measure(runs, rs); err != nil {
		return nil, nil, fmt.Errorf("case 3: %w", err)
	}
	// Each tree was checked against the expected one after every run;
	// compare the trees the tools left with each other as well.
	for _, r := range []string{procRoot, gitRoot, toolRoot} {
		if err := sameDirs(inRoot, r); err != nil {
			return nil, nil, fmt.Errorf("case 3: the trees differ: %w", err)
		}
	}
	rows := make([]row, len(rs))
	for i, r := range rs {
		rows[i] = rowOf(name, r)
	}
	in, pr, g, tl := rows[0], rows[1], rows[2], rows[3]
	checks := []check{
		ratioCheck("3. engine in process ÷ git apply", in, g, patchTarget),
		ratioCheck("3. engine as a process ÷ git apply", pr, g, patchTarget),
		ratioCheck("3. `apply_patch` tool (durable writes) ÷ git apply", tl, g, 0),
	}
	return rows, checks, nil
}

// lookupTool returns a built-in edit tool working on the folder root,
// registered the way the daemon registers it.
func lookupTool(root, name string) (tools.Tool, error) {
	files, err := toolstest.New(root)
	if err != nil {
		return nil, err
	}
	reg := tools.NewRegistry()
	if err := reg.RegisterBuiltins(tools.EditTools(files)); err != nil {
		return nil, err
	}
	t, ok := reg.Lookup(name, toolspec.FamilyGeneric)
	if !ok {
		return nil, fmt.Errorf("tool %s is not registered", name)
	}
	return t, nil
}

// execute builds and runs one tool call and fails unless it succeeded
// with a result that starts with prefix.
func execute(t tools.Tool, args json.RawMessage, prefix string) error {
	inv, err := t.Build(args)
	if err != nil {
		return err
	}
	res, err := inv.Execute(context.Background(), tools.ExecOptions{})
	if err != nil {
		return err
	}
	if res.IsError || !strings.HasPrefix(res.Content, prefix) {
		return fmt.Errorf("tool result: %.500s", res.Content)
	}
	return nil
}

// command runs a program and fails with its output unless it succeeds.
func command(name string, args ...string) error {
	cmd := exec.Command(name, args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v: %s", name, err, out)
	}
	return nil
}

// syncFile flushes a file's data, or a folder's entries, to disk, so
// that writing back what an earlier run left does not land in the next
// timed run.
func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// sameFile reports how the file at path differs from want.
func sameFile(path, want string) error {
	got, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if string(got) != want {
		return fmt.Errorf("%s: %s", path, firstDifference(string(got), want))
	}
	return nil
}

// firstDifference describes where got first differs from want.
func firstDifference(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	line := strings.Count(want[:i], "\n") + 1
	return fmt.Sprintf("differs from the expected text at byte %d (line %d); %d bytes, want %d", i, line, len(got), len(want))
}

// syncTree flushes every file and folder under root to disk.
func syncTree(root string) error {
	return filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !e.IsDir() && !e.Type().IsRegular() {
			return nil
		}
		return syncFile(p)
	})
}

// writeTree replaces the folder root with the files of tree.
func writeTree(root string, tree map[string]string) error {
	if err := os.RemoveAll(root); err != nil {
		return err
	}
	for p, text := range tree {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// readTree returns the regular files under root, by slash path, leaving
// out a .git folder at the top. Any other kind of file is an error; a
// left-over temporary file is a regular file and so shows up as an
// unexpected one.
func readTree(root string) (map[string]string, error) {
	tree := map[string]string{}
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if e.Name() == ".git" && filepath.Dir(p) == root {
				return filepath.SkipDir
			}
			return nil
		}
		if !e.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file", p)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		tree[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	return tree, err
}

// sameTree reports how the folder root differs from want.
func sameTree(root string, want map[string]string) error {
	got, err := readTree(root)
	if err != nil {
		return err
	}
	return compareTrees(got, want)
}

// sameDirs reports how two folders differ.
func sameDirs(a, b string) error {
	ta, err := readTree(a)
	if err != nil {
		return err
	}
	tb, err := readTree(b)
	if err != nil {
		return err
	}
	if err := compareTrees(tb, ta); err != nil {
		return fmt.Errorf("%s against %s: %w", b, a, err)
	}
	return nil
}

// compareTrees reports the first difference between two trees.
func compareTrees(got, want map[string]string) error {
	for _, p := range slices.Sorted(maps.Keys(want)) {
		g, ok := got[p]
		if !ok {
			return fmt.Errorf("%s is missing", p)
		}
		if g != want[p] {
			return fmt.Errorf("%s %s", p, firstDifference(g, want[p]))
		}
	}
	for _, p := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[p]; !ok {
			return fmt.Errorf("unexpected file %s", p)
		}
	}
	return nil
}

// printReport prints the machine, the command and both tables.
func printReport(dir string, runs int, load0, load1 string, took time.Duration, rows []row, checks []check) {
	cmd := os.Getenv("EDITS_BENCH_COMMAND")
	goCmd := strings.Join(append([]string{"go run ./bench/edits"}, os.Args[1:]...), " ")
	if cmd == "" {
		cmd = goCmd
	}
	fmt.Printf("Command: `%s` (runs `%s`), one run for all three cases.\n\n", cmd, goCmd)
	fmt.Printf("Machine: %s CPUs (nproc), %s, %s, %s/%s, temporary files on %s; %s; %s, %s, %s, %s. Load average %s at start, %s at end; the whole run took %s.\n\n",
		nproc(), cpuModel(), memTotal(), runtime.GOOS, runtime.GOARCH, fsType(dir), runtime.Version(),
		firstLine(python, "--version")+" (`"+python+"`)", perlVersion(), firstLine("diff", "--version"), firstLine("git", "--version"),
		load0, load1, took.Round(time.Second))
	fmt.Printf("Code: %s.\n\n", revision())
	fmt.Printf("Each tool ran once to warm up, then %d times, taking turns with the other tools of its case; wall time, median and minimum. External tools' times include starting the process. A ratio divides our time by the reference's, median by median and minimum by minimum; below 1 we are faster.\n\n", runs)
	fmt.Println("| case | tool | median | min |")
	fmt.Println("|---|---|---|---|")
	last := ""
	for _, r := range rows {
		c := ""
		if r.caseName != last {
			c, last = r.caseName, r.caseName
		}
		fmt.Printf("| %s | %s | %s | %s |\n", c, r.tool, fmtDur(r.median), fmtDur(r.min))
	}
	fmt.Println()
	fmt.Println("| check | median | min | target | met |")
	fmt.Println("|---|---|---|---|---|")
	for _, c := range checks {
		if c.isBytes {
			continue
		}
		m, n := fmt.Sprintf("%.2f×", c.median), fmt.Sprintf("%.2f×", c.min)
		if c.isTime {
			m, n = fmtDur(secs(c.median)), fmtDur(secs(c.min))
		}
		t, met := c.target, c.met
		if t == "" {
			t, met = "–", "–"
		}
		fmt.Printf("| %s | %s | %s | %s | %s |\n", c.name, m, n, t, met)
	}
	fmt.Println()
	fmt.Println("Bytes the daemon sent the ACP client in the last run of each over-the-wire runner:")
	fmt.Println()
	fmt.Println("| runner | besides the edit | `fs/write_text_file` (the edit) | in all | target | met |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, c := range checks {
		if c.isBytes {
			fmt.Printf("| %s | %s | %s | %s | %s | %s |\n", c.name, fmtBytes(c.preview), fmtBytes(c.write), fmtBytes(c.total), c.target, c.met)
		}
	}
}

// fmtBytes formats a byte count in MB (10^6 bytes), or "–" for none.
func fmtBytes(n int) string {
	if n == 0 {
		return "–"
	}
	return fmt.Sprintf("%.3f MB", float64(n)/1e6)
}

// secs turns seconds back into a duration.
func secs(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// fmtDur formats a duration with three significant digits or so.
func fmtDur(d time.Duration) string {
	switch ms := float64(d) / float64(time.Millisecond); {
	case ms < 1:
		return fmt.Sprintf("%.0f µs", ms*1000)
	case ms < 10:
		return fmt.Sprintf("%.2f ms", ms)
	case ms < 100:
		return fmt.Sprintf("%.1f ms", ms)
	default:
		return fmt.Sprintf("%.0f ms", ms)
	}
}

// firstLine returns the first line a command prints, or "NAME (unknown)".
func firstLine(name string, args ...string) string {
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		return name + " (unknown)"
	}
	l, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return l
}

// revision names the commit measured, and says whether tracked files
// had uncommitted changes.
func revision() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "commit unknown (not a git checkout)"
	}
	rev := "commit " + strings.TrimSpace(string(out))
	out, err = exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output()
	if n := strings.Count(string(out), "\n"); err == nil && n > 0 {
		rev += fmt.Sprintf(", with uncommitted changes to %d tracked files", n)
	}
	return rev
}

// nproc returns what nproc(1) prints: the CPUs this process may use.
func nproc() string {
	if out, err := exec.Command("nproc").Output(); err == nil {
		return strings.TrimSpace(string(out))
	}
	return strconv.Itoa(runtime.NumCPU())
}

// perlVersion returns perl's version, as "perl v5.x.y".
func perlVersion() string {
	out, err := exec.Command("perl", "-e", `print "perl $^V"`).Output()
	if err != nil {
		return "perl (unknown)"
	}
	return string(out)
}

// cpuModel returns the first "model name" of /proc/cpuinfo.
func cpuModel() string {
	data, _ := os.ReadFile("/proc/cpuinfo")
	for l := range strings.Lines(string(data)) {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "CPU model unknown"
}

// memTotal returns MemTotal of /proc/meminfo in GiB.
func memTotal() string {
	data, _ := os.ReadFile("/proc/meminfo")
	for l := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(l, "MemTotal:"); ok {
			f := strings.Fields(v)
			if kb, err := strconv.ParseFloat(f[0], 64); err == nil {
				return fmt.Sprintf("%.0f GiB", kb/(1<<20))
			}
		}
	}
	return "memory unknown"
}

// loadAvg returns the one-minute load average.
func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Fields(string(data))[0]
}

// fsType names the file system holding dir, as df(1) does.
func fsType(dir string) string {
	out, err := exec.Command("df", "--output=fstype", dir).Output()
	f := strings.Fields(string(out))
	if err != nil || len(f) < 2 {
		return "an unknown file system"
	}
	return f[len(f)-1]
}
