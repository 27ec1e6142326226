// Command search compares the search_codebase engine (tools/search) with
// ripgrep on one tree: for each query it runs both several times with the
// same options (ignore files honoured, hidden files searched, one line of
// context, every match kept), checks that they found the same lines (the
// same files and line numbers; it stops otherwise, since the times would
// then compare different work), and prints a table of median times and
// their ratio, with the engine's time under the tool's cap of 300 results
// besides (-capped). The queries are the arguments, or by default a
// literal, a word regexp and a case-insensitive alternation.
//
// The engine runs in this process, so its times leave out a process
// start that rg's include (about a millisecond); both read a warm page
// cache, as after the first run.
//
// -checkpoint runs a first checkpoint of the tree in the background the
// whole time, started again whenever it ends, as a daemon does after it
// starts on a workspace with no checkpoints: "full" at full speed (two
// walkers, no budget: the daemon before it paced its first checkpoint),
// "paced" held to checkpoint.DefaultPrimeShare of a core, "daemon" paced
// and paused while the engine runs, as the daemon pauses it for a tool
// call (checkpoint.Store.Busy).
//
// -process runs the engine as a child process of the program instead of
// in it, as rg runs: its times then include a process start as rg's do,
// and the CPU time (user + system) of each process is compared too, which
// the load of other processes on the machine moves far less than the wall
// time, and which the background checkpoint (in this process) does not
// enter.
//
//	go run ./bench/search -root "$(go env GOROOT)/src" [-runs 5] [-rg rg] [-capped=false] [-checkpoint off|full|paced|daemon] [-process] [query ...]
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cline-ls/cline-ls/checkpoint"
	"github.com/cline-ls/cline-ls/tools/search"
	"github.com/cline-ls/cline-ls/workspace"
)

func main() {
	root := flag.String("root", "", "folder to search (required)")
	runs := flag.Int("runs", 5, "runs per query and tool")
	rg := flag.String("rg", "rg", "ripgrep binary")
	capped := flag.Bool("capped", true, "also time the engine with the tool's default cap of 300 results")
	ckpt := flag.String("checkpoint", "off", "a first checkpoint running meanwhile: off, full, paced or daemon")
	flag.BoolVar(&asProcess, "process", false, "run the engine as a child process, as rg runs, and compare the CPU time (user + system) of both as well")
	once := flag.Bool("engine-once", false, "run the engine once on the query and print the number of matching lines (what -process runs)")
	flag.Parse()
	if *root == "" {
		fmt.Fprintln(os.Stderr, "search: -root is required")
		os.Exit(2)
	}
	if *once {
		res, err := engine(*root, flag.Arg(0), -1)
		if err != nil {
			fmt.Fprintln(os.Stderr, "search:", err)
			os.Exit(1)
		}
		fmt.Println(len(res.Queries[0].Matches))
		return
	}
	if *ckpt != "off" {
		stop, err := background(*root, *ckpt)
		if err != nil {
			fmt.Fprintln(os.Stderr, "search:", err)
			os.Exit(2)
		}
		defer stop()
	}
	queries := flag.Args()
	if len(queries) == 0 {
		queries = []string{`SetFinalizer`, `\bfunc\s+New\w+`, `(?i)(mutex|semaphore)`}
	}
	if err := run(*root, *rg, queries, *runs, *capped); err != nil {
		fmt.Fprintln(os.Stderr, "search:", err)
		os.Exit(1)
	}
}

// asProcess runs the engine as a child process (-process).
var asProcess bool

