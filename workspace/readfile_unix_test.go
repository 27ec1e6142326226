//go:build unix

package workspace

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A FIFO has no writer: opening it the ordinary way would block forever.
func TestReadTextFileFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	var nr *NotRegularFileError
	if _, err := ReadTextFile(fifo, ReadOptions{}); !errors.As(err, &nr) {
		t.Errorf("reading a FIFO: %v, want *NotRegularFileError", err)
	}
}

// The state directory's files are read through OpenRegular and
// ReadRegularFile: none of these may block, or read without bound.
func TestReadRegularFileRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	zero := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	folder := filepath.Join(dir, "folder")
	if err := os.Mkdir(folder, 0o700); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge")
	if err := os.WriteFile(huge, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(huge, 1<<40); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		want any
	}{
		{fifo, new(*NotRegularFileError)},
		{zero, new(*NotRegularFileError)},
		{folder, new(*NotRegularFileError)},
		{huge, new(*FileTooLargeError)},
	} {
		for _, flag := range []int{os.O_RDONLY, os.O_RDWR | os.O_APPEND} {
			if tc.path == huge || tc.path == folder && flag != os.O_RDONLY {
				continue
			}
			if f, _, err := OpenRegular(tc.path, flag); !errors.As(err, tc.want) {
				if f != nil {
					f.Close()
				}
				t.Errorf("OpenRegular(%s, %#x): %v, want %T", filepath.Base(tc.path), flag, err, tc.want)
			}
		}
		_, err := ReadRegularFile(tc.path, 1<<20)
		if !errors.As(err, tc.want) {
			t.Errorf("ReadRegularFile(%s): %v, want %T", filepath.Base(tc.path), err, tc.want)
		} else if !strings.Contains(err.Error(), tc.path) {
			t.Errorf("ReadRegularFile(%s): %q does not name the file", filepath.Base(tc.path), err)
		}
	}
}

// A file that grows past the cap while read in parts fails at the cap.
func TestCapReaderStopsAtTheLimit(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, fi, err := OpenRegular(p, os.O_RDONLY)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := CapReader(f, p, fi, 9); !errors.As(err, new(*FileTooLargeError)) {
		t.Errorf("CapReader of a 10-byte file at 9: %v, want *FileTooLargeError", err)
	}
	r, err := CapReader(f, p, fi, 10)
	if err != nil {
		t.Fatal(err)
	}
	// The file grows after the stat.
	if err := os.WriteFile(p, []byte("0123456789abcdef"), 0o600); err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(r)
	if !errors.As(err, new(*FileTooLargeError)) || string(data) != "0123456789" {
		t.Errorf("reading a file grown past the cap: %q, %v; want its first 10 bytes and *FileTooLargeError", data, err)
	}
	r, _ = CapReader(strings.NewReader("0123456789"), p, fi, 10)
	if data, err := io.ReadAll(r); err != nil || string(data) != "0123456789" {
		t.Errorf("reading exactly the cap: %q, %v", data, err)
	}
}

func TestOpenDirRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o600)
	for _, p := range []string{fifo, file} {
		if d, err := OpenDir(p); !errors.As(err, new(*NotFolderError)) {
			if d != nil {
				d.Close()
			}
			t.Errorf("OpenDir(%s): %v, want *NotFolderError", filepath.Base(p), err)
		}
	}
	d, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
}
