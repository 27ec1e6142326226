package tools_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/tools"
)

func numbered(from, to int, line func(int) string) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "%d | %s\n", i, line(i))
	}
	return b.String()
}

func TestReadFilesSeveralWithErrors(t *testing.T) {
	files := wsTree(t, map[string]string{
		"a.go":        "package a\n\nfunc A() {}\n",
		"crlf.txt":    "one\r\ntwo\r\n",
		"dir/b.txt":   "b",
		"empty.txt":   "",
		"img.png":     "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + strings.Repeat("\x00", 100),
		"icon.bmp":    "BM" + strings.Repeat("\x00", 100),
		"blob.bin":    "data\x00\x01\x02more",
		"nonl.txt":    "no final newline",
		"unicode.txt": "héllo wörld\n",
	})
	args := `{"files":[{"path":"a.go"},{"path":"missing.go"},{"path":"dir"},{"path":"../outside.txt"},
		{"path":"img.png"},{"path":"icon.bmp"},{"path":"blob.bin"},{"path":"crlf.txt"},{"path":"empty.txt"},{"path":"nonl.txt"},
		{"path":"unicode.txt"},{"path":"/etc/passwd"}]}`
	res := wsRun(t, files, tools.NameReadFiles, args)
	if res.IsError {
		t.Error("IsError although some files were read")
	}
	wsWant(t, res.Content,
		"File: a.go (3 lines)\n1 | package a\n2 | \n3 | func A() {}\n",
		"File: missing.go — error: no such file",
		"File: dir — error: it is a folder, not a file; use list_files",
		"File: ../outside.txt — error: ",
		"out of the workspace",
		"File: img.png — an image (image/png, 116 bytes)\n",
		"File: icon.bmp — an image (image/bmp), 102 bytes: not shown as text",
		"File: blob.bin — a binary file (",
		"File: crlf.txt (2 lines)\n1 | one\n2 | two\n",
		"File: empty.txt (empty)\n",
		"File: nonl.txt (1 line)\n1 | no final newline\n",
		"1 | héllo wörld\n",
		"File: /etc/passwd — error: ", "outside the workspace",
	)
	wsWantNot(t, res.Content, "\r", "IHDR", "root:")

	res = wsRun(t, files, tools.NameReadFiles, `{"files":[{"path":"nope.txt"},{"path":"dir"}]}`)
	if !res.IsError {
		t.Error("IsError is false although no file could be read")
	}
}

func TestReadFilesPagingAndLimits(t *testing.T) {
	line := func(i int) string { return fmt.Sprintf("line %d", i) }
	var long strings.Builder
	for i := 1; i <= 5000; i++ {
		long.WriteString(line(i) + "\n")
	}
	wide := strings.Repeat("x", 100) // 50 lines of it exceed no limit; 600 do
	var wideText strings.Builder
	for i := 1; i <= 600; i++ {
		wideText.WriteString(wide + "\n")
	}
	files := wsTree(t, map[string]string{
		"long.txt":     long.String(),
		"wide.txt":     wideText.String(),
		"longline.txt": "short\n" + strings.Repeat("y", 5000) + "\nafter\n",
	})

	res := wsRun(t, files, tools.NameReadFiles, `{"files":[{"path":"long.txt"}]}`)
	wsWant(t, res.Content,
		"File: long.txt — showing lines 1–2000 of 5000 (cut at the 2000-line limit); read on with start_line 2001\n",
		numbered(1998, 2000, line))
	wsWantNot(t, res.Content, "2001 | ")

	res = wsRun(t, files, tools.NameReadFiles, `{"files":[{"path":"long.txt","start_line":4990}]}`)
	wsWant(t, res.Content, "showing lines 4990–5000 of 5000\n", numbered(4990, 5000, line))
	wsWantNot(t, res.Content, "read on")

	res = wsRun(t, files, tools.NameReadFiles, `{"files":[{"path":"long.txt","start_line":10,"end_line":12}]}`)
	if want := "File: long.txt — showing lines 10–12 of 5000\n" + numbered(10, 12, line); res.Content != want {
		t.Errorf("got %q, want %q", res.Content, want)
	}

	res = wsRun(t, files, tools.NameReadFiles, `{"files":[{"path":"long.txt","start_line":6000}]}`)
	wsWant(t, res.Content, "start_line 6000 is past the end of the file, which has 5000 lines")
	if !res.IsError {
		t.Error("a read past the end is not an error")
	}

	// 600 lines of about 106 characters pass 48,000 characters.
	res = wsRun(t, files, tools.NameReadFiles, `{"files":[{"path":"wide.txt"}]}`)
	wsWant(t, res.Content, "(cut at the 48,000-character limit); read on with start_line ")
	if n := len(res.Content); n > 48_000+300 {
		t.Errorf("%d characters, over the limit", n)
	}

	res = wsRun(t, files, tools.NameReadFiles, `{"files":[{"path":"longline.txt"}]}`)
	wsWant(t, res.Content, "2 | "+strings.Repeat("y", 2000)+"… [line cut: 5000 characters]\n", "3 | after\n")

	_, err := wsBuild(t, files, tools.NameReadFiles, `{"files":[{"path":"long.txt","start_line":9,"end_line":3}]}`)
	wsWant(t, wsErrorText(t, err), "files[0].end_line: must be ≥ start_line (9), got 3")
	_, err = wsBuild(t, files, tools.NameReadFiles, `{"files":[{"path":"long.txt","start_line":0}]}`)
	wsErrorText(t, err)
}

