// Command tailtrace reads an execution trace of bench/sessions (its -trace
// flag) and tells what the slowest tool calls waited on.
//
//	go run ./bench/sessions -trace /tmp/sessions.trace
//	cd bench/tailtrace && go run . [-top 1] [-calls] /tmp/sessions.trace
//
// It is a module of its own, so that the daemon's module does not depend
// on the trace parser (golang.org/x/exp/trace).
//
// The daemon marks each tool call update as its session hands it to the
// connection ("tool update" log events, on the goroutine sending it); the
// bench's client marks each one it receives ("tool seen"). A call's
// window, as the bench measures it, runs from the client seeing "pending"
// to it seeing "completed". That window is the daemon's part (from
// sending pending to sending completed) plus the completed update's way
// to the client, minus the pending update's way.
//
// The daemon's part is followed along its critical path: the session's
// goroutine from sending pending until it starts the goroutine that runs
// the call, then that goroutine until it sends completed (one goroutine
// throughout when the call runs on the session's). Each moment of the path
// is put in one bucket: running (of which in a GC mark assist, and of
// which while the world is stopped), runnable (waiting for a P: the CPU
// queue), in a system call, or blocked, by the reason the runtime gives
// and where it blocked.
package main

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/exp/trace"
)

type key struct{ session, call string }

type mark struct {
	t trace.Time
	g trace.GoID
}

type callMarks struct {
	pendingSent, completedSent, pendingSeen, completedSeen *mark
}

// transition is a goroutine's change of state.
type transition struct {
	t     trace.Time
	to    trace.GoState
	label string // for waiting: the reason and where
}

type interval struct{ a, b trace.Time }

type goInfo struct {
	trans   []transition
	created trace.Time
	parent  trace.GoID
	start   string // the function it started in
	ended   trace.Time
	assists []interval
}

