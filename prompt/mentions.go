package prompt

import (
	"fmt"
	"net/url"
	"path"
	"strconv"
	"strings"
)

// The model reads a prompt's mentions as text: a file sent with its
// content as a <file> element, a link to one as a [file: …] line. The
// user typed neither: UserWords turns them back into @name, so every place
// that shows a prompt to the user (titles, replays, checkpoint labels,
// progress) shows what was typed. Both forms are made here only.

const (
	fileOpen  = "<file uri="
	fileClose = "</file>"
	linkOpen  = "[file: "
)

// FileBlock is a mention sent with its content, as the model reads it.
func FileBlock(uri, text string) string {
	return fmt.Sprintf("\n%s%q>\n%s\n%s\n", fileOpen, uri, text, fileClose)
}

// FileLink is a mention sent as a link, as the model reads it.
func FileLink(uri string) string {
	return "\n" + linkOpen + uri + "]\n"
}

// UserWords is the text of a prompt as the user wrote it: each mention
// the daemon expanded (FileBlock, FileLink) is @name again, or nothing
// when the user's own text already mentions that file. It also takes a
// text that was cut or had its white space folded since (a stored title,
// a checkpoint label): a <file> element cut before its end is a mention up
// to the end.
func UserWords(text string) string {
	if cut, ok := strings.CutSuffix(text, "…"); ok {
		// A title cut inside a mention's start ("fix it <file…"): the
		// mention's name is lost, so is the mention.
		for _, open := range []string{"<file", "[file:"} {
			if k := strings.LastIndex(cut, open); k >= 0 && !strings.ContainsAny(cut[k:], ">]") {
				return UserWords(strings.TrimSpace(cut[:k])) + "…"
			}
		}
	}
	if !strings.Contains(text, fileOpen) && !strings.Contains(text, linkOpen) {
		return text
	}
	var out strings.Builder
	var names []string
	rest := text
	for rest != "" {
		i, j := strings.Index(rest, fileOpen), strings.Index(rest, linkOpen)
		if i < 0 && j < 0 {
			out.WriteString(rest)
			break
		}
		if i < 0 || j >= 0 && j < i {
			after := rest[j+len(linkOpen):]
			end := strings.IndexAny(after, "]\n")
			if end < 0 || after[end] != ']' {
				out.WriteString(rest[:j+len(linkOpen)])
				rest = after
				continue
			}
			out.WriteString(strings.TrimSuffix(rest[:j], "\n"))
			names = append(names, mentionName(after[:end]))
			out.WriteString("\x00")
			rest = strings.TrimPrefix(after[end+1:], "\n")
			continue
		}
		after := rest[i+len(fileOpen):]
		q, err := strconv.QuotedPrefix(after)
		uri, uerr := strconv.Unquote(q)
		if err != nil || uerr != nil || !strings.HasPrefix(after[len(q):], ">") {
			out.WriteString(rest[:i+len(fileOpen)])
			rest = after
			continue
		}
		out.WriteString(strings.TrimSuffix(rest[:i], "\n"))
		names = append(names, mentionName(uri))
		out.WriteString("\x00")
		body := after[len(q)+1:]
		rest = strings.TrimPrefix(afterClose(body), "\n")
	}
	// The placeholders become @name unless the words already name the
	// file (an editor that puts @path in the text and sends the file too).
	parts := strings.Split(out.String(), "\x00")
	typed := strings.Join(parts, " ")
	var b strings.Builder
	for k, p := range parts {
		if k > 0 {
			if n := names[k-1]; n != "" && !mentioned(typed, n) {
				if b.Len() > 0 && !strings.HasSuffix(b.String(), " ") && !strings.HasSuffix(b.String(), "\n") {
					b.WriteString(" ")
				}
				b.WriteString("@" + n)
				if p != "" && !strings.HasPrefix(p, " ") && !strings.HasPrefix(p, "\n") {
					b.WriteString(" ")
				}
			}
		}
		b.WriteString(p)
	}
	return strings.TrimSpace(b.String())
}

// mentionName is the name a mention of uri is shown by: the file's base
// name, with the fragment of a selection ("notes.txt#L3-5").
func mentionName(uri string) string {
	u, err := url.Parse(uri)
	if err != nil {
		return path.Base(uri)
	}
	p := u.Path
	if p == "" {
		p = u.Opaque
	}
	name := path.Base(p)
	if name == "." || name == "/" {
		name = uri
	}
	if u.Fragment != "" {
		name += "#" + u.Fragment
	}
	return name
}

// mentioned reports whether text has an @mention of the file name: @name
// or @some/dir/name.
func mentioned(text, name string) bool {
	for _, f := range strings.Fields(text) {
		tok, ok := strings.CutPrefix(f, "@")
		if !ok {
			continue
		}
		tok = strings.TrimRight(tok, ".,;:!?)")
		if tok == name || strings.HasSuffix(tok, "/"+name) {
			return true
		}
	}
	return false
}

// afterClose is what follows the end of a <file> element whose content
// starts body. The element ends at a line of its own: the first
// "</file>" line, or, in a text whose lines were folded (a stored title),
// the first "</file>"; one cut before its end runs to the end.
func afterClose(body string) string {
	if !strings.Contains(body, "\n") {
		if _, after, ok := strings.Cut(body, fileClose); ok {
			return after
		}
		return ""
	}
	for off := 0; ; {
		k := strings.Index(body[off:], "\n"+fileClose)
		if k < 0 {
			return ""
		}
		end := off + k + 1 + len(fileClose)
		if end == len(body) || body[end] == '\n' {
			return body[end:]
		}
		off = end
	}
}
