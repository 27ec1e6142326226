package session

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"
)

// One writer per session across stores: a second Store on the same
// state directory (another daemon) cannot open a session the first
// holds, is told who holds it, and lists it as held; once released it
// opens.
func TestSessionHeldByAnotherStore(t *testing.T) {
	a, dir, _ := newTestStore(t, StoreOptions{})
	b, err := NewStoreWithOptions(dir, StoreOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	la := storeCreate(t, a, "s1", "/w", storeT0)
	storeAppend(t, la, storeText(storeT0, "user", "from window A"))

	for what, open := range map[string]func() (*Log, error){
		"Open":   func() (*Log, error) { return b.Open("s1") },
		"Create": func() (*Log, error) { return b.Create(Meta{SessionID: "s1", Cwd: "/w"}) },
	} {
		l, err := open()
		var held *HeldError
		if !errors.As(err, &held) || held.PID != os.Getpid() || held.ID != "s1" {
			if l != nil {
				l.Close()
			}
			t.Fatalf("%s of a session another store holds: %v, want *HeldError naming process %d", what, err, os.Getpid())
		}
	}
	// Reading is not writing: the other window may show it.
	if _, _, err := b.Load("s1"); err != nil {
		t.Errorf("Load of a held session: %v", err)
	}
	if got := heldIn(t, b, "s1"); got != os.Getpid() {
		t.Errorf("the other store lists s1 held by %d, want %d", got, os.Getpid())
	}
	if got := heldIn(t, a, "s1"); got != 0 {
		t.Errorf("the holder lists its own session held by %d, want 0", got)
	}

	if err := la.Close(); err != nil {
		t.Fatal(err)
	}
	if got := heldIn(t, b, "s1"); got != 0 {
		t.Errorf("after the holder closed it, s1 is listed held by %d", got)
	}
	lb, err := b.Open("s1")
	if err != nil {
		t.Fatalf("Open after the holder closed it: %v", err)
	}
	defer lb.Close()
	if _, err := a.Open("s1"); !errors.As(err, new(*HeldError)) {
		t.Errorf("the first store reopening what the second now holds: %v, want *HeldError", err)
	}
}

func heldIn(t *testing.T, s *Store, id string) int {
	t.Helper()
	list, err := s.List("")
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range list {
		if x.SessionID == id {
			return x.HeldBy
		}
	}
	t.Fatalf("%s not listed", id)
	return 0
}

const storeHoldEnv = "CLINE_LS_STORE_HOLD_DIR"

// TestStoreHoldChild is not a test on its own: TestSessionHeldByAnotherProcess
// runs the test binary with storeHoldEnv set to make it the other daemon.
func TestStoreHoldChild(t *testing.T) {
	dir := os.Getenv(storeHoldEnv)
	if dir == "" {
		t.Skip("runs only as TestSessionHeldByAnotherProcess's child process")
	}
	s, err := NewStoreWithOptions(dir, StoreOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	l, err := s.Open("s1")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("holding")
	io.Copy(io.Discard, os.Stdin) // until the parent closes it
	l.Close()
}

// The same between two processes, and a holder that ends (here by
// closing its input) lets go.
func TestSessionHeldByAnotherProcess(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no flock")
	}
	s, dir, _ := newTestStore(t, StoreOptions{})
	storeCreate(t, s, "s1", "/w", storeT0).Close()

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute) // a guard only
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestStoreHoldChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), storeHoldEnv+"="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && sc.Text() != "holding" {
	}
	var held *HeldError
	if _, err := s.Open("s1"); !errors.As(err, &held) || held.PID != cmd.Process.Pid {
		t.Fatalf("Open of a session another process holds: %v, want *HeldError naming process %d", err, cmd.Process.Pid)
	}
	if got := heldIn(t, s, "s1"); got != cmd.Process.Pid {
		t.Errorf("listed held by %d, want %d", got, cmd.Process.Pid)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	l, err := s.Open("s1")
	if err != nil {
		t.Fatalf("Open once the other process ended: %v", err)
	}
	l.Close()
}