func TestReadFilesUsesOpenBufferAndMarksSeen(t *testing.T) {
	files := wsTree(t, map[string]string{"a.txt": "on disk\n", "b.txt": "1\n2\n3\n"})
	abs := files.OpenBuffer("a.txt", "unsaved\nbuffer text\n")
	res := wsRun(t, files, tools.NameReadFiles, `{"files":[{"path":"a.txt"}]}`)
	wsWant(t, res.Content, "1 | unsaved\n2 | buffer text\n")
	wsWantNot(t, res.Content, "on disk")
	if seen, ok := files.SeenText(abs); !ok || seen != "unsaved\nbuffer text\n" {
		t.Errorf("Seen(%q) = %q, %v; want the buffer text", abs, seen, ok)
	}

	// A file only partly shown is not marked seen.
	wsRun(t, files, tools.NameReadFiles, `{"files":[{"path":"b.txt","end_line":2}]}`)
	bAbs := filepath.Join(files.Root(), "b.txt")
	if _, ok := files.SeenText(bAbs); ok {
		t.Error("a partial read marked the file seen")
	}
	wsRun(t, files, tools.NameReadFiles, `{"files":[{"path":"b.txt","start_line":1,"end_line":3}]}`)
	if _, ok := files.SeenText(bAbs); !ok {
		t.Error("reading every line did not mark the file seen")
	}

	// A buffer open for a file that is not on disk yet is read too.
	files.OpenBuffer("new.txt", "not saved yet\n")
	res = wsRun(t, files, tools.NameReadFiles, `{"files":[{"path":"new.txt"}]}`)
	wsWant(t, res.Content, "1 | not saved yet")
}

