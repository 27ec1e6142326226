package tools

import (
	"bytes"
	"net/http"
	"slices"
)

// MaxImageBytes bounds one image a model is sent (decoded), a prompt's or
// a tool's: every provider refuses larger ones, and an image goes into
// every later request of the session until compaction drops it.
const MaxImageBytes = 5 << 20

// ImageTypes are the image formats every provider with vision takes.
var ImageTypes = []string{"image/png", "image/jpeg", "image/gif", "image/webp"}

// Image is an image a tool returns for the model to see. The session
// passes it on to a model that takes images and says it was left out to
// one that does not.
type Image struct {
	MIMEType string
	Data     []byte
}

// SniffImage reports which of ImageTypes the bytes at the start of a file
// are, when net/http's content sniffing and the format's own header agree
// (the header's fixed fields past the magic number included), so that a
// file is sent as an image for what it holds, never for its name.
func SniffImage(head []byte) (mimeType string, ok bool) {
	mime := http.DetectContentType(head)
	if !slices.Contains(ImageTypes, mime) {
		return "", false
	}
	var fits bool
	switch mime {
	case "image/png":
		// The signature, then the IHDR chunk, which comes first.
		fits = len(head) >= 16 && bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")) && string(head[12:16]) == "IHDR"
	case "image/jpeg":
		fits = bytes.HasPrefix(head, []byte("\xff\xd8\xff"))
	case "image/gif":
		fits = len(head) >= 10 && (bytes.HasPrefix(head, []byte("GIF87a")) || bytes.HasPrefix(head, []byte("GIF89a")))
	case "image/webp":
		// RIFF, the size, WEBP, then a VP8, VP8L or VP8X chunk.
		fits = len(head) >= 16 && bytes.HasPrefix(head, []byte("RIFF")) && string(head[8:12]) == "WEBP" &&
			slices.Contains([]string{"VP8 ", "VP8L", "VP8X"}, string(head[12:16]))
	}
	return mime, fits
}
