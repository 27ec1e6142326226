// Package testbin builds the cline-ls binary for the tests that run it as
// a process of its own (the editors' end-to-end tests, the ACP clients, the
// daemon-kill tests). `go test ./...` runs those packages side by side, and
// each used to build the daemon itself: the same compile and link, several
// times at once on the same cores. Here a build is kept in a folder under
// the temporary directory named by a hash of everything the build reads
// (the sources of the module's packages it links, go.mod and go.sum, the
// toolchain and its settings), and a file lock makes the packages that
// want the same hash wait for the one that builds it.
package testbin

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// pkg is the path of the daemon's main package.
const pkg = "github.com/cline-ls/cline-ls/cmd/cline-ls"

// buildFlags are go build's flags, part of the key. -trimpath: the binary
// records no folder of the checkout it was built from, so two checkouts of
// the same sources share a build.
var buildFlags = []string{"-trimpath"}

// keep is how long a build nobody has used stays in the cache.
const keep = 24 * time.Hour

var (
	mu    sync.Mutex // guards built
	built string     // the binary this process has found or built
)

// CLI returns the path of a cline-ls binary built from this tree's
// sources as they are now. The first call of a test process hashes the
// sources (reading them, so that go test's cache knows a cached result
// depends on them) and builds only when no build of that hash exists;
// later calls return the same path. A failure fails t.
func CLI(t testing.TB) string {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if built != "" {
		return built
	}
	bin, err := cli()
	if err != nil {
		t.Fatalf("building cline-ls: %v", err)
	}
	built = bin
	return bin
}

func cli() (string, error) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("go is not on PATH: %w", err)
	}
	key, modDir, err := sourceKey(gobin, "", pkg)
	if err != nil {
		return "", err
	}
	cache := filepath.Join(os.TempDir(), "cline-ls-testbin")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	unlock, err := lock(filepath.Join(cache, key+".lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	bin := filepath.Join(cache, key, "cline-ls")
	if _, err := os.Stat(bin); err == nil {
		now := time.Now()
		os.Chtimes(filepath.Dir(bin), now, now) // in use: not pruned
		return bin, nil
	}
	prune(cache)
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return "", err
	}
	tmp := fmt.Sprintf("%s.%d.tmp", bin, os.Getpid())
	build := exec.Command(gobin, append(append([]string{"build"}, buildFlags...), "-o", tmp, pkg)...)
	build.Dir = modDir
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin, os.Rename(tmp, bin)
}

// listed is what `go list -json` says of one package, as far as the key
// needs it.
type listed struct {
	ImportPath string
	Dir        string
	Module     *struct {
		Main  bool
		GoMod string
	}
	GoFiles, CgoFiles, CFiles, CXXFiles, HFiles, SFiles, SysoFiles, EmbedFiles []string
}

// sourceKey hashes what `go build` of the main package pkg, run in dir
// ("" for the current folder), reads that can differ between two runs: the
// toolchain and the settings that change its output, go.mod and go.sum
// (which pin every dependency's content), and each file of the module's
// own packages pkg links. It returns the hash and the module's folder.
func sourceKey(gobin, dir, pkg string) (string, string, error) {
	h := sha256.New()
	goEnv := exec.Command(gobin, "env", "GOVERSION", "GOOS", "GOARCH", "GOAMD64", "GOARM64", "CGO_ENABLED", "GOFLAGS", "GOEXPERIMENT", "CC")
	goEnv.Dir = dir
	env, err := goEnv.Output()
	if err != nil {
		return "", "", fmt.Errorf("go env: %w", err)
	}
	h.Write(env)
	fmt.Fprintf(h, "go build %q\n", buildFlags)
	var stderr bytes.Buffer
	list := exec.Command(gobin, "list", "-deps", "-json=ImportPath,Dir,Module,GoFiles,CgoFiles,CFiles,CXXFiles,HFiles,SFiles,SysoFiles,EmbedFiles", pkg)
	list.Dir = dir
	list.Stderr = &stderr
	out, err := list.Output()
	if err != nil {
		return "", "", fmt.Errorf("go list %s: %v\n%s", pkg, err, stderr.Bytes())
	}
	modDir := ""
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return "", "", fmt.Errorf("go list %s: %w", pkg, err)
		}
		if p.Module == nil || !p.Module.Main {
			continue // pinned by go.sum
		}
		if modDir == "" {
			modDir = filepath.Dir(p.Module.GoMod)
			if err := hashFile(h, modDir, "go.mod"); err != nil {
				return "", "", err
			}
			// A module with no dependencies has no go.sum.
			if err := hashFile(h, modDir, "go.sum"); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return "", "", err
			}
		}
		fmt.Fprintf(h, "package %s\n", p.ImportPath)
		for _, files := range [][]string{p.GoFiles, p.CgoFiles, p.CFiles, p.CXXFiles, p.HFiles, p.SFiles, p.SysoFiles, p.EmbedFiles} {
			for _, f := range files {
				if err := hashFile(h, p.Dir, f); err != nil {
					return "", "", err
				}
			}
		}
	}
	if modDir == "" {
		return "", "", fmt.Errorf("go list %s: no package of the main module", pkg)
	}
	return hex.EncodeToString(h.Sum(nil))[:24], modDir, nil
}

// hashFile adds name and the content of dir/name to h.
func hashFile(h io.Writer, dir, name string) error {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return err
	}
	fmt.Fprintf(h, "%s %d\n", filepath.ToSlash(name), len(b))
	h.Write(b)
	return nil
}

// prune removes the builds nobody has used for a day, each under its own
// lock, so that a build another run is about to use stays.
func prune(cache string) {
	entries, err := os.ReadDir(cache)
	if err != nil {
		return
	}
	for _, e := range entries {
		info, err := e.Info()
		if !e.IsDir() || err != nil || time.Since(info.ModTime()) < keep {
			continue
		}
		unlock, err := tryLock(filepath.Join(cache, e.Name()+".lock"))
		if err != nil {
			continue
		}
		os.RemoveAll(filepath.Join(cache, e.Name()))
		unlock()
	}
}
