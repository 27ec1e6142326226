package checkpoint

import (
	"context"
	"sync"
	"time"
)

// DefaultPrimeShare is the share of one core Prime's walk may take:
// the first checkpoint of a large workspace costs seconds of CPU, and
// on a small machine it would otherwise take them from the user's
// first searches and builds.
const DefaultPrimeShare = 0.2

// paceSlice is how much work a paced walk does between pauses: short
// enough that a tool call starting meanwhile waits little for a core,
// long enough that the sleeps are not mostly timer overhead.
const paceSlice = 5 * time.Millisecond

// pacer holds a walk to a share of one core: after each slice of work
// it sleeps in proportion to the work done, and it waits while a tool
// call runs (Store.Busy). Work is measured by the wall clock, which on a
// loaded machine counts time the walk was not even running: the pacer
// then errs on the side of the user.
type pacer struct {
	ctx   context.Context
	share float64
	busy  *busyGate

	mu     sync.Mutex // serialises the walkers' pauses
	worked time.Duration
	since  time.Time
}

func newPacer(ctx context.Context, share float64, busy *busyGate) *pacer {
	return &pacer{ctx: ctx, share: share, busy: busy, since: time.Now()}
}

// pace is the scanner's pace hook.
func (p *pacer) pace() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.busy.wait(p.ctx) {
		p.since = time.Now() // the pause was no work
	}
	now := time.Now()
	p.worked += now.Sub(p.since)
	p.since = now
	if p.worked < paceSlice || p.share >= 1 {
		return
	}
	rest := time.Duration(float64(p.worked) * (1 - p.share) / p.share)
	p.worked = 0
	t := time.NewTimer(rest)
	select {
	case <-t.C:
	case <-p.ctx.Done():
		t.Stop()
	}
	p.since = time.Now()
}

// busyGate counts the tool calls running, for Prime to wait on.
type busyGate struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed while n == 0
}

func newBusyGate() *busyGate {
	g := &busyGate{idle: make(chan struct{})}
	close(g.idle)
	return g
}

func (g *busyGate) enter() func() {
	g.mu.Lock()
	if g.n == 0 {
		g.idle = make(chan struct{})
	}
	g.n++
	g.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			if g.n--; g.n == 0 {
				close(g.idle)
			}
			g.mu.Unlock()
		})
	}
}

// maxBusyPause bounds one wait for the tool calls to end: a call whose
// end was never told must not stop the walk for good.
const maxBusyPause = time.Minute

// wait returns once no call runs, ctx ends or maxBusyPause passed,
// reporting whether it waited at all.
func (g *busyGate) wait(ctx context.Context) bool {
	g.mu.Lock()
	idle := g.idle
	g.mu.Unlock()
	select {
	case <-idle:
		return false
	default:
	}
	t := time.NewTimer(maxBusyPause)
	defer t.Stop()
	select {
	case <-idle:
	case <-ctx.Done():
	case <-t.C:
	}
	return true
}
