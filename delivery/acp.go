package delivery

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/wire"
)

// readTextFileResult is the answer to ACP's fs/read_text_file.
type readTextFileResult struct {
	Content string `json:"content"`
}

// acpRead reads a file through the client, which answers with its buffer
// when it has one open. A file that is not on disk is treated as missing
// without asking (the client has no buffer for a file that never existed).
// The text is marked Open only when edits go back through the client too:
// a client that reads but does not write has its files edited on disk.
// The text read is kept for the next edit's planning (acpPlanRead).
func (f *Files) acpRead(ctx context.Context, abs string) (tools.FileText, bool, error) {
	if !f.d.cfg.Client.Caps().FSRead || f.sessionID == "" {
		return tools.FileText{}, false, nil
	}
	fi, err := os.Stat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return tools.FileText{}, true, nil
	}
	if err == nil && fi.IsDir() {
		return tools.FileText{}, true, fmt.Errorf("%s is a directory, not a file", f.Display(abs))
	}
	var res readTextFileResult
	if err := f.d.cfg.Client.Call(ctx, methodReadTextFile, wire.ReadTextFileParams{SessionID: f.sessionID, Path: abs}, &res); err != nil {
		return tools.FileText{}, true, fmt.Errorf("the editor could not read %s: %s", f.Display(abs), ClientError(err))
	}
	ft := tools.FileText{Text: res.Content, Exists: true, Open: f.acpWrites()}
	if fi != nil {
		ft.Mode = fi.Mode().Perm()
	}
	if ft.Open { // only edits through the client plan on these (acpPlanRead)
		f.mu.Lock()
		f.acpReads[abs] = ft
		f.mu.Unlock()
	}
	return ft, true, nil
}

// acpPlanRead is the reader an edit plans against in the ACP dialect: the
// text the client gave for the path since the last edit, which is what the
// call's description (and so the permission request) showed, or a fresh
// read. Each edit consumes the texts and forgets the others (acpForget),
// so one read and one edit cost two fs/read_text_file calls, not three.
func (f *Files) acpPlanRead(ctx context.Context, abs string) (tools.FileText, error) {
	f.mu.Lock()
	ft, ok := f.acpReads[abs]
	delete(f.acpReads, abs)
	f.mu.Unlock()
	if ok {
		return ft, nil
	}
	return f.Read(ctx, abs)
}

// acpForget drops the texts kept by acpRead, once an edit is done with
// them: the next edit reads again.
func (f *Files) acpForget() {
	f.mu.Lock()
	clear(f.acpReads)
	f.mu.Unlock()
}

// acpWrite delivers whole-file writes through fs/write_text_file, all or
// nothing: if one write fails, those already made are written back.
func (f *Files) acpWrite(ctx context.Context, writes []tools.Change) error {
	c := f.d.cfg.Client
	var done []tools.Change
	for _, w := range writes {
		err := c.Call(ctx, methodWriteTextFile, wire.WriteTextFileParams{SessionID: f.sessionID, Path: w.Path, Content: *w.NewText}, nil)
		if err != nil {
			for i := len(done) - 1; i >= 0; i-- {
				if done[i].Existed {
					c.Call(context.WithoutCancel(ctx), methodWriteTextFile, wire.WriteTextFileParams{SessionID: f.sessionID, Path: done[i].Path, Content: done[i].OldText}, nil)
				} else {
					os.Remove(done[i].Path)
				}
			}
			return &tools.DeliveryError{Path: f.Display(w.Path), Reason: "the editor did not write it: " + ClientError(err)}
		}
		done = append(done, w)
	}
	return nil
}

// acpWrites reports whether edits go through fs/write_text_file.
func (f *Files) acpWrites() bool {
	return f.d.cfg.Client.Caps().FSWrite && f.sessionID != ""
}
