// Command startup measures the daemon as an editor sees it: the time from
// starting the process to the initialize answer, and the resident memory
// once initialized and idle. It builds cline-ls (or takes the binary -bin
// names, to compare builds in one run), then starts it -n times.
//
//	go run ./bench/startup [-n 50] [-bin path]
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	n := flag.Int("n", 50, "number of starts")
	prebuilt := flag.String("bin", "", "measure this cline-ls binary instead of building one")
	flag.Parse()
	dir, err := os.MkdirTemp("", "cline-ls-bench")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bin := *prebuilt
	if bin == "" {
		bin = filepath.Join(dir, "cline-ls")
		if out, err := exec.Command("go", "build", "-o", bin, "./cmd/cline-ls").CombinedOutput(); err != nil {
			log.Fatalf("build: %v\n%s", err, out)
		}
	}
	root := filepath.Join(dir, "ws")
	os.Mkdir(root, 0o755)
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":"file://%s","capabilities":{}}}`, root)
	initFrame := fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)

	var times []time.Duration
	var rss []int
	for i := 0; i < *n; i++ {
		d, kb, err := once(bin, initFrame)
		if err != nil {
			log.Fatal(err)
		}
		times = append(times, d)
		rss = append(rss, kb)
	}
	slices.Sort(times)
	slices.Sort(rss)
	fmt.Printf("starts: %d\n", *n)
	fmt.Printf("start → initialize answered: median %v, p90 %v, min %v\n",
		times[len(times)/2].Round(10*time.Microsecond), times[len(times)*9/10].Round(10*time.Microsecond), times[0].Round(10*time.Microsecond))
	fmt.Printf("idle RSS after initialize: median %.1f MB (VmRSS %d kB)\n", float64(rss[len(rss)/2])/1024, rss[len(rss)/2])
}

// once starts the daemon, sends initialize, waits for the answer, lets it
// settle, reads its RSS and ends it with shutdown and exit.
func once(bin, initFrame string) (time.Duration, int, error) {
	cmd := exec.Command(bin, "--log-level=error")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	io.WriteString(stdin, initFrame)
	r := bufio.NewReader(stdout)
	length := 0
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return 0, 0, fmt.Errorf("reading answer: %w", err)
		}
		line = strings.TrimSpace(line)
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			length, _ = strconv.Atoi(v)
		}
	}
	if _, err := io.CopyN(io.Discard, r, int64(length)); err != nil {
		return 0, 0, err
	}
	elapsed := time.Since(start)
	time.Sleep(100 * time.Millisecond) // idle: let start-up garbage settle
	kb := vmRSS(cmd.Process.Pid)
	for _, b := range []string{`{"jsonrpc":"2.0","id":2,"method":"shutdown"}`, `{"jsonrpc":"2.0","method":"exit"}`} {
		fmt.Fprintf(stdin, "Content-Length: %d\r\n\r\n%s", len(b), b)
	}
	stdin.Close()
	io.Copy(io.Discard, r)
	if err := cmd.Wait(); err != nil {
		return 0, 0, fmt.Errorf("daemon exit: %w", err)
	}
	return elapsed, kb, nil
}

func vmRSS(pid int) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return kb
		}
	}
	return -1
}
