// Command sessions measures the daemon under many concurrent agent
// sessions: -sessions sessions (100 by default) of -calls scripted tool
// calls each (20 by default), all at once, through the real server
// (rpc.NewServer and Serve over a net.Pipe) and the replay model, from an
// in-process client speaking JSON-RPC as an editor does. With -daemon the
// daemon is a separate process instead, the cline-ls binary given, over its
// stdin and stdout as an editor starts it; the client and the daemon then
// share the cores as two processes, not one Go scheduler.
//
//	go run ./bench/sessions [-sessions 100] [-calls 20] [-daemon cline-ls]
//		[-model-wait d] [-model-jitter d] [-cpuprofile f] [-memprofile f] [-trace f]
//
// The replay model answers at once unless -model-wait and -model-jitter
// give each reply a time to first token, as a real model's: the wait plus a
// random part of up to the jitter, drawn anew for every reply, so that the
// sessions drift apart as real ones do. At once, the sessions keep both
// cores busy and the latencies are mostly waiting for a core; with a
// model's pace, they show what the daemon adds to a call when it is not
// saturated.
//
// -trace writes an execution trace in which the daemon marks each tool
// call update it sends and the client each one it receives;
// bench/tailtrace reads it and tells what the slowest calls waited on.
//
// Every session runs the same transcript (each gets its own replay
// instance, starting at the first reply): -calls replies of one read-only
// tool call each (read_files, list_files and search_codebase on a small
// workspace, which the default policy runs without asking), then a
// plain-text reply that ends the turn. Each reply after a call checks that the previous call's
// result reached the model.
//
// It prints, as Markdown: the wall time, sessions/s and tool calls/s; the
// latency of a tool call as the client sees it, from the session/update
// "tool_call" (pending) to the "tool_call_update" completing it, next to
// the cost of the same calls made directly on the tools package, and the
// difference (the daemon's added latency); peak and final RSS; and
// goroutine counts before the server starts, at the peak, and after
// shutdown and exit. It exits 1 if a session does not end with end_turn
// and exactly -calls completed calls, or if goroutines are left behind.
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cline-ls/cline-ls/internal/jsonrpcclient"
	"github.com/cline-ls/cline-ls/provider"
	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/tools/toolstest"
	"github.com/cline-ls/cline-ls/workspace"
)

// workspaceFiles is the benchmark's workspace: a few small files.
var workspaceFiles = map[string]string{
	"go.mod":             "module example.com/bench\n\ngo 1.22\n",
	"main.go":            "package main\n\nimport \"fmt\"\n\n// markerMain\nfunc main() {\n\tfmt.Println(greet(\"bench\"))\n}\n",
	"greet.go":           "package main\n\n// greet says hello. markerGreet\nfunc greet(name string) string {\n\treturn \"Hello, \" + name + \"!\"\n}\n",
	"README.md":          "# bench\n\nA tiny workspace for the sessions benchmark. markerReadme\n",
	"internal/util.go":   "package internal\n\n// Max returns the larger of a and b. markerUtil\nfunc Max(a, b int) int {\n\tif a > b {\n\t\treturn a\n\t}\n\treturn b\n}\n",
	"internal/util_test": "package internal\n",
}

// scriptedCall is one tool call of the transcript and a string its result
// must contain.
type scriptedCall struct {
	name   string
	args   map[string]any
	expect string
}

// script is the cycle of calls a session makes.
var script = []scriptedCall{
	{tools.NameReadFiles, map[string]any{"files": []any{map[string]any{"path": "main.go"}}}, "markerMain"},
	{tools.NameListFiles, map[string]any{"path": "."}, "greet.go"},
	{tools.NameReadFiles, map[string]any{"files": []any{map[string]any{"path": "greet.go", "start_line": 3, "end_line": 5}}}, "markerGreet"},
	{tools.NameListFiles, map[string]any{"path": "internal"}, "util.go"},
	{tools.NameReadFiles, map[string]any{"files": []any{map[string]any{"path": "README.md"}, map[string]any{"path": "internal/util.go"}}}, "markerUtil"},
	{tools.NameListFiles, map[string]any{"path": ".", "recursive": true}, "util.go"},
	{tools.NameSearchCodebase, map[string]any{"queries": []any{"markerGreet"}}, "greet.go"},
	{tools.NameSearchCodebase, map[string]any{"queries": []any{"func Max", "Println"}, "file_pattern": "*.go"}, "util.go"},
}

