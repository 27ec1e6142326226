package rpc

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cline-ls/cline-ls/session"
	"github.com/cline-ls/cline-ls/workspace"
)

const methodShowDocument = "window/showDocument"

// writeShownFile writes a file of the daemon's own for the user to read
// (a diff, a turn's transcript) under <state dir>/<folder>, and returns
// its path. It is read-only, so an editor opens it as such and nobody
// takes it for the workspace's file; a file of the same name is replaced.
// name is made safe for a file name whatever it holds.
func (s *Server) writeShownFile(folder, name string, data []byte) (string, error) {
	dir := filepath.Join(s.stateDir(), folder)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	path := filepath.Join(dir, safeFileName(name))
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if err := workspace.WriteFileAtomic(path, data, 0o400); err != nil {
		return "", err
	}
	return path, nil
}

// safeFileName keeps letters, digits, '.', '-' and '_' of name (others
// become '_'), no leading dot, at most 100 bytes.
func safeFileName(name string) string {
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

// showDocument asks the client to show the file at path without taking
// the focus from where the user is, or with it when takeFocus.
func (s *Server) showDocument(ctx context.Context, path string, takeFocus bool) error {
	var res struct {
		Success bool `json:"success"`
	}
	params := map[string]any{"uri": workspace.PathToURI(path), "takeFocus": takeFocus}
	if err := s.call(ctx, methodShowDocument, params, &res); err != nil {
		return err
	}
	if !res.Success {
		return fmt.Errorf("the editor did not show %s", path)
	}
	return nil
}

// showDiffDocument writes the change an approval asks about to a
// read-only .diff file and shows it.
func (s *Server) showDiffDocument(ctx context.Context, req session.ApprovalRequest) error {
	path, err := s.writeShownFile("diffs", "approval-"+req.CallID+".diff", []byte(req.Description.Preview))
	if err != nil {
		return err
	}
	return s.showDocument(ctx, path, true)
}
