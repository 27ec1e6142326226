// Command startup measures the daemon as an editor sees it: the time from
// starting the process to the initialize answer, and the resident memory
// once initialized and idle. It builds cline-ls (or takes the binary -bin
// names, to compare builds in one run), then starts it -n times. It also
// reports what each whole start (initialize, shutdown, exit) cost the
// process: its CPU time (user + system) and its page faults, from the
// kernel's accounting of the ended process; on a loaded machine the
// minimum and the lower quartile of the CPU time move less than the wall
// clock does.
//
//	go run ./bench/startup [-n 50] [-bin path]
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cline-ls/cline-ls/internal/jsonrpcclient"
)

func main() {
	n := flag.Int("n", 50, "number of starts")
	prebuilt := flag.String("bin", "", "measure these cline-ls binaries (comma-separated) instead of building one; starts alternate between them, so they share the machine's load")
	flag.Parse()
	dir, err := os.MkdirTemp("", "cline-ls-bench")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	var bins []string
	if *prebuilt != "" {
		bins = strings.Split(*prebuilt, ",")
	} else {
		bin := filepath.Join(dir, "cline-ls")
		if out, err := exec.Command("go", "build", "-o", bin, "./cmd/cline-ls").CombinedOutput(); err != nil {
			log.Fatalf("build: %v\n%s", err, out)
		}
		bins = []string{bin}
	}
	root := filepath.Join(dir, "ws")
	os.Mkdir(root, 0o755)
	initParams := map[string]any{"processId": nil, "rootUri": "file://" + root, "capabilities": map[string]any{}}

	times := make([][]time.Duration, len(bins))
	rss := make([][]memory, len(bins))
	cpus := make([][]time.Duration, len(bins))
	faults := make([][]int64, len(bins))
	for i := 0; i < *n; i++ {
		for b, bin := range bins {
			d, m, u, err := once(bin, initParams)
			if err != nil {
				log.Fatal(err)
			}
			times[b] = append(times[b], d)
			rss[b] = append(rss[b], m)
			cpus[b] = append(cpus[b], u.cpu)
			faults[b] = append(faults[b], u.faults)
		}
	}
	fmt.Printf("starts: %d each\n", *n)
	for b, bin := range bins {
		ts, ms := times[b], rss[b]
		slices.Sort(ts)
		slices.SortFunc(ms, func(x, y memory) int { return x.rss - y.rss })
		m := ms[len(ms)/2]
		if len(bins) > 1 {
			fmt.Printf("%s:\n", bin)
		}
		fmt.Printf("start → initialize answered: median %v, p90 %v, min %v\n",
			ts[len(ts)/2].Round(10*time.Microsecond), ts[len(ts)*9/10].Round(10*time.Microsecond), ts[0].Round(10*time.Microsecond))
		fmt.Printf("idle RSS after initialize: median %.1f MB (VmRSS %d kB: RssAnon %d kB, RssFile %d kB)\n",
			float64(m.rss)/1024, m.rss, m.anon, m.file)
		cs, fs := cpus[b], faults[b]
		slices.Sort(cs)
		slices.Sort(fs)
		fmt.Printf("CPU of a whole start (user + system): median %v, p25 %v, min %v; page faults: median %d\n",
			cs[len(cs)/2].Round(10*time.Microsecond), cs[len(cs)/4].Round(10*time.Microsecond), cs[0].Round(10*time.Microsecond), fs[len(fs)/2])
	}
}

// usage is what a whole start cost the ended process.
type usage struct {
	cpu    time.Duration // user + system
	faults int64         // minor and major page faults
}

// once starts the daemon, sends initialize, waits for the answer, lets it
// settle, reads its RSS and ends it with shutdown and exit.
func once(bin string, initParams any) (time.Duration, memory, usage, error) {
	cmd := exec.Command(bin, "--log-level=error")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a failure guard
	defer cancel()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, memory{}, usage{}, err
	}
	c := jsonrpcclient.New(stdout, stdin, jsonrpcclient.Options{Discard: true})
	if err := c.Call(ctx, "initialize", initParams, nil); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return 0, memory{}, usage{}, fmt.Errorf("initialize: %w", err)
	}
	elapsed := time.Since(start)
	time.Sleep(100 * time.Millisecond) // idle: let start-up garbage settle
	mem := readMemory(cmd.Process.Pid)
	if err := c.Call(ctx, "shutdown", nil, nil); err != nil {
		return 0, memory{}, usage{}, fmt.Errorf("shutdown: %w", err)
	}
	c.Notify(ctx, "exit", nil)
	c.Close()
	<-c.Done()
	if err := cmd.Wait(); err != nil {
		return 0, memory{}, usage{}, fmt.Errorf("daemon exit: %w", err)
	}
	return elapsed, mem, usageOf(cmd.ProcessState), nil
}

// memory is a process's resident set in kB: all of it, its anonymous
// pages (heap, stacks) and its file-backed pages (the binary's, shared
// with the page cache).
type memory struct{ rss, anon, file int }

func readMemory(pid int) memory {
	m := memory{rss: -1, anon: -1, file: -1}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return m
	}
	for _, line := range strings.Split(string(data), "\n") {
		key, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
		switch key {
		case "VmRSS":
			m.rss = kb
		case "RssAnon":
			m.anon = kb
		case "RssFile":
			m.file = kb
		}
	}
	return m
}