func main() {
	nSessions := flag.Int("sessions", 100, "number of concurrent sessions")
	nCalls := flag.Int("calls", 20, "tool calls per session")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the daemon's run to `file`")
	traceFile := flag.String("trace", "", "write an execution trace of the daemon's run to `file` (bench/tailtrace reads it)")
	memProfile := flag.String("memprofile", "", "write a profile of what the whole run allocated to `file`")
	daemon := flag.String("daemon", "", "run the daemon as a separate process: the cline-ls `binary`, over its stdin and stdout")
	modelWait := flag.Duration("model-wait", 0, "the replay model's time to first token for each reply")
	modelJitter := flag.Duration("model-jitter", 0, "a random part of up to this added to each reply's wait")
	flag.Parse()
	if *nSessions < 1 || *nCalls < 1 {
		fmt.Fprintln(os.Stderr, "sessions: -sessions and -calls must be at least 1")
		os.Exit(2)
	}
	if *modelWait < 0 || *modelJitter < 0 || *modelWait+*modelJitter > provider.MaxWait {
		fmt.Fprintf(os.Stderr, "sessions: -model-wait and -model-jitter must be at least 0 and at most %v in all (the replay model's limit)\n", provider.MaxWait)
		os.Exit(2)
	}
	if *daemon != "" && (*cpuProfile != "" || *traceFile != "" || *memProfile != "") {
		fmt.Fprintln(os.Stderr, "sessions: the profiles cover an in-process daemon: -cpuprofile, -trace and -memprofile go without -daemon")
		os.Exit(2)
	}
	code := run(config{sessions: *nSessions, calls: *nCalls, daemon: *daemon, wait: *modelWait, jitter: *modelJitter,
		cpuProfile: *cpuProfile, traceFile: *traceFile})
	if *memProfile != "" {
		if err := writeAllocs(*memProfile); err != nil {
			code = fail(err)
		}
	}
	os.Exit(code)
}

// config is what the flags ask for.
type config struct {
	sessions, calls       int
	daemon                string        // the binary to run as a separate process, or ""
	wait, jitter          time.Duration // the replay model's time to first token
	cpuProfile, traceFile string
}