func run(root, rg string, queries []string, runs int, capped bool) error {
	fmt.Printf("tree: %s, %d interleaved runs each; median (fastest) wall time", root, runs)
	if asProcess {
		fmt.Printf("; the engine as a process; CPU is user + system time of each process, median")
	}
	fmt.Printf("\n\n| query | rg | cline-ls | ratio | cline-ls, first 300 | matching lines rg / cline-ls | CPU rg / cline-ls | CPU ratio |\n")
	fmt.Printf("|---|---|---|---|---|---|---|---|\n")
	for _, q := range queries {
		// One run of each first, so that both find the tree in the page
		// cache; it also checks that both find the same lines.
		if err := sameLines(rg, root, q); err != nil {
			return err
		}
		// The runs alternate between the tools, so that load from other
		// processes on the machine falls on both alike.
		var rgTimes, ourTimes, capTimes, rgCPU, ourCPU []time.Duration
		var rgLines, ourLines int
		for range runs {
			d, n, cpu, err := timeRG(rg, root, q)
			if err != nil {
				return err
			}
			rgTimes, rgLines, rgCPU = append(rgTimes, d), n, append(rgCPU, cpu)
			if asProcess {
				d, n, cpu, err = timeEngineProcess(root, q)
				ourCPU = append(ourCPU, cpu)
			} else {
				d, n, err = timeEngine(root, q, -1)
			}
			if err != nil {
				return err
			}
			ourTimes, ourLines = append(ourTimes, d), n
			if capped {
				if d, _, err = timeEngine(root, q, search.DefaultMaxResults); err != nil {
					return err
				}
				capTimes = append(capTimes, d)
			}
		}
		cappedCol := "–"
		if capped {
			cappedCol = summary(capTimes)
		}
		ratio := float64(median(ourTimes)) / float64(median(rgTimes))
		best := float64(slices.Min(ourTimes)) / float64(slices.Min(rgTimes))
		cpuCol, cpuRatio := ms(median(rgCPU))+" / –", "–"
		if asProcess {
			cpuCol = ms(median(rgCPU)) + " / " + ms(median(ourCPU))
			cpuRatio = fmt.Sprintf("%.2f×", float64(median(ourCPU))/float64(median(rgCPU)))
		}
		fmt.Printf("| `%s` | %s | %s | %.2f× (%.2f×) | %s | %d / %d | %s | %s |\n",
			q, summary(rgTimes), summary(ourTimes), ratio, best, cappedCol, rgLines, ourLines, cpuCol, cpuRatio)
	}
	return nil
}

// sameLines runs both tools once and fails unless they report the same
// matching lines (path and line number).
func sameLines(rg, root, query string) error {
	cmd := exec.Command(rg, rgArgs(root, query)...)
	out, err := cmd.Output()
	if err != nil && !(len(out) == 0 && cmd.ProcessState != nil && cmd.ProcessState.ExitCode() == 1) {
		return fmt.Errorf("%s: %w", rg, err)
	}
	theirs := map[string]bool{}
	if _, err := scanMatchLines(bytes.NewReader(out), func(path, line string) { theirs[path+":"+line] = true }); err != nil {
		return err
	}
	res, err := engine(root, query, -1)
	if err != nil {
		return err
	}
	ours := map[string]bool{}
	for _, m := range res.Queries[0].Matches {
		ours[fmt.Sprintf("%s:%d", m.Path, m.Line)] = true
	}
	var onlyRG, onlyOurs []string
	for k := range theirs {
		if !ours[k] {
			onlyRG = append(onlyRG, k)
		}
	}
	for k := range ours {
		if !theirs[k] {
			onlyOurs = append(onlyOurs, k)
		}
	}
	if len(onlyRG) > 0 || len(onlyOurs) > 0 {
		slices.Sort(onlyRG)
		slices.Sort(onlyOurs)
		return fmt.Errorf("query %q: rg and cline-ls found different lines (%d only rg's, such as %q; %d only ours, such as %q): the times would compare different work",
			query, len(onlyRG), onlyRG[:min(3, len(onlyRG))], len(onlyOurs), onlyOurs[:min(3, len(onlyOurs))])
	}
	return nil
}

// engine runs the engine as search_codebase does, less the output
// formatting, with max results per query (negative: all).
func engine(root, query string, max int) (*search.Result, error) {
	// A fresh matcher per run, as a new session would have: reading the
	// ignore files is part of the cost.
	ign := workspace.NewIgnoreMatcher([]string{root})
	return search.Search(context.Background(), search.Options{
		Root:       root,
		Queries:    []string{query},
		Ignored:    ign.Ignored,
		Context:    1,
		MaxResults: max,
	})
}

// busy is the checkpoint store's Busy in -checkpoint daemon mode.
var busy = func() func() { return func() {} }

