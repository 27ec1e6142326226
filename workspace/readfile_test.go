package workspace

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readTestFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadTextFile(t *testing.T) {
	dir := t.TempDir()
	latin1 := []byte(strings.Repeat("Le caf\xe9 est pr\xeat. ", 100)) // 2 of every 20 bytes invalid
	latin1Sparse := []byte(strings.Repeat("plain ascii line of text\n", 50) + "caf\xe9\n")
	// A two-byte character straddles the end of the 8 KiB sample.
	straddle := append(bytes.Repeat([]byte("x"), binarySniffBytes-1), "é and more"...)
	noisy := make([]byte, 4096)
	for i := range noisy {
		noisy[i] = byte(0x80 + i%0x7f) // high bytes, no NUL
	}

	tests := []struct {
		name    string
		data    []byte
		opts    ReadOptions
		wantErr any // nil, or a pointer to the error type expected
	}{
		{"text", []byte("package main\n"), ReadOptions{}, nil},
		{"empty", nil, ReadOptions{}, nil},
		{"bom and crlf kept", []byte("\xef\xbb\xbfline one\r\nline two\r\n"), ReadOptions{}, nil},
		{"unicode", []byte("héllo 世界 🌍\n"), ReadOptions{}, nil},
		{"nul early", []byte("abc\x00def"), ReadOptions{}, new(*BinaryFileError)},
		{"utf16", []byte("\xff\xfeh\x00i\x00"), ReadOptions{}, new(*BinaryFileError)},
		{"nul after sniff", append(bytes.Repeat([]byte("a"), binarySniffBytes), 0), ReadOptions{}, nil},
		{"noisy high bytes", noisy, ReadOptions{}, new(*BinaryFileError)},
		{"sparse latin1", latin1Sparse, ReadOptions{}, nil},
		{"latin1 at strict threshold", latin1Sparse, ReadOptions{MaxInvalidUTF8: 1e-9}, new(*BinaryFileError)},
		{"denser latin1 under loose threshold", latin1, ReadOptions{MaxInvalidUTF8: 0.5}, nil},
		{"character cut by the sample", straddle, ReadOptions{MaxInvalidUTF8: 1e-9}, nil},
		{"at the limit", bytes.Repeat([]byte("z"), 100), ReadOptions{MaxBytes: 100}, nil},
		{"over the limit", bytes.Repeat([]byte("z"), 101), ReadOptions{MaxBytes: 100}, new(*FileTooLargeError)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := readTestFile(t, dir, strings.ReplaceAll(tc.name, " ", "_"), tc.data)
			got, err := ReadTextFile(p, tc.opts)
			switch want := tc.wantErr.(type) {
			case nil:
				if err != nil {
					t.Fatalf("ReadTextFile: %v", err)
				}
				if !bytes.Equal(got, tc.data) {
					t.Errorf("content changed: got %d bytes, want %d", len(got), len(tc.data))
				}
			case **BinaryFileError:
				if !errors.As(err, want) {
					t.Fatalf("error %v, want *BinaryFileError", err)
				}
				if (*want).Path != p || (*want).Reason == "" {
					t.Errorf("error %+v lacks its path or reason", *want)
				}
			case **FileTooLargeError:
				if !errors.As(err, want) {
					t.Fatalf("error %v, want *FileTooLargeError", err)
				}
				if (*want).Size != int64(len(tc.data)) || (*want).Limit != tc.opts.MaxBytes {
					t.Errorf("error %+v, want size %d and limit %d", *want, len(tc.data), tc.opts.MaxBytes)
				}
			}
			if err != nil && got != nil {
				t.Error("data returned along with an error")
			}
		})
	}
}

func TestReadTextFileNotRegular(t *testing.T) {
	dir := t.TempDir()
	var nr *NotRegularFileError
	if _, err := ReadTextFile(dir, ReadOptions{}); !errors.As(err, &nr) || !nr.Mode.IsDir() {
		t.Errorf("reading a folder: %v, want *NotRegularFileError", err)
	} else if !strings.Contains(err.Error(), "folder") {
		t.Errorf("message %q does not say it is a folder", err)
	}
	if _, err := ReadTextFile(filepath.Join(dir, "missing"), ReadOptions{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("reading a missing file: %v, want fs.ErrNotExist", err)
	}
}

func TestReadSniffBinary(t *testing.T) {
	if bin, _ := SniffBinary([]byte("plain text\n")); bin {
		t.Error("plain text sniffed as binary")
	}
	if bin, reason := SniffBinary([]byte("\x7fELF\x02\x01\x01\x00")); !bin || !strings.Contains(reason, "NUL") {
		t.Errorf("ELF header: binary=%v reason=%q", bin, reason)
	}
}
