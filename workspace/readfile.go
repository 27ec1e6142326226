package workspace

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"unicode/utf8"
)

// Defaults of ReadOptions.
const (
	// DefaultMaxReadBytes is the largest file ReadTextFile reads whole.
	DefaultMaxReadBytes = 10 << 20
	// DefaultMaxInvalidUTF8 is the share of bytes in the sniffed start of
	// a file that may be invalid UTF-8 before the file counts as binary.
	// It lets a Latin-1 file with a few accented letters through while
	// stopping data that merely happens to hold no NUL byte.
	DefaultMaxInvalidUTF8 = 0.1
)

// binarySniffBytes is how much of a file's start decides whether it is
// binary, as git does.
const binarySniffBytes = 8 << 10

// ReadOptions configure ReadTextFile. The zero value means the defaults.
type ReadOptions struct {
	MaxBytes       int64   // 0: DefaultMaxReadBytes
	MaxInvalidUTF8 float64 // 0: DefaultMaxInvalidUTF8
}

// FileTooLargeError is returned for a file over the read limit.
type FileTooLargeError struct {
	Path  string
	Size  int64 // the size seen; for a file that grew while read, at least Limit+1
	Limit int64
}

// Error implements error.
func (e *FileTooLargeError) Error() string {
	return fmt.Sprintf("%s is too large to read: %d bytes, the limit is %d", e.Path, e.Size, e.Limit)
}

// BinaryFileError is returned for a file that does not look like text.
type BinaryFileError struct {
	Path   string
	Reason string // what gave it away
}

// Error implements error.
func (e *BinaryFileError) Error() string {
	return fmt.Sprintf("%s is a binary file (%s), not text", e.Path, e.Reason)
}

// NotRegularFileError is returned for a folder, device, pipe or socket.
type NotRegularFileError struct {
	Path string
	Mode fs.FileMode
}

// Error implements error.
func (e *NotRegularFileError) Error() string {
	if e.Mode.IsDir() {
		return fmt.Sprintf("%s is a folder, not a file", e.Path)
	}
	return fmt.Sprintf("%s is %s, not a regular file", e.Path, FileKind(e.Mode))
}

// FileKind names the type of file mode m in words for messages: "a named
// pipe", "a character device", and so on.
func FileKind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a folder"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "a special file"
}

// ReadTextFile reads a whole text file, refusing files over the size
// limit (*FileTooLargeError), binary files (*BinaryFileError: a NUL byte
// in the first 8 KiB, or too much invalid UTF-8 there) and anything but
// a regular file (*NotRegularFileError). Other errors are the file
// system's, such as fs.ErrNotExist. The bytes are returned as they are,
// BOM and line endings included.
func ReadTextFile(path string, opts ReadOptions) ([]byte, error) {
	f, fi, err := OpenRegular(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readText(f, path, fi, opts)
}

// OpenRegular opens path with flag (os.O_RDONLY, os.O_RDWR|os.O_APPEND,
// …) for a file outside the workspace folders that the daemon keeps
// itself (the state directory), and returns it with its type and size
// as read from the opened descriptor. The open does not block on a
// FIFO, and the type is checked on the descriptor, so a swap after a
// Stat cannot slip a device past the check: anything but a regular file
// is a *NotRegularFileError naming path. Other errors are the file
// system's, such as fs.ErrNotExist.
func OpenRegular(path string, flag int) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, flag|readOpenFlags, 0)
	if err != nil {
		// A socket cannot be opened at all (ENXIO); say what it is.
		if fi, lerr := os.Stat(path); lerr == nil && !fi.Mode().IsRegular() {
			return nil, nil, &NotRegularFileError{Path: path, Mode: fi.Mode()}
		}
		return nil, nil, err
	}
	return regularOpened(f, path)
}

// OpenDir opens the folder at path for listing or syncing by the same
// rules as OpenRegular: the open does not block (a FIFO put in a
// folder's place would wait for a writer), and anything but a folder is
// a *NotFolderError naming path.
func OpenDir(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|readOpenFlags, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.IsDir() {
		f.Close()
		return nil, &NotFolderError{Path: path, Mode: fi.Mode()}
	}
	return f, nil
}