func main() {
	top := flag.Float64("top", 1, "the slowest `percent` of calls to break down")
	perCall := flag.Bool("calls", false, "print each slow call's breakdown")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: tailtrace [-top percent] trace.out")
		os.Exit(2)
	}
	f, err := os.Open(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer f.Close()
	r, err := trace.NewReader(f)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	calls := map[key]*callMarks{}
	gos := map[trace.GoID]*goInfo{}
	info := func(g trace.GoID) *goInfo {
		gi := gos[g]
		if gi == nil {
			gi = &goInfo{}
			gos[g] = gi
		}
		return gi
	}
	var stw, gcMark []interval
	var stwStart, markStart trace.Time
	assistStart := map[trace.GoID]trace.Time{}
	var first, last trace.Time
	for {
		ev, err := r.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if first == 0 {
			first = ev.Time()
		}
		last = ev.Time()
		switch ev.Kind() {
		case trace.EventLog:
			l := ev.Log()
			if l.Category != "tool update" && l.Category != "tool seen" {
				continue
			}
			parts := strings.Fields(l.Message)
			if len(parts) != 3 {
				continue
			}
			k := key{parts[0], parts[1]}
			cm := calls[k]
			if cm == nil {
				cm = &callMarks{}
				calls[k] = cm
			}
			m := &mark{ev.Time(), ev.Goroutine()}
			switch {
			case l.Category == "tool update" && parts[2] == "pending":
				cm.pendingSent = m
			case l.Category == "tool update" && parts[2] == "completed":
				cm.completedSent = m
			case l.Category == "tool seen" && parts[2] == "pending":
				cm.pendingSeen = m
			case l.Category == "tool seen" && parts[2] == "completed":
				cm.completedSeen = m
			}
		case trace.EventStateTransition:
			st := ev.StateTransition()
			if st.Resource.Kind != trace.ResourceGoroutine {
				continue
			}
			g := st.Resource.Goroutine()
			from, to := st.Goroutine()
			gi := info(g)
			if from == trace.GoNotExist && to == trace.GoRunnable {
				gi.created, gi.parent = ev.Time(), ev.Goroutine()
				for fr := range st.Stack.Frames() {
					gi.start = fr.Func
					break
				}
			}
			if to == trace.GoNotExist {
				gi.ended = ev.Time()
			}
			label := ""
			if to == trace.GoWaiting {
				label = waitLabel(st)
			}
			gi.trans = append(gi.trans, transition{ev.Time(), to, label})
		case trace.EventRangeBegin, trace.EventRangeActive:
			rg := ev.Range()
			switch {
			case strings.HasPrefix(rg.Name, "stop-the-world"):
				stwStart = ev.Time()
			case rg.Name == "GC concurrent mark phase":
				markStart = ev.Time()
			case rg.Name == "GC mark assist":
				assistStart[ev.Goroutine()] = ev.Time()
			}
		case trace.EventRangeEnd:
			rg := ev.Range()
			switch {
			case strings.HasPrefix(rg.Name, "stop-the-world"):
				stw = append(stw, interval{stwStart, ev.Time()})
			case rg.Name == "GC concurrent mark phase":
				gcMark = append(gcMark, interval{markStart, ev.Time()})
			case rg.Name == "GC mark assist":
				g := ev.Goroutine()
				if a, ok := assistStart[g]; ok {
					info(g).assists = append(info(g).assists, interval{a, ev.Time()})
					delete(assistStart, g)
				}
			}
		}
	}

	type measured struct {
		k      key
		m      *callMarks
		window time.Duration
	}
	var all []measured
	incomplete := 0
	for k, m := range calls {
		if m.pendingSent == nil || m.completedSent == nil || m.pendingSeen == nil || m.completedSeen == nil {
			incomplete++
			continue
		}
		all = append(all, measured{k, m, dur(m.pendingSeen.t, m.completedSeen.t)})
	}
	slices.SortFunc(all, func(a, b measured) int { return cmp.Compare(b.window, a.window) })
	n := max(1, int(float64(len(all))*(*top)/100+0.5))
	fmt.Printf("Trace of %s: %d calls with all four marks (%d without), GC: %d mark phases (%s), %d stops of the world (%s)\n\n",
		fmtDur(dur(first, last)), len(all), incomplete, len(gcMark), fmtDur(total(gcMark)), len(stw), fmtDur(total(stw)))
	if len(all) == 0 {
		return
	}

	writer := trace.NoGoroutine
	for g, gi := range gos {
		if strings.HasSuffix(gi.start, "(*stream).writeLoop") {
			writer = g
		}
	}

	split := func(set []measured) {
		var sum struct {
			window, server, compDeliv, pendDeliv time.Duration
			path                                 map[string]time.Duration
			writer, reader                       map[string]time.Duration
		}
		sum.path, sum.writer, sum.reader = map[string]time.Duration{}, map[string]time.Duration{}, map[string]time.Duration{}
		for _, c := range set {
			m := c.m
			sum.window += c.window
			sum.server += dur(m.pendingSent.t, m.completedSent.t)
			sum.compDeliv += dur(m.completedSent.t, m.completedSeen.t)
			sum.pendDeliv += dur(m.pendingSent.t, m.pendingSeen.t)
			// The daemon's path: the sender of pending until it creates
			// the sender of completed, then that one.
			a, b := m.pendingSent.t, m.completedSent.t
			gs, gw := m.pendingSent.g, m.completedSent.g
			handoff := a
			if gs != gw && gos[gw] != nil && gos[gw].parent == gs && gos[gw].created > a && gos[gw].created < b {
				handoff = gos[gw].created
				account(sum.path, gos[gs], a, handoff, stw)
			} else if gs != gw {
				sum.path["(path unknown: other sender)"] += dur(a, b)
				handoff = b
			}
			account(sum.path, gos[gw], handoff, b, stw)
			// The completed update's way: the writer and the client's
			// reader over that span.
			if writer != trace.NoGoroutine {
				account(sum.writer, gos[writer], m.completedSent.t, m.completedSeen.t, stw)
			}
			account(sum.reader, gos[m.completedSeen.g], m.completedSent.t, m.completedSeen.t, stw)
		}
		k := time.Duration(len(set))
		fmt.Printf("| mean per call | |\n|---|---|\n")
		fmt.Printf("| window (client: pending seen → completed seen) | %s |\n", fmtDur(sum.window/k))
		fmt.Printf("| daemon: pending sent → completed sent | %s |\n", fmtDur(sum.server/k))
		fmt.Printf("| completed: sent → seen | %s |\n", fmtDur(sum.compDeliv/k))
		fmt.Printf("| pending: sent → seen (subtracted) | %s |\n\n", fmtDur(sum.pendDeliv/k))
		table("the daemon's path (pending sent → completed sent)", sum.path, k)
		table("the connection's writer goroutine while completed is on its way", sum.writer, k)
		table("the client's reader while completed is on its way", sum.reader, k)
	}
	fmt.Printf("## The slowest %g %% (%d calls, window ≥ %s)\n\n", *top, n, fmtDur(all[n-1].window))
	split(all[:n])
	fmt.Printf("## All %d calls\n\n", len(all))
	split(all)
	if *perCall {
		for _, c := range all[:n] {
			m := c.m
			fmt.Printf("%s %s: window %s, daemon %s, completed way %s, pending way %s\n", c.k.session, c.k.call,
				fmtDur(c.window), fmtDur(dur(m.pendingSent.t, m.completedSent.t)),
				fmtDur(dur(m.completedSent.t, m.completedSeen.t)), fmtDur(dur(m.pendingSent.t, m.pendingSeen.t)))
		}
	}
}

