package checkpoint

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
)

// The benchmarks run on Go's own source tree. GOROOT is read-only, so
// the benchmarks that change files work on one copy made per process.
var goSrc struct {
	once sync.Once
	dir  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if goSrc.dir != "" {
		os.RemoveAll(goSrc.dir)
	}
	os.Exit(code)
}

func goSrcCopy(b *testing.B) string {
	goSrc.once.Do(func() {
		dir, err := os.MkdirTemp("", "checkpoint-bench-")
		if err != nil {
			goSrc.err = err
			return
		}
		goSrc.dir = dir
		goSrc.err = os.CopyFS(filepath.Join(dir, "src"), os.DirFS(filepath.Join(goroot(), "src")))
	})
	if goSrc.err != nil {
		b.Fatal(goSrc.err)
	}
	return filepath.Join(goSrc.dir, "src")
}

func benchStore(b *testing.B, folder string) *Store {
	s, err := Open(Options{StateDir: b.TempDir(), Folders: []string{folder}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// touchFiles appends a line to n files of the tree, a different line each
// round, as an agent's turn would.
func touchFiles(b *testing.B, files []string, round int) {
	for _, p := range files {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(f, "// round %d\n", round)
		f.Close()
	}
}

func pickFiles(root string, n int) []string {
	var out []string
	filepath.WalkDir(filepath.Join(root, "net", "http"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && filepath.Ext(p) == ".go" && len(out) < n {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// timing collects per-operation wall and CPU times.
type timing struct {
	wall, cpu []time.Duration
	w0        time.Time
	cpu0      time.Duration
}

func (t *timing) start() { t.w0, t.cpu0 = time.Now(), cpuTime() }

func (t *timing) stop() {
	t.wall = append(t.wall, time.Since(t.w0))
	t.cpu = append(t.cpu, cpuTime()-t.cpu0)
}

func median(d []time.Duration) float64 {
	slices.Sort(d)
	return float64(d[len(d)/2].Microseconds()) / 1000
}

func (t *timing) report(b *testing.B) {
	if len(t.wall) == 0 {
		return
	}
	b.ReportMetric(median(t.wall), "ms-median")
	b.ReportMetric(median(t.cpu), "cpu-ms-median")
}

func dirBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// BenchmarkFirstCheckpoint checkpoints $GOROOT/src into an empty store:
// every file is read, hashed and stored.
func BenchmarkFirstCheckpoint(b *testing.B) {
	src := filepath.Join(goroot(), "src")
	var tm timing
	for b.Loop() {
		b.StopTimer()
		s := benchStore(b, src)
		b.StartTimer()
		tm.start()
		_, err := s.Checkpoint(context.Background(), Request{SessionID: "bench"})
		tm.stop()
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(dirBytes(s.dir))/(1<<20), "MiB-state")
	}
	tm.report(b)
}

// BenchmarkCheckpointFewChanged checkpoints a copy of $GOROOT/src after
// five files changed; run with -benchtime=100x it also reports the state
// directory's size after 100 such checkpoints (plus the first).
func BenchmarkCheckpointFewChanged(b *testing.B) {
	src := goSrcCopy(b)
	s := benchStore(b, src)
	ctx := context.Background()
	if _, err := s.Checkpoint(ctx, Request{SessionID: "bench"}); err != nil {
		b.Fatal(err)
	}
	files := pickFiles(src, 5)
	var tm timing
	round := 0
	for b.Loop() {
		b.StopTimer()
		round++
		touchFiles(b, files, round)
		b.StartTimer()
		tm.start()
		info, err := s.Checkpoint(ctx, Request{SessionID: "bench", Turn: round})
		tm.stop()
		if err != nil {
			b.Fatal(err)
		}
		if len(info.Files) != len(files) {
			b.Fatalf("checkpoint lists %d changed files, want %d", len(info.Files), len(files))
		}
	}
	tm.report(b)
	b.ReportMetric(float64(dirBytes(s.dir))/(1<<20), "MiB-state")
	b.ReportMetric(float64(len(s.List("bench"))), "checkpoints")
}

// BenchmarkRestoreFewChanged restores a copy of $GOROOT/src to the
// checkpoint before five files changed: the scan that finds them, the
// conflict check and the five atomic writes.
func BenchmarkRestoreFewChanged(b *testing.B) {
	src := goSrcCopy(b)
	s := benchStore(b, src)
	ctx := context.Background()
	files := pickFiles(src, 5)
	var tm timing
	round := 0
	for b.Loop() {
		b.StopTimer()
		round++
		before, err := s.Checkpoint(ctx, Request{SessionID: "bench", Turn: round})
		if err != nil {
			b.Fatal(err)
		}
		touchFiles(b, files, round)
		if _, err := s.Checkpoint(ctx, Request{SessionID: "bench", Turn: round}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		tm.start()
		plan, err := s.Restore(ctx, RestoreRequest{SessionID: "bench", CheckpointID: before.ID})
		tm.stop()
		if err != nil {
			b.Fatal(err)
		}
		if len(plan.Disk) != len(files) || len(plan.Conflicts) > 0 {
			b.Fatalf("restored %d files with %d conflicts, want %d and none", len(plan.Disk), len(plan.Conflicts), len(files))
		}
	}
	tm.report(b)
}

// BenchmarkDeepCheckpoint takes the first checkpoint of a chain of
// nested folders, a file in each: linear in depth up to
// workspace.MaxWalkDepth, and no further below.
func BenchmarkDeepCheckpoint(b *testing.B) {
	for _, depth := range []int{250, 1000, 2000} {
		b.Run(fmt.Sprint(depth), func(b *testing.B) {
			root := b.TempDir()
			deepTree(b, root, depth)
			var tm timing
			for b.Loop() {
				b.StopTimer()
				s := benchStore(b, root)
				b.StartTimer()
				tm.start()
				_, err := s.Checkpoint(context.Background(), Request{SessionID: "bench"})
				tm.stop()
				if err != nil {
					b.Fatal(err)
				}
			}
			tm.report(b)
		})
	}
}

// goroot is the Go tree the benchmarks read: $GOROOT, else the one this
// test binary was built with, which is where it runs.
func goroot() string {
	if r := os.Getenv("GOROOT"); r != "" {
		return r
	}
	//lint:ignore SA1019 a test binary runs on the machine that built it
	return runtime.GOROOT()
}
