package tools

import (
	"context"
	"io/fs"

	"github.com/cline-ls/cline-ls/workspace"
)

// Files is what the built-in tools need from the workspace and the editor.
// The daemon implements it over the workspace folders, the editor's buffer
// mirror and the connection (rpc); tests use an in-memory fake. Every path
// given to it comes from Resolve.
type Files interface {
	// Resolve maps a path the model gave (relative to the primary folder,
	// or absolute) to an absolute path inside a workspace folder. Its error
	// is model-facing: it says why the path was refused.
	Resolve(path string) (string, error)
	// Display is how a path is shown to the model and the user: relative
	// to its workspace folder when inside one.
	Display(abs string) string
	// Root is the primary workspace folder.
	Root() string
	// Disk is the workspace folders opened for confined disk access.
	// A tool that reads the disk itself (a listing, a search, a file too
	// large for Read) goes through it with the path Resolve gave, so that
	// a symbolic link swapped in after Resolve, while an approval waited
	// say, cannot lead it outside the workspace.
	Disk() (*workspace.Roots, error)
	// Read returns a file's current text: the editor's buffer when the
	// file is open there (unsaved text included), else the disk. A missing
	// file is not an error: FileText.Exists is false.
	Read(ctx context.Context, abs string) (FileText, error)
	// Ignored reports whether .gitignore / .clineignore rules hide abs.
	Ignored(abs string, isDir bool) bool
	// Apply computes and delivers changes to one or more files, all or
	// nothing. plan is called with a reader of current texts and returns
	// the changes to make; Apply delivers them (open buffers through the
	// editor, other files atomically to disk). If the editor refuses an
	// edit because its buffer moved on (the user typed), Apply waits for
	// the mirror to catch up and calls plan once more on the latest texts
	// before giving up, so the user's keystrokes always win. A plan error
	// is returned as is (it is model-facing); delivery failures are
	// wrapped in *DeliveryError. On success it returns the changes as
	// delivered.
	Apply(ctx context.Context, plan Planner) ([]Change, error)
	// Seen records that the model has read the current text of abs in
	// this session, so a whole-file write may replace it.
	Seen(abs string, text string)
	// SeenText returns the text the model last read for abs, if any.
	SeenText(abs string) (string, bool)
}

// MaxFileBytes is the largest file Files.Read loads whole for a tool:
// the daemon's files view and the tests' fake refuse a larger one alike.
const MaxFileBytes = 64 << 20

// Planner computes changes from current file texts.
type Planner func(ctx context.Context, read func(abs string) (FileText, error)) ([]Change, error)

// FileText is a file's current text and where it came from.
type FileText struct {
	Text    string
	Exists  bool
	Open    bool  // the text is the editor's buffer
	Version int32 // the buffer version when Open
	Mode    fs.FileMode
}

// Change is one file's change. NewText nil deletes the file; a non-empty
// MoveTo renames it (with NewText as the moved file's content).
type Change struct {
	Path    string // absolute
	OldText string
	Existed bool
	NewText *string
	MoveTo  string
	// Diagnostics, set by Files.Apply once the change is delivered, is
	// what the editor's diagnostics say the change introduced or fixed,
	// worded for the model; empty when the editor said nothing in time.
	Diagnostics string
}

// DeliveryError is a change the editor or the disk did not take. Nothing
// was changed when it is returned.
type DeliveryError struct {
	Path   string
	Reason string
}

func (e *DeliveryError) Error() string {
	return "the edit to " + e.Path + " was not applied: " + e.Reason
}
