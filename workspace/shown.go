package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// WriteShownFile writes a file of the daemon's own for the user to read
// (the diff an approval asks about, a turn's transcript) as
// <stateDir>/<folder>/<name>, and returns its path. The state directory
// is one of the daemon's own folders (OwnPaths), so the file is never
// taken for the workspace's; it is read-only too, so an editor opens it
// as such. A file of the same name is replaced. name is made safe for a
// file name whatever it holds (SafeFileName).
func WriteShownFile(stateDir, folder, name string, data []byte) (string, error) {
	dir := filepath.Join(stateDir, folder)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	path := filepath.Join(dir, SafeFileName(name))
	// The old file is read-only: removed, not written over.
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if err := WriteFileAtomic(path, data, 0o400); err != nil {
		return "", err
	}
	return path, nil
}

// SafeFileName keeps letters, digits, '.', '-' and '_' of name (others
// become '_'), no leading dot, at most its last 100 bytes: a name that
// came from the model or the client (a call id, a session id) can then
// neither leave its folder nor hide in it.
func SafeFileName(name string) string {
	b := []byte(name)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
		if !ok {
			b[i] = '_'
		}
	}
	out := strings.TrimLeft(string(b), ".")
	if len(out) > 100 {
		out = out[len(out)-100:]
	}
	if out == "" {
		out = "_"
	}
	return out
}