// account adds goroutine gi's time in [a, b) to buckets by state.
func account(buckets map[string]time.Duration, gi *goInfo, a, b trace.Time, stw []interval) {
	if gi == nil || b <= a {
		return
	}
	state, label := trace.GoUndetermined, ""
	t := a
	flush := func(until trace.Time) {
		if until <= t {
			return
		}
		d := dur(t, until)
		switch state {
		case trace.GoRunning:
			assist := overlap(gi.assists, t, until)
			stopped := overlap(stw, t, until)
			buckets["running"] += d - assist - stopped
			buckets["running: GC mark assist"] += assist
			buckets["running, world stopped"] += stopped
		case trace.GoRunnable:
			stopped := overlap(stw, t, until)
			buckets["runnable (waiting for a P)"] += d - stopped
			buckets["runnable, world stopped"] += stopped
		case trace.GoSyscall:
			buckets["in a system call"] += d
		case trace.GoWaiting:
			buckets["blocked: "+label] += d
		default:
			buckets["(state unknown)"] += d
		}
		t = until
	}
	for _, tr := range gi.trans {
		if tr.t >= b {
			break
		}
		if tr.t > a {
			flush(tr.t)
		}
		state, label = tr.to, tr.label
	}
	flush(b)
}

func table(title string, buckets map[string]time.Duration, k time.Duration) {
	type row struct {
		name string
		d    time.Duration
	}
	var rows []row
	var sum time.Duration
	for n, d := range buckets {
		if d > 0 {
			rows = append(rows, row{n, d})
			sum += d
		}
	}
	slices.SortFunc(rows, func(a, b row) int { return cmp.Compare(b.d, a.d) })
	fmt.Printf("%s, mean per call:\n\n| state | time | share |\n|---|---|---|\n", title)
	for i, r := range rows {
		if i == 12 {
			break
		}
		fmt.Printf("| %s | %s | %.1f %% |\n", r.name, fmtDur(r.d/k), 100*float64(r.d)/float64(sum))
	}
	fmt.Println()
}

// waitLabel names why and where a goroutine blocked. The runtime's
// "sync" covers the collector's own waits too (an allocation's mark
// assist waiting for the end of marking, a goroutine waiting for a
// collection to start) and a WaitGroup's wait: those are told apart.
func waitLabel(st trace.StateTransition) string {
	reason := cmp.Or(st.Reason, "(no reason)")
	for fr := range st.Stack.Frames() {
		switch fr.Func {
		case "runtime.gcMarkDone", "runtime.gcStart", "runtime.gcAssistAlloc", "runtime.gcParkAssist", "runtime.stopTheWorldWithSema":
			// Where the allocation was does not matter: one bucket.
			return "GC: an allocation waits for the collector (" + strings.TrimPrefix(fr.Func, "runtime.") + ")"
		case "sync.(*WaitGroup).Wait":
			reason = "its own goroutines (WaitGroup)"
		}
		if !strings.HasPrefix(fr.Func, "runtime.") {
			break
		}
	}
	return reason + " at " + cmp.Or(where(st.Stack), "(no stack)")
}

// where names, for a blocked goroutine, the first frame outside the
// runtime and up to three of this project's frames under it.
func where(s trace.Stack) string {
	var out []string
	ours := 0
	for fr := range s.Frames() {
		own := strings.Contains(fr.Func, "cline-ls/")
		if len(out) == 0 && !own && !strings.HasPrefix(fr.Func, "runtime.") && !strings.HasPrefix(fr.Func, "sync.") && !strings.HasPrefix(fr.Func, "internal/") {
			out = append(out, short(fr.Func))
		}
		if own {
			out = append(out, short(fr.Func))
			if ours++; ours == 3 {
				break
			}
		}
	}
	return strings.Join(out, " < ")
}

func short(f string) string {
	if i := strings.LastIndex(f, "/"); i >= 0 {
		return f[i+1:]
	}
	return f
}

func overlap(ivs []interval, a, b trace.Time) time.Duration {
	var d time.Duration
	for _, iv := range ivs {
		lo, hi := max(iv.a, a), min(iv.b, b)
		if hi > lo {
			d += dur(lo, hi)
		}
	}
	return d
}

func total(ivs []interval) time.Duration {
	var d time.Duration
	for _, iv := range ivs {
		d += dur(iv.a, iv.b)
	}
	return d
}

func dur(a, b trace.Time) time.Duration { return time.Duration(b - a) }

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