// background runs first checkpoints of root one after another until
// stop is called, each in a new store, in the given mode.
func background(root, mode string) (stop func(), err error) {
	opts := checkpoint.Options{Folders: []string{root}}
	switch mode {
	case "full":
		opts.PrimeShare = 1
	case "paced", "daemon":
	default:
		return nil, fmt.Errorf("-checkpoint %q: want off, full, paced or daemon", mode)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	type store struct {
		*checkpoint.Store
		dir string
	}
	stores := make(chan store, 1)
	open := func() (store, error) {
		dir, err := os.MkdirTemp("", "bench-search-state-*")
		if err != nil {
			return store{}, err
		}
		opts.StateDir = dir
		st, err := checkpoint.Open(opts)
		if err != nil {
			os.RemoveAll(dir)
			return store{}, err
		}
		return store{st, dir}, nil
	}
	first, err := open()
	if err != nil {
		cancel()
		return nil, err
	}
	var mu sync.Mutex
	cur := first
	if mode == "daemon" {
		busy = func() func() {
			mu.Lock()
			defer mu.Unlock()
			return cur.Busy()
		}
	}
	stores <- first
	go func() {
		defer close(done)
		for st := range stores {
			if mode == "full" {
				// Before pacing: a checkpoint with every walker, at
				// full speed.
				st.Checkpoint(ctx, checkpoint.Request{SessionID: "bench"})
			} else {
				st.Prime(ctx, nil)
			}
			st.Close()
			os.RemoveAll(st.dir)
			if ctx.Err() != nil {
				return
			}
			next, err := open()
			if err != nil {
				fmt.Fprintln(os.Stderr, "search: checkpoint:", err)
				return
			}
			mu.Lock()
			cur = next
			mu.Unlock()
			stores <- next
		}
	}()
	return func() { cancel(); <-done }, nil
}

// timeEngine times engine and counts the lines it found.
func timeEngine(root, query string, max int) (time.Duration, int, error) {
	defer busy()()
	start := time.Now()
	res, err := engine(root, query, max)
	if err != nil {
		return 0, 0, err
	}
	return time.Since(start), len(res.Queries[0].Matches), nil
}

// timeEngineProcess times the engine run as a process of its own
// (-engine-once), so that its CPU time can be told from the background
// checkpoint's, and it pays for a process start as rg does.
func timeEngineProcess(root, query string) (time.Duration, int, time.Duration, error) {
	defer busy()()
	self, err := os.Executable()
	if err != nil {
		return 0, 0, 0, err
	}
	cmd := exec.Command(self, "-engine-once", "-root", root, query)
	cmd.Stderr = os.Stderr
	start := time.Now()
	out, err := cmd.Output()
	d := time.Since(start)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("the engine as a process: %w", err)
	}
	var n int
	if _, err := fmt.Sscan(string(out), &n); err != nil {
		return 0, 0, 0, fmt.Errorf("the engine as a process printed %q", out)
	}
	return d, n, cpuOf(cmd), nil
}

// cpuOf is the user and system time of a process that ended.
func cpuOf(cmd *exec.Cmd) time.Duration {
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// timeRG runs ripgrep with the engine's semantics: .gitignore honoured
// outside git repositories too, hidden files searched, one line of
// context. Its output is read and counted, as a caller would.
func timeRG(rg, root, query string) (time.Duration, int, time.Duration, error) {
	d, n, cmd, err := runRG(rg, root, query)
	if err != nil {
		return 0, 0, 0, err
	}
	return d, n, cpuOf(cmd), nil
}

func runRG(rg, root, query string) (time.Duration, int, *exec.Cmd, error) {
	args := rgArgs(root, query)
	cmd := exec.Command(rg, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, 0, nil, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, nil, fmt.Errorf("starting %s: %w", rg, err)
	}
	n, err := scanMatchLines(out, func(string, string) {})
	if err != nil {
		return 0, 0, nil, err
	}
	// rg exits with 1 when nothing matched.
	if err := cmd.Wait(); err != nil && !(n == 0 && cmd.ProcessState.ExitCode() == 1) {
		return 0, 0, nil, fmt.Errorf("%s %s: %w", rg, strings.Join(args, " "), err)
	}
	return time.Since(start), n, cmd, nil
}

// rg's field separators, set to control characters that neither paths
// nor source text hold, so that match and context lines can be told
// apart whatever the paths contain.
const (
	matchSep   = "\x1f"
	contextSep = "\x1e"
)

// rgArgs are rg's arguments for the engine's semantics.
func rgArgs(root, query string) []string {
	return []string{"--no-config", "--hidden", "--no-require-git", "-n", "--no-heading", "-C1",
		"--field-match-separator", matchSep, "--field-context-separator", contextSep, "-e", query, root}
}

// scanMatchLines counts rg's match lines, leaving out context lines and
// group separators, and gives each one's path and line number to match.
func scanMatchLines(r io.Reader, match func(path, line string)) (int, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	n := 0
	for sc.Scan() {
		line := sc.Bytes()
		if i := bytes.IndexAny(line, "\x1f\x1e"); i >= 0 && line[i] == 0x1f {
			n++
			num, _, _ := bytes.Cut(line[i+1:], []byte{0x1f})
			match(string(line[:i]), string(num))
		}
	}
	return n, sc.Err()
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func summary(ds []time.Duration) string {
	return fmt.Sprintf("%s (%s)", ms(median(ds)), ms(slices.Min(ds)))
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.0f ms", float64(d.Microseconds())/1000)
}