// NotFolderError is returned by OpenDir for anything but a folder.
type NotFolderError struct {
	Path string
	Mode fs.FileMode
}

// Error implements error.
func (e *NotFolderError) Error() string {
	return fmt.Sprintf("%s is %s, not a folder", e.Path, FileKind(e.Mode))
}

// regularOpened returns f, just opened, with its stat if it is a regular
// file; otherwise it closes f and says what it is.
func regularOpened(f *os.File, path string) (*os.File, fs.FileInfo, error) {
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, &NotRegularFileError{Path: path, Mode: fi.Mode()}
	}
	return f, fi, nil
}

// ReadRegularFile reads the whole regular file at path, opened by
// OpenRegular, refusing one over limit bytes (*FileTooLargeError). The
// limit counts the bytes actually read, so a file that grows while it
// is read cannot make it read more than limit+1.
func ReadRegularFile(path string, limit int64) ([]byte, error) {
	f, fi, err := OpenRegular(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readCapped(f, path, fi, limit)
}

// CapReader returns a reader of f (opened by OpenRegular, fi its stat)
// for a caller that reads it in parts, line by line, and so cannot take
// ReadRegularFile's whole buffer: it refuses at once a file whose size
// is over limit, and fails its read past limit bytes with a
// *FileTooLargeError naming path, should the file grow meanwhile.
func CapReader(f io.Reader, path string, fi fs.FileInfo, limit int64) (io.Reader, error) {
	if fi.Size() > limit {
		return nil, &FileTooLargeError{Path: path, Size: fi.Size(), Limit: limit}
	}
	return &cappedReader{r: f, left: limit, path: path, limit: limit}, nil
}

type cappedReader struct {
	r           io.Reader
	left, limit int64
	path        string
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.left < 0 {
		return 0, &FileTooLargeError{Path: c.path, Size: c.limit + 1, Limit: c.limit}
	}
	// One byte past the limit is asked for, to tell a file of exactly
	// limit bytes from a longer one.
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if c.left < 0 {
		return n + int(c.left), &FileTooLargeError{Path: c.path, Size: c.limit + 1, Limit: c.limit}
	}
	return n, err
}

// readText reads the opened regular file f under ReadTextFile's rules.
func readText(f *os.File, path string, fi fs.FileInfo, opts ReadOptions) ([]byte, error) {
	limit := opts.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxReadBytes
	}
	data, err := readCapped(f, path, fi, limit)
	if err != nil {
		return nil, err
	}
	if reason := sniffBinary(data, opts.MaxInvalidUTF8); reason != "" {
		return nil, &BinaryFileError{Path: path, Reason: reason}
	}
	return data, nil
}

// SniffBinary reports whether data, the start of a file, looks binary
// by the rules (and default threshold) of ReadTextFile, and why. Search
// and listing code can use it on a file's first bytes to skip binaries.
func SniffBinary(data []byte) (binary bool, reason string) {
	reason = sniffBinary(data, 0)
	return reason != "", reason
}

func sniffBinary(data []byte, maxInvalid float64) string {
	if maxInvalid <= 0 {
		maxInvalid = DefaultMaxInvalidUTF8
	}
	sample := data[:min(len(data), binarySniffBytes)]
	if bytes.IndexByte(sample, 0) >= 0 {
		return "it contains NUL bytes"
	}
	invalid := 0
	for i := 0; i < len(sample); {
		r, size := utf8.DecodeRune(sample[i:])
		if r == utf8.RuneError && size == 1 {
			if !utf8.FullRune(sample[i:]) && len(sample) < len(data) {
				break // a character cut by the end of the sample
			}
			invalid++
		}
		i += size
	}
	if len(sample) > 0 && float64(invalid) > maxInvalid*float64(len(sample)) {
		return fmt.Sprintf("%d%% of its first %d bytes are not UTF-8", invalid*100/len(sample), len(sample))
	}
	return ""
}