func TestReadFilesDescribe(t *testing.T) {
	files := wsTree(t, map[string]string{"a.txt": "a", "b.txt": "b", "c.txt": "c", "d.txt": "d"})
	inv, err := wsBuild(t, files, tools.NameReadFiles,
		`{"files":[{"path":"a.txt","start_line":3},{"path":"b.txt"},{"path":"c.txt"},{"path":"../x"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	d := inv.Describe(context.Background())
	if d.Kind != tools.KindRead || d.Title != "Read a.txt, b.txt and 2 more" {
		t.Errorf("description %+v", d)
	}
	if len(d.Locations) != 3 || d.Locations[0].Path != filepath.Join(files.Root(), "a.txt") || d.Locations[0].Line != 3 {
		t.Errorf("locations %+v", d.Locations)
	}
}

func TestReadFilesLargeFileFromDisk(t *testing.T) {
	files := wsTree(t, nil)
	f, err := os.Create(filepath.Join(files.Root(), "huge.log"))
	if err != nil {
		t.Fatal(err)
	}
	// About 11 MB: over the whole-file read limit.
	row := strings.Repeat("z", 100)
	for i := 1; i <= 110_000; i++ {
		fmt.Fprintf(f, "%d %s\n", i, row)
	}
	f.Close()
	res := wsRun(t, files, tools.NameReadFiles, `{"files":[{"path":"huge.log","start_line":100000,"end_line":100002}]}`)
	wsWant(t, res.Content, "huge.log [", "MB, read from disk] — showing lines 100000–100002 of 110000\n",
		"100000 | 100000 "+row+"\n100001 | 100001 ", "100002 | 100002 ")
}

// Smallest headers of each format models take, padded past the sniffer's
// minimum.
var imageHeads = map[string]string{
	"image/png":  "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00",
	"image/jpeg": "\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00",
	"image/gif":  "GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff",
	"image/webp": "RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00\x2f\x00\x00\x00",
}

// TestReadFilesReturnsImages: a picture in a format models take comes
// back as an image of the bytes on disk, typed by its content whatever
// its name; the text names it.
func TestReadFilesReturnsImages(t *testing.T) {
	tree := map[string]string{"logo.png": imageHeads["image/png"], "photo.jpg": imageHeads["image/jpeg"],
		"anim.gif": imageHeads["image/gif"], "pic.webp": imageHeads["image/webp"],
		"misnamed.png": imageHeads["image/jpeg"], // a JPEG called .png
		"fake.png":     "not a picture at all\n",
		"broken.webp":  "RIFF\x1a\x00\x00\x00WEBPJUNK\x0d\x00\x00\x00",
	}
	files := wsTree(t, tree)
	res := wsRun(t, files, tools.NameReadFiles, `{"files":[{"path":"logo.png"},{"path":"photo.jpg"},{"path":"anim.gif"},
		{"path":"pic.webp"},{"path":"misnamed.png"},{"path":"fake.png"},{"path":"broken.webp"}]}`)
	want := []struct{ name, mime string }{{"logo.png", "image/png"}, {"photo.jpg", "image/jpeg"}, {"anim.gif", "image/gif"},
		{"pic.webp", "image/webp"}, {"misnamed.png", "image/jpeg"}}
	if len(res.Images) != len(want) {
		t.Fatalf("%d images, want %d:\n%s", len(res.Images), len(want), res.Content)
	}
	for i, w := range want {
		if res.Images[i].MIMEType != w.mime || string(res.Images[i].Data) != tree[w.name] {
			t.Errorf("image %d = %s, %d bytes; want %s, the bytes of %s", i, res.Images[i].MIMEType, len(res.Images[i].Data), w.mime, w.name)
		}
		wsWant(t, res.Content, fmt.Sprintf("File: %s — an image (%s, %d bytes)\n", w.name, w.mime, len(tree[w.name])))
	}
	wsWant(t, res.Content, "File: fake.png (1 line)\n1 | not a picture at all\n", "File: broken.webp — a binary file")
}

// TestReadFilesImageCap: a picture over MaxImageBytes is named, with the
// cap, and not sent.
func TestReadFilesImageCap(t *testing.T) {
	big := imageHeads["image/png"] + strings.Repeat("\x00", tools.MaxImageBytes)
	files := wsTree(t, map[string]string{"huge.png": big})
	res := wsRun(t, files, tools.NameReadFiles, `{"files":[{"path":"huge.png"}]}`)
	if len(res.Images) != 0 || res.IsError {
		t.Errorf("an image over the cap was sent (%d images) or failed the call", len(res.Images))
	}
	wsWant(t, res.Content, "File: huge.png — an image (image/png), 5.0 MB: over the 5 MiB an image may be, not shown\n")
}

func TestSniffImageWantsTheHeader(t *testing.T) {
	for mime, head := range imageHeads {
		if got, ok := tools.SniffImage([]byte(head)); !ok || got != mime {
			t.Errorf("SniffImage(%s header) = %q, %v", mime, got, ok)
		}
		// Cut before the header's fixed fields end: the magic alone is not enough.
		if _, ok := tools.SniffImage([]byte(head[:8])); ok && mime != "image/jpeg" {
			t.Errorf("SniffImage(%s magic only) accepted it", mime)
		}
	}
	if _, ok := tools.SniffImage([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rJUNK\x00\x00")); ok {
		t.Error("SniffImage accepted a PNG signature without its IHDR chunk")
	}
}
