package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cline-ls/cline-ls/workspace"
)

// blobs is the content-addressed store: blobs/<first two hex digits>/<rest>.
// Blobs are not synced one by one (a first checkpoint writes thousands);
// a blob that a crash left short is caught by its size before it is
// trusted as already there, and every read checks the hash, so a lost
// blob makes a restore fail loudly rather than write wrong content.
type blobs struct {
	dir   string
	limit int64 // the largest blob read

	mu   sync.Mutex
	have map[string]int64 // guarded by mu; hashes known to be stored, with their size
}

func newBlobs(dir string, limit int64) *blobs {
	return &blobs{dir: dir, limit: limit, have: make(map[string]int64)}
}

// forget drops what put and checks remembered: another daemon's
// collection may have removed any of it.
func (b *blobs) forget() {
	b.mu.Lock()
	clear(b.have)
	b.mu.Unlock()
}

// hashOf returns the hex sha256 of data.
func hashOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func (b *blobs) path(hash string) string {
	return filepath.Join(b.dir, hash[:2], hash[2:])
}

// put stores data under hash unless a blob of that size is already there.
// It reports how many bytes it wrote. A new blob is created in place
// (O_EXCL): one create a blob rather than a stat, a create and a rename,
// which made up more than half of a first checkpoint's time. A crash
// mid-write leaves it short, which the size check below and the hash
// check of every read catch; a blob of the wrong size is replaced
// atomically through a temporary file.
func (b *blobs) put(hash string, data []byte) (int64, error) {
	b.mu.Lock()
	size, ok := b.have[hash]
	b.mu.Unlock()
	if ok && size == int64(len(data)) {
		return 0, nil
	}
	p := b.path(hash)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return 0, fmt.Errorf("checkpoint: store blob: %w", err)
		}
		f, err = os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	}
	switch {
	case errors.Is(err, fs.ErrExist):
		if fi, err := os.Stat(p); err == nil && fi.Size() == int64(len(data)) {
			b.remember(hash, fi.Size())
			return 0, nil
		}
		return b.replace(p, hash, data)
	case err != nil:
		return 0, fmt.Errorf("checkpoint: store blob: %w", err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(p)
		return 0, fmt.Errorf("checkpoint: store blob: %w", err)
	}
	b.remember(hash, int64(len(data)))
	return int64(len(data)), nil
}

// replace writes a blob over one that is there but of the wrong size (a
// crash cut it short), through a temporary file renamed into place.
func (b *blobs) replace(p, hash string, data []byte) (int64, error) {
	f, err := os.CreateTemp(filepath.Dir(p), ".blob-*.tmp")
	if err != nil {
		return 0, fmt.Errorf("checkpoint: store blob: %w", err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		os.Remove(f.Name())
		return 0, fmt.Errorf("checkpoint: store blob: %w", err)
	}
	b.remember(hash, int64(len(data)))
	return int64(len(data)), nil
}

// known reports whether put or a check stored hash in this process and
// no gc removed it since.
func (b *blobs) known(hash string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.have[hash]
	return ok
}

func (b *blobs) remember(hash string, size int64) {
	b.mu.Lock()
	b.have[hash] = size
	b.mu.Unlock()
}

// get reads a blob and checks its hash.
func (b *blobs) get(hash string) ([]byte, error) {
	if len(hash) != sha256.Size*2 {
		return nil, fmt.Errorf("checkpoint: bad blob name %q", hash)
	}
	// The state directory's rules: a FIFO or a device put in a blob's
	// place must not block or fill memory.
	data, err := workspace.ReadRegularFile(b.path(hash), b.limit)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: read blob: %w", err)
	}
	if hashOf(data) != hash {
		return nil, fmt.Errorf("checkpoint: blob %s is damaged (its content does not match its name)", hash[:12])
	}
	return data, nil
}

// garbage is a blob to remove: its path, hash and size.
type garbage struct {
	path, hash string
	size       int64
}

// unreferenced lists the blobs whose hash keep does not hold and that
// were written more than grace ago (another daemon may be about to name
// a newer one: Prime's blobs wait for a first checkpoint), and removes
// temporary files older than an hour (left by a crash). It returns them
// with the bytes of the blobs kept.
func (b *blobs) unreferenced(keep map[string]bool, grace time.Duration) (out []garbage, kept int64, err error) {
	now := time.Now()
	old, young := now.Add(-time.Hour), now.Add(-grace)
	err = filepath.WalkDir(b.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil // removed meanwhile
		}
		name := d.Name()
		if strings.HasPrefix(name, ".") {
			if fi.ModTime().Before(old) {
				os.Remove(p)
			}
			return nil
		}
		hash := filepath.Base(filepath.Dir(p)) + name
		if keep[hash] || !fi.ModTime().Before(young) {
			kept += fi.Size()
			return nil
		}
		out = append(out, garbage{path: p, hash: hash, size: fi.Size()})
		return nil
	})
	if err != nil {
		return nil, kept, fmt.Errorf("checkpoint: collect blobs: %w", err)
	}
	return out, kept, nil
}

// remove deletes the blobs unreferenced listed and returns their bytes.
func (b *blobs) remove(list []garbage) (removed int64, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, g := range list {
		if err := os.Remove(g.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return removed, fmt.Errorf("checkpoint: collect blobs: %w", err)
		}
		delete(b.have, g.hash)
		removed += g.size
	}
	return removed, nil
}

// tree is one folder's listing, stored as a blob like file contents, so
// an unchanged folder costs nothing in a new checkpoint.
type tree struct {
	Entries []treeEntry `json:"e"`
}

// treeEntry is a file or a folder in a tree. Short JSON names keep the
// trees of a large workspace small.
type treeEntry struct {
	Name  string `json:"n"`
	Dir   bool   `json:"d,omitempty"`
	Hash  string `json:"h,omitempty"` // content blob, or the folder's tree; empty when Skip says why
	Mode  uint32 `json:"m,omitempty"` // fs.FileMode bits
	Size  int64  `json:"s,omitempty"`
	MTime int64  `json:"t,omitempty"` // nanoseconds since the epoch
	Ino   uint64 `json:"i,omitempty"`
	Skip  string `json:"x,omitempty"` // why the content is not stored
}

func (b *blobs) putTree(t *tree) (string, int64, error) {
	data, err := json.Marshal(t)
	if err != nil {
		return "", 0, err
	}
	hash := hashOf(data)
	n, err := b.put(hash, data)
	return hash, n, err
}

// getTree reads a tree and the size of its blob.
func (b *blobs) getTree(hash string) (*tree, int64, error) {
	data, err := b.get(hash)
	if err != nil {
		return nil, 0, err
	}
	var t tree
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, 0, fmt.Errorf("checkpoint: tree %s: %w", hash[:12], err)
	}
	return &t, int64(len(data)), nil
}

// readCapped reads at most max bytes of r and reports whether there was more.
func readCapped(r io.Reader, max int64) ([]byte, bool, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, false, err
	}
	if int64(len(data)) > max {
		return nil, true, nil
	}
	return data, false, nil
}
