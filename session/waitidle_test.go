package session

import (
	"context"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/internal/testenv"
	"github.com/cline-ls/cline-ls/provider"
)

// TestWaitIdleWakesWhenTheTurnEnds: WaitIdle returns at once on an idle
// session, waits while a turn runs, and wakes when the cancelled turn has
// ended.
func TestWaitIdleWakesWhenTheTurnEnds(t *testing.T) {
	entered := make(chan struct{})
	s, _, _, _ := testSession(t, &scriptModel{}, 100000, 10)
	s.cfg.Provider = blockingModel{entered}
	s.WaitIdle() // idle: returns at once

	turn := make(chan error, 1)
	go func() { _, err := s.Prompt(context.Background(), "wait"); turn <- err }()
	<-entered
	idle := make(chan struct{})
	go func() { s.WaitIdle(); close(idle) }()
	// Until WaitIdle blocks or returns: looked at once, it has not run.
	for !testenv.Parked("session.(*Session).WaitIdle") {
		select {
		case <-idle:
			t.Fatal("WaitIdle returned while the turn runs")
		case <-turn:
			t.Fatal("the turn ended before it was cancelled")
		case <-time.After(time.Millisecond):
		}
	}
	s.Cancel()
	select {
	case <-idle:
	case <-time.After(30 * time.Second): // a failure guard
		t.Fatal("WaitIdle did not return after the turn ended")
	}
	if s.Running() {
		t.Fatal("WaitIdle returned, but the turn still runs")
	}
	<-turn
}

// blockingModel's reply waits until its turn is cancelled.
type blockingModel struct{ entered chan struct{} }

func (blockingModel) Name() string      { return "openai" }
func (blockingModel) Model() string     { return "gpt-4o" }
func (blockingModel) NativeTools() bool { return true }
func (m blockingModel) Stream(ctx context.Context, req provider.Request) (provider.Stream, error) {
	return func(yield func(provider.Event, error) bool) {
		close(m.entered)
		<-ctx.Done()
		yield(provider.Event{}, ctx.Err())
	}, nil
}