// run does the benchmark and returns the exit code. The CPU profile and
// the execution trace, when asked for, cover the daemon's run from
// initialize to exit, not the direct calls before it.
func run(cfg config) int {
	nSessions, nCalls, daemon := cfg.sessions, cfg.calls, cfg.daemon
	dir, err := os.MkdirTemp("", "cline-ls-bench-sessions-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(dir)
	ws := filepath.Join(dir, "ws")
	for name, text := range workspaceFiles {
		p := filepath.Join(ws, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fail(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			return fail(err)
		}
	}
	tr := filepath.Join(dir, "transcript.json")
	if err := os.WriteFile(tr, transcript(nCalls, cfg.wait, cfg.jitter), 0o644); err != nil {
		return fail(err)
	}

	// The tools' own cost, before anything of the daemon runs: one at a
	// time, and with the daemon run's concurrency (the same queueing for
	// the two cores, without the daemon).
	direct, err := directCost(ws, nCalls, max(nSessions*nCalls, 2000))
	if err != nil {
		return fail(fmt.Errorf("direct tool calls: %w", err))
	}
	directLoaded, err := directConcurrent(ws, nSessions, nCalls)
	if err != nil {
		return fail(fmt.Errorf("direct tool calls, concurrent: %w", err))
	}

	runtime.GC()
	baseline := runtime.NumGoroutine()

	stop, err := startProfiles(cfg.cpuProfile, cfg.traceFile)
	if err != nil {
		return fail(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c, err := startClient(daemon, dir)
	if err != nil {
		return fail(err)
	}
	settings := map[string]any{
		"provider": map[string]any{"name": "replay", "transcript": tr},
		"stateDir": filepath.Join(dir, "state"),
	}
	if err := c.initialize(ctx, ws, settings); err != nil {
		return fail(fmt.Errorf("initialize: %w", err))
	}

	type outcome struct {
		id, stop string
		err      error
	}
	outcomes := make([]outcome, nSessions)
	var ready, wg sync.WaitGroup
	startGate := make(chan struct{})
	ready.Add(nSessions)
	wg.Add(nSessions)
	for i := range nSessions {
		go func() {
			defer wg.Done()
			ready.Done()
			<-startGate
			o := &outcomes[i]
			var created struct {
				SessionID string `json:"sessionId"`
			}
			if o.err = c.call(ctx, "session/new", map[string]any{"cwd": ws, "mode": "act", "mcpServers": []any{}}, &created); o.err != nil {
				return
			}
			o.id = created.SessionID
			var res struct {
				StopReason string `json:"stopReason"`
			}
			o.err = c.call(ctx, "session/prompt", map[string]any{"sessionId": o.id,
				"prompt": []any{map[string]any{"type": "text", "text": fmt.Sprintf("Benchmark task %d: look around the workspace.", i)}}}, &res)
			o.stop = res.StopReason
		}()
	}
	ready.Wait()
	var ms0 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	cpu0, daemonCPU0 := cpuTime(), c.daemonCPU()
	start := time.Now()
	close(startGate)
	wg.Wait()
	wall := time.Since(start)
	cpu, daemonCPU := cpuTime()-cpu0, c.daemonCPU()-daemonCPU0
	daemonHWM := c.daemonStatus("VmHWM")
	var ms1 runtime.MemStats
	runtime.ReadMemStats(&ms1)
	gc := gcData{cycles: ms1.NumGC - ms0.NumGC, pauses: time.Duration(ms1.PauseTotalNs - ms0.PauseTotalNs),
		allocated: ms1.TotalAlloc - ms0.TotalAlloc}

	code, closeErr := c.close(ctx)
	if err := stop(); err != nil {
		return fail(err)
	}
	settled, after := settle(baseline, 5*time.Second)
	hwm, rssAfter := procStatus("VmHWM"), procStatus("VmRSS")
	debug.FreeOSMemory() // a GC, then memory handed back to the OS
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rssFreed := procStatus("VmRSS")

	// Check every session.
	var problems []string
	c.mu.Lock()
	for i, o := range outcomes {
		st := c.bySession[o.id]
		switch {
		case o.err != nil:
			problems = append(problems, fmt.Sprintf("session %d (%s): %v", i, o.id, o.err))
		case o.stop != "end_turn":
			problems = append(problems, fmt.Sprintf("session %d (%s): stopReason %q, want end_turn", i, o.id, o.stop))
		case st == nil:
			problems = append(problems, fmt.Sprintf("session %d (%s): no session/update received", i, o.id))
		case st.pending != nCalls || st.completed != nCalls || st.failed != 0:
			problems = append(problems, fmt.Sprintf("session %d (%s): %d tool_call, %d completed, %d failed; want %d, %d, 0",
				i, o.id, st.pending, st.completed, st.failed, nCalls, nCalls))
		}
	}
	if len(c.unpaired) > 0 {
		problems = append(problems, fmt.Sprintf("%d tool calls never completed", len(c.unpaired)))
	}
	if c.unexpected != 0 {
		problems = append(problems, fmt.Sprintf("%d unexpected requests from the server (%s)", c.unexpected, strings.Join(c.unexpectedMethods, ", ")))
	}
	latencies := slices.Clone(c.latencies)
	c.mu.Unlock()
	if code != 0 || closeErr != nil {
		problems = append(problems, fmt.Sprintf("server exit code %d, err %v", code, closeErr))
	}

	report(os.Stdout, reportData{
		sessions: nSessions, calls: nCalls, daemon: daemon, wait: cfg.wait, jitter: cfg.jitter, wall: wall, cpu: cpu, daemonCPU: daemonCPU, daemonHWM: daemonHWM,
		latencies: latencies, direct: direct, directLoaded: directLoaded,
		hwm: hwm, rssAfter: rssAfter, rssFreed: rssFreed, heapAfter: ms.HeapAlloc,
		frames: c.frames.Load(), gc: gc,
		baseline: baseline, peak: int(c.peakGoroutines.Load()), after: after, settled: settled,
	})

	if len(problems) > 0 {
		fmt.Fprintln(os.Stderr, "\nFAILED:")
		for i, p := range problems {
			if i == 20 {
				fmt.Fprintf(os.Stderr, "  … and %d more\n", len(problems)-i)
				break
			}
			fmt.Fprintln(os.Stderr, "  "+p)
		}
	}
	if !settled {
		fmt.Fprintf(os.Stderr, "\nFAILED: %d goroutines remain after shutdown, baseline %d; their stacks:\n", after, baseline)
		pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
	}
	if len(problems) > 0 || !settled {
		return 1
	}
	return 0
}

// startProfiles starts the CPU profile and the execution trace that are
// asked for and returns the function that stops them and closes their
// files.
func startProfiles(cpuProfile, traceFile string) (func() error, error) {
	var files []*os.File
	var stops []func()
	stopAll := func() error {
		for _, s := range stops {
			s()
		}
		var errs []error
		for _, f := range files {
			errs = append(errs, f.Close())
		}
		return errors.Join(errs...)
	}
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
		if err := pprof.StartCPUProfile(f); err != nil {
			stopAll()
			return nil, err
		}
		stops = append(stops, pprof.StopCPUProfile)
	}
	if traceFile != "" {
		f, err := os.Create(traceFile)
		if err != nil {
			stopAll()
			return nil, err
		}
		files = append(files, f)
		if err := trace.Start(f); err != nil {
			stopAll()
			return nil, err
		}
		stops = append(stops, trace.Stop)
	}
	return stopAll, nil
}

// writeAllocs writes the allocation profile of the process so far.
func writeAllocs(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func fail(err error) int {
	fmt.Fprintln(os.Stderr, "sessions:", err)
	return 1
}

// transcript returns the replay transcript: nCalls replies of one tool
// call each, cycling through script, each after the first checking the
// previous call's result, then a plain-text reply ending the turn. Each
// reply starts with a wait of wait plus up to jitter, if either is set.
func transcript(nCalls int, wait, jitter time.Duration) []byte {
	type obj = map[string]any
	replies := make([]obj, 0, nCalls+1)
	for i := range nCalls + 1 {
		r := obj{}
		if i > 0 {
			r["expect"] = obj{"last_tool_result_contains": script[(i-1)%len(script)].expect, "last_tool_result_is_error": false}
		}
		var events []obj
		if wait > 0 || jitter > 0 {
			events = append(events, obj{"wait": obj{"ms": wait.Milliseconds(), "jitter_ms": jitter.Milliseconds()}})
		}
		if i == nCalls {
			events = append(events, obj{"text": "Done: I looked around the workspace."}, obj{"usage": obj{"input_tokens": 1000, "output_tokens": 10}})
		} else {
			sc := script[i%len(script)]
			events = append(events,
				obj{"text": fmt.Sprintf("Step %d.", i+1)},
				obj{"tool_call": obj{"id": fmt.Sprintf("call_%d", i+1), "name": sc.name, "args": sc.args}},
				obj{"usage": obj{"input_tokens": 1000 + 10*i, "output_tokens": 20}},
			)
		}
		r["events"] = events
		replies = append(replies, r)
	}
	b, err := json.Marshal(obj{"model": "replay-bench", "replies": replies})
	if err != nil {
		panic(err)
	}
	return b
}

// directCost times the scripted calls made straight on the tools package
// (Build, Describe, Execute, as the scheduler does) over toolstest.Files,
// n times in the order a session makes them, after one warm-up round of
// the script, and returns the sorted durations.
func directCost(ws string, nCalls, n int) ([]time.Duration, error) {
	byName, err := scriptTools(ws)
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	out := make([]time.Duration, 0, n)
	for i := range n + len(script) { // the first len(script) calls warm up
		sc := script[(i%nCalls)%len(script)]
		args, _ := json.Marshal(sc.args)
		start := time.Now()
		inv, err := byName[sc.name].Build(args)
		if err != nil {
			return nil, err
		}
		inv.Describe(ctx)
		res, err := inv.Execute(ctx, tools.ExecOptions{})
		d := time.Since(start)
		if err != nil {
			return nil, err
		}
		if res.IsError || !strings.Contains(res.Content, sc.expect) {
			return nil, fmt.Errorf("%s %s: result lacks %q: %s", sc.name, args, sc.expect, res.Content)
		}
		if i >= len(script) {
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return out, nil
}

// scriptTools returns the script's tools, by name, over toolstest.Files
// of the workspace ws.
func scriptTools(ws string) (map[string]tools.Tool, error) {
	files, err := toolstest.New(ws)
	if err != nil {
		return nil, err
	}
	impls := tools.WorkspaceTools(files)
	byName := map[string]tools.Tool{}
	for _, sc := range script {
		if byName[sc.name] == nil {
			t, err := tools.Builtin(sc.name, impls[sc.name])
			if err != nil {
				return nil, err
			}
			byName[sc.name] = t
		}
	}
	return byName, nil
}

// directConcurrent times the scripted calls as the daemon run makes them:
// sessions goroutines, started together, each making its calls in a
// session's order straight on the tools package. It returns the sorted
// durations of every call.
func directConcurrent(ws string, sessions, nCalls int) ([]time.Duration, error) {
	byName, err := scriptTools(ws)
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	var (
		mu   sync.Mutex
		out  = make([]time.Duration, 0, sessions*nCalls)
		errs []error
		wg   sync.WaitGroup
	)
	start := make(chan struct{})
	for range sessions {
		wg.Go(func() {
			<-start
			for i := range nCalls {
				sc := script[i%len(script)]
				args, _ := json.Marshal(sc.args)
				t0 := time.Now()
				inv, err := byName[sc.name].Build(args)
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
				inv.Describe(ctx)
				res, err := inv.Execute(ctx, tools.ExecOptions{})
				d := time.Since(t0)
				mu.Lock()
				if err != nil || res.IsError {
					errs = append(errs, fmt.Errorf("%s %s: %v %s", sc.name, args, err, res.Content))
				}
				out = append(out, d)
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	if len(errs) > 0 {
		return nil, errs[0]
	}
	slices.Sort(out)
	return out, nil
}

// settle waits up to limit for the goroutines to return to baseline and
// reports whether they did, and how many there are.
func settle(baseline int, limit time.Duration) (bool, int) {
	deadline := time.Now().Add(limit)
	for {
		n := runtime.NumGoroutine()
		if n <= baseline {
			return true, n
		}
		if time.Now().After(deadline) {
			return false, n
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// cpuTime returns the user and system CPU time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// procStatus returns a field of /proc/self/status in kB, or -1.
func procStatus(field string) int { return procStatusOf("/proc/self/status", field) }

// procStatusOf returns a field of the /proc status file path in kB, or -1.
func procStatusOf(path, field string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return -1
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if err != nil {
				return -1
			}
			return kb
		}
	}
	return -1
}

// client is an editor-like client of the real server, in this process
// over a pipe or a separate process over its stdio, that records the tool
// calls of every session.
type client struct {
	conn   *jsonrpcclient.Client
	served chan serveResult
	proc   *os.Process // the daemon's, or nil when it runs in this process

	peakGoroutines atomic.Int64
	frames         atomic.Int64 // messages received from the server

	mu                sync.Mutex
	bySession         map[string]*sessionStats
	unpaired          map[callKey]time.Time // tool_call seen, completion not yet
	latencies         []time.Duration
	unexpected        int
	unexpectedMethods []string
}

type serveResult struct {
	code int
	err  error
}

// callKey names a tool call: call ids repeat across sessions.
type callKey struct{ session, call string }

// sessionStats counts one session's tool call updates.
type sessionStats struct {
	pending, completed, failed int
}

// startClient starts a server and connects a client to it: in this
// process when daemon is "", else the binary daemon as a child whose
// configuration and state live under dir.
func startClient(daemon, dir string) (*client, error) {
	c := &client{served: make(chan serveResult, 1), bySession: map[string]*sessionStats{}, unpaired: map[callKey]time.Time{}}
	if daemon != "" {
		return c, c.startProcess(daemon, dir)
	}
	srvEnd, cliEnd := net.Pipe()
	srv := rpc.NewServer(rpc.Options{
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
		Version: "bench",
		Getenv:  func(string) string { return "" },
	})
	go func() {
		code, err := srv.Serve(context.Background(), srvEnd, srvEnd)
		srvEnd.Close()
		c.served <- serveResult{code, err}
	}()
	// The client keeps no messages: it only times and counts them as they
	// come; the server's requests, none expected, are answered -32601.
	c.conn = jsonrpcclient.New(cliEnd, cliEnd, jsonrpcclient.Options{Observe: c.observe, Discard: true})
	return c, nil
}

// startProcess starts the binary daemon as an editor does, `serve` over
// its stdin and stdout, with an environment of its own: no user
// configuration, state under dir, errors only on stderr. Its exit code
// reaches c.served.
func (c *client) startProcess(daemon, dir string) error {
	cmd := exec.Command(daemon, "serve", "--log-level=error")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir,
		"XDG_CONFIG_HOME=" + filepath.Join(dir, "config"), "XDG_STATE_HOME=" + filepath.Join(dir, "state")}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the daemon: %w", err)
	}
	c.proc = cmd.Process
	c.conn = jsonrpcclient.New(stdout, stdin, jsonrpcclient.Options{Observe: c.observe, Discard: true})
	go func() {
		<-c.conn.Done() // the daemon's stdout ended: it is exiting
		err := cmd.Wait()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			err = nil // the exit code tells
		}
		c.served <- serveResult{cmd.ProcessState.ExitCode(), err}
	}()
	return nil
}

// daemonCPU returns the user and system CPU time the daemon's process has
// used, in clock ticks of 10 ms, or 0 when the daemon is in this process.
func (c *client) daemonCPU() time.Duration {
	if c.proc == nil {
		return 0
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.proc.Pid))
	if err != nil {
		return 0
	}
	// The fields after the command's parenthesis: state is the 3rd of
	// the line, utime and stime the 14th and 15th.
	_, rest, ok := strings.Cut(string(data), ") ")
	f := strings.Fields(rest)
	if !ok || len(f) < 13 {
		return 0
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// daemonStatus returns a field of the daemon process's /proc status in
// kB, or -1 (also when the daemon is in this process).
func (c *client) daemonStatus(field string) int {
	if c.proc == nil {
		return -1
	}
	return procStatusOf(fmt.Sprintf("/proc/%d/status", c.proc.Pid), field)
}

// initialize sends initialize and initialized.
func (c *client) initialize(ctx context.Context, root string, settings map[string]any) error {
	params := map[string]any{
		"processId":        os.Getpid(),
		"clientInfo":       map[string]any{"name": "bench-sessions"},
		"workspaceFolders": []any{map[string]any{"uri": workspace.PathToURI(root), "name": "ws"}},
		"capabilities": map[string]any{
			"general":      map[string]any{"positionEncodings": []string{"utf-8", "utf-16"}},
			"experimental": map[string]any{"cline": map[string]any{"approvals": true, "diffs": true}},
		},
		"initializationOptions": settings,
	}
	if err := c.call(ctx, "initialize", params, nil); err != nil {
		return err
	}
	return c.conn.Notify(ctx, "initialized", map[string]any{})
}

// call makes a request.
func (c *client) call(ctx context.Context, method string, params, result any) error {
	return c.conn.Call(ctx, method, params, result)
}

// close sends shutdown and exit, waits for Serve to return, then closes
// the client's end.
func (c *client) close(ctx context.Context) (int, error) {
	var errs []error
	if err := c.call(ctx, "shutdown", nil, nil); err != nil {
		errs = append(errs, fmt.Errorf("shutdown: %w", err))
	}
	if err := c.conn.Notify(ctx, "exit", nil); err != nil {
		errs = append(errs, fmt.Errorf("exit: %w", err))
	}
	if c.proc != nil {
		c.conn.Close() // the daemon's stdin ends with exit
	}
	var r serveResult
	select {
	case r = <-c.served:
	case <-ctx.Done():
		if c.proc != nil {
			c.proc.Kill()
		}
		return -1, errors.Join(append(errs, errors.New("the server did not return"))...)
	}
	if r.err != nil {
		errs = append(errs, fmt.Errorf("the server: %w", r.err))
	}
	c.conn.Close()
	<-c.conn.Done()
	return r.code, errors.Join(errs...)
}

// observe sees what the server sends. It runs on the read loop, so it
// only notes the time and counts.
func (c *client) observe(m jsonrpcclient.Message) {
	now := time.Now()
	c.frames.Add(1)
	switch m.Method {
	case "session/update":
		var p struct {
			SessionID string `json:"sessionId"`
			Update    struct {
				Kind   string `json:"sessionUpdate"`
				ID     string `json:"toolCallId"`
				Status string `json:"status"`
			} `json:"update"`
		}
		if err := json.Unmarshal(m.Params, &p); err != nil {
			return
		}
		if trace.IsEnabled() && (p.Update.Kind == "tool_call" || p.Update.Kind == "tool_call_update") {
			// The daemon marks the same update's sending ("tool update").
			trace.Log(context.Background(), "tool seen", p.SessionID+" "+p.Update.ID+" "+p.Update.Status)
		}
		switch p.Update.Kind {
		case "tool_call":
			c.notePeak()
			c.mu.Lock()
			c.stats(p.SessionID).pending++
			c.unpaired[callKey{p.SessionID, p.Update.ID}] = now
			c.mu.Unlock()
		case "tool_call_update":
			if p.Update.Status != "completed" && p.Update.Status != "failed" {
				return
			}
			k := callKey{p.SessionID, p.Update.ID}
			c.mu.Lock()
			st := c.stats(p.SessionID)
			if p.Update.Status == "failed" {
				st.failed++
			} else {
				st.completed++
			}
			if t, ok := c.unpaired[k]; ok {
				c.latencies = append(c.latencies, now.Sub(t))
				delete(c.unpaired, k)
			}
			c.mu.Unlock()
		}
		return
	case "window/logMessage", "window/showMessage", "$/logTrace", "$/progress", "cline/diff":
		return
	}
	c.mu.Lock()
	c.unexpected++
	c.unexpectedMethods = append(c.unexpectedMethods, m.Method)
	c.mu.Unlock()
}

func (c *client) stats(id string) *sessionStats {
	st := c.bySession[id]
	if st == nil {
		st = &sessionStats{}
		c.bySession[strings.Clone(id)] = st
	}
	return st
}

// notePeak records the goroutine count if it is the highest seen.
func (c *client) notePeak() {
	n := int64(runtime.NumGoroutine())
	for {
		old := c.peakGoroutines.Load()
		if n <= old || c.peakGoroutines.CompareAndSwap(old, n) {
			return
		}
	}
}

// gcData is what the collector did during the sessions.
type gcData struct {
	cycles    uint32
	pauses    time.Duration // stop-the-world pauses, summed
	allocated uint64        // bytes
}

// reportData is what the report prints.
type reportData struct {
	sessions, calls         int
	daemon                  string // the binary run as a separate process, or ""
	wait, jitter            time.Duration
	wall, cpu, daemonCPU    time.Duration
	daemonHWM               int             // kB, -1 when the daemon is in this process
	latencies, direct       []time.Duration // direct is sorted
	directLoaded            []time.Duration // sorted: the tools alone with the same concurrency
	hwm, rssAfter, rssFreed int             // kB
	heapAfter               uint64          // bytes
	frames                  int64           // messages the server sent the client
	gc                      gcData
	baseline, peak, after   int
	settled                 bool
}

// report prints the results as Markdown.
func report(w io.Writer, d reportData) {
	slices.Sort(d.latencies)
	total := d.sessions * d.calls
	args := ""
	if d.sessions != 100 {
		args += fmt.Sprintf(" -sessions %d", d.sessions)
	}
	if d.calls != 20 {
		args += fmt.Sprintf(" -calls %d", d.calls)
	}
	if d.daemon != "" {
		args += " -daemon " + d.daemon
	}
	if d.wait > 0 || d.jitter > 0 {
		args += fmt.Sprintf(" -model-wait %v -model-jitter %v", d.wait, d.jitter)
	}
	fmt.Fprintf(w, "Command: `go run ./bench/sessions%s`\n\n", args)
	fmt.Fprintf(w, "Machine: %d CPUs (nproc %s, GOMAXPROCS %d), %s, %s/%s, %s\n\n",
		runtime.NumCPU(), nproc(), runtime.GOMAXPROCS(0), runtime.Version(), runtime.GOOS, runtime.GOARCH, cpuModel())
	where := "the daemon in this process over a pipe"
	if d.daemon != "" {
		where = "the daemon a separate process over its stdio"
	}
	pace := "answering at once"
	if d.wait > 0 || d.jitter > 0 {
		pace = fmt.Sprintf("each reply after %v plus up to %v", d.wait, d.jitter)
	}
	fmt.Fprintf(w, "%d concurrent sessions × %d tool calls (read_files, list_files, search_codebase; replay model %s) on one connection, %s; %d tool calls in all.\n\n",
		d.sessions, d.calls, pace, where, total)

	fmt.Fprintln(w, "| Measure | Value |")
	fmt.Fprintln(w, "|---|---|")
	fmt.Fprintf(w, "| Wall time (session/new + prompt, all sessions) | %s |\n", fmtDur(d.wall))
	fmt.Fprintf(w, "| Sessions/s | %.1f |\n", float64(d.sessions)/d.wall.Seconds())
	fmt.Fprintf(w, "| Tool calls/s | %.0f |\n", float64(total)/d.wall.Seconds())
	fmt.Fprintf(w, "| Mean round per session (model reply + its tool call: wall / %d) | %s |\n", d.calls+1, fmtDur(d.wall/time.Duration(d.calls+1)))
	if d.daemon == "" {
		fmt.Fprintf(w, "| CPU used during the sessions (user+sys, whole process) | %s (%.2f of %d cores) |\n",
			fmtDur(d.cpu), d.cpu.Seconds()/d.wall.Seconds(), runtime.NumCPU())
	} else {
		fmt.Fprintf(w, "| CPU used during the sessions (user+sys): daemon, client | %s (%.2f of %d cores), %s |\n",
			fmtDur(d.daemonCPU), d.daemonCPU.Seconds()/d.wall.Seconds(), runtime.NumCPU(), fmtDur(d.cpu))
	}
	fmt.Fprintf(w, "| Messages server → client (all kinds) | %d (%.0f/s) |\n", d.frames, float64(d.frames)/d.wall.Seconds())
	fmt.Fprintf(w, "| Allocated during the sessions (whole process) | %.1f MB |\n", float64(d.gc.allocated)/(1<<20))
	fmt.Fprintf(w, "| GC cycles during the sessions (GOGC %s) | %d, stop-the-world pauses %s in all |\n", cmp.Or(os.Getenv("GOGC"), "default"), d.gc.cycles, fmtDur(d.gc.pauses))
	if d.daemon != "" {
		fmt.Fprintf(w, "| The daemon's peak RSS (VmHWM) | %s |\n", fmtKB(d.daemonHWM))
		fmt.Fprintln(w, "| The rows below: the client's process only | |")
	}
	fmt.Fprintf(w, "| Peak RSS (VmHWM) | %s |\n", fmtKB(d.hwm))
	fmt.Fprintf(w, "| RSS after shutdown (VmRSS) | %s |\n", fmtKB(d.rssAfter))
	fmt.Fprintf(w, "| RSS after shutdown, GC and FreeOSMemory | %s (Go heap in use %.1f MB) |\n", fmtKB(d.rssFreed), float64(d.heapAfter)/(1<<20))
	fmt.Fprintf(w, "| Goroutines before the server | %d |\n", d.baseline)
	fmt.Fprintf(w, "| Goroutines at peak (whole process, with the %d client callers) | %d |\n", d.sessions, d.peak)
	back := "yes"
	if !d.settled {
		back = "**no**"
	}
	fmt.Fprintf(w, "| Goroutines after shutdown + exit | %d (back to baseline: %s) |\n", d.after, back)
	fmt.Fprintln(w)

	fmt.Fprintln(w, "Tool call latency (tool_call pending → tool_call_update completed, as the client sees it):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| | n | p50 | p90 | p99 | max |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	row := func(name string, s []time.Duration) {
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s |\n", name, len(s),
			fmtDur(pct(s, 50)), fmtDur(pct(s, 90)), fmtDur(pct(s, 99)), fmtDur(pct(s, 100)))
	}
	row("through the daemon", d.latencies)
	row("tool alone (Build+Describe+Execute, direct)", d.direct)
	fmt.Fprintf(w, "| added by the daemon (difference) | | %s | %s | %s | |\n",
		fmtDur(pct(d.latencies, 50)-pct(d.direct, 50)), fmtDur(pct(d.latencies, 90)-pct(d.direct, 90)),
		fmtDur(pct(d.latencies, 99)-pct(d.direct, 99)))
	fmt.Fprintln(w)
	row(fmt.Sprintf("tools alone, %d goroutines × %d calls at once", d.sessions, d.calls), d.directLoaded)
	fmt.Fprintf(w, "| added by the daemon over the tools at the same concurrency | | %s | %s | %s | |\n",
		fmtDur(pct(d.latencies, 50)-pct(d.directLoaded, 50)), fmtDur(pct(d.latencies, 90)-pct(d.directLoaded, 90)),
		fmtDur(pct(d.latencies, 99)-pct(d.directLoaded, 99)))
	fmt.Fprintln(w)
	// The target is judged against the tools one at a time. The burst of
	// the same calls at once is harsher than the daemon's run, whose turns
	// pace each session's calls, so it bounds the queueing, not the daemon.
	added := pct(d.latencies, 99) - pct(d.direct, 99)
	verdict := "met"
	if added >= 2*time.Millisecond {
		verdict = "**missed**"
	}
	fmt.Fprintf(w, "Target p99 added < 2 ms (over the tools one at a time): %s (%s). The same calls in one burst, without the daemon, have a p99 of %s.\n",
		verdict, fmtDur(added), fmtDur(pct(d.directLoaded, 99)))
}

// pct returns the p-th percentile (nearest rank) of sorted durations.
func pct(s []time.Duration, p int) time.Duration {
	if len(s) == 0 {
		return 0
	}
	i := (p*len(s)+99)/100 - 1
	return s[min(max(i, 0), len(s)-1)]
}

func fmtDur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	case d >= time.Millisecond || d <= -time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.1f µs", float64(d)/float64(time.Microsecond))
	}
}

func fmtKB(kb int) string {
	if kb < 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f MB", float64(kb)/1024)
}

func nproc() string {
	out, err := exec.Command("nproc").Output()
	if err != nil {
		return "n/a"
	}
	return strings.TrimSpace(string(out))
}

func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "cpu n/a"
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
		}
	}
	return "cpu n/a"
}
