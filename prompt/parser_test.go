package prompt

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// testTools has names and parameters chosen to overlap: "write" is a
// prefix of "write_to_file", "path" of "paths", so the prefix hold-back is
// exercised.
var testTools = map[string][]string{
	"read_file":     {"path"},
	"write":         {"path"},
	"write_to_file": {"path", "content"},
	"search":        {"path", "paths", "regex"},
	"noop":          nil,
}

// parseAll feeds the chunks and returns the events with adjacent text
// merged, which is the chunking-independent view of a parse.
func parseAll(known map[string][]string, chunks []string) []Event {
	p := NewParser(known)
	var evs []Event
	for _, c := range chunks {
		evs = append(evs, p.Feed(c)...)
	}
	evs = append(evs, p.Close()...)
	return mergeText(evs)
}

func mergeText(evs []Event) []Event {
	var out []Event
	for _, e := range evs {
		if e.Call == nil && len(out) > 0 && out[len(out)-1].Call == nil {
			out[len(out)-1].Text += e.Text
			continue
		}
		out = append(out, e)
	}
	return out
}

func bytewise(s string) []string {
	out := make([]string, len(s))
	for i := 0; i < len(s); i++ {
		out[i] = s[i : i+1]
	}
	return out
}

func text(s string) Event { return Event{Text: s} }

func call(name string, partial bool, kv ...string) Event {
	c := &ToolCall{Name: name, Params: map[string]string{}, Partial: partial}
	for i := 0; i+1 < len(kv); i += 2 {
		c.Params[kv[i]] = kv[i+1]
	}
	return Event{Call: c}
}

func TestParser(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Event
	}{
		{"prose only", "Just an answer.\n", []Event{text("Just an answer.\n")}},
		{"lone angle brackets", "if a < b && c > d {}", []Event{text("if a < b && c > d {}")}},
		{
			"call between prose",
			"I'll read it.\n<read_file>\n<path>main.go</path>\n</read_file>\nDone.",
			[]Event{text("I'll read it.\n"), call("read_file", false, "path", "main.go"), text("\nDone.")},
		},
		{
			"one leading and trailing newline trimmed",
			"<write_to_file><path>a.txt</path><content>\n\n  x\n\n</content></write_to_file>",
			[]Event{call("write_to_file", false, "path", "a.txt", "content", "\n  x\n")},
		},
		{
			"crlf newlines trimmed",
			"<write_to_file><path>a</path><content>\r\nx\r\n</content></write_to_file>",
			[]Event{call("write_to_file", false, "path", "a", "content", "x")},
		},
		{
			"unknown tool is prose",
			"<div><path>x</path></div>",
			[]Event{text("<div><path>x</path></div>")},
		},
		{
			"tags with attributes or spaces are prose",
			"<read_file path=\"x\"> <read_file >",
			[]Event{text("<read_file path=\"x\"> <read_file >")},
		},
		{
			"prefix of a tool name is prose",
			"<writ> and <write_to> end",
			[]Event{text("<writ> and <write_to> end")},
		},
		{
			"shorter tool name sharing a prefix",
			"<write><path>p</path></write>",
			[]Event{call("write", false, "path", "p")},
		},
		{
			"parameter names sharing a prefix",
			"<search><paths>[\"a\"]</paths><path>b</path></search>",
			[]Event{call("search", false, "paths", "[\"a\"]", "path", "b")},
		},
		{
			"markup inside content kept whole",
			"<write_to_file><path>i.html</path><content>\n<div><path>not a param</path><read_file>x</read_file></div>\n</content></write_to_file>",
			[]Event{call("write_to_file", false, "path", "i.html", "content", "<div><path>not a param</path><read_file>x</read_file></div>")},
		},
		{
			"closing tag of the value inside code",
			"<write_to_file>\n<path>gen.go</path>\n<content>\nconst end = \"</content>\"\nx := 1 </content> y\n</content>\n</write_to_file>",
			[]Event{call("write_to_file", false, "path", "gen.go", "content", "const end = \"</content>\"\nx := 1 </content> y")},
		},
		{
			"closing tag of the call inside content",
			"<write_to_file><path>t.xml</path><content>a</write_to_file>b</content></write_to_file>",
			[]Event{call("write_to_file", false, "path", "t.xml", "content", "a</write_to_file>b")},
		},
		{
			"value closing tag followed by another parameter",
			"<write_to_file><content>x</content>\n  <path>p</path></write_to_file>",
			[]Event{call("write_to_file", false, "content", "x", "path", "p")},
		},
		{
			"other tools' parameters are not recognised",
			"<read_file><content>c</content><path>p</path></read_file>",
			[]Event{call("read_file", false, "path", "p")},
		},
		{
			"text between parameters dropped",
			"<read_file>\nok then\n<path>p</path>\n</read_file>",
			[]Event{call("read_file", false, "path", "p")},
		},
		{
			"prose right after a value's closing tag keeps the value open",
			"<read_file><path>p</path> trailing </read_file>",
			[]Event{call("read_file", true, "path", "p</path> trailing </read_file>")},
		},
		{"tool without parameters", "<noop></noop>", []Event{call("noop", false)}},
		{
			"repeated parameter keeps the last",
			"<read_file><path>a</path><path>b</path></read_file>",
			[]Event{call("read_file", false, "path", "b")},
		},
		{
			"two calls",
			"<read_file><path>a</path></read_file>\n<read_file><path>b</path></read_file>",
			[]Event{call("read_file", false, "path", "a"), text("\n"), call("read_file", false, "path", "b")},
		},
		{
			"tool tags inside a value do not nest",
			"<read_file><path><read_file><path>x</path></read_file></path></read_file>",
			[]Event{call("read_file", false, "path", "<read_file><path>x"), text("</path></read_file>")},
		},
		{"held-back tag start becomes prose at the end", "see <read_fi", []Event{text("see <read_fi")}},
		{"lone < at the end", "a <", []Event{text("a <")}},
		{"multi-byte prose", "héllo → <wörld> ✓", []Event{text("héllo → <wörld> ✓")}},
		{
			"partial call inside a value",
			"Writing:\n<write_to_file>\n<path>a.go</path>\n<content>\npackage a\n",
			[]Event{text("Writing:\n"), call("write_to_file", true, "path", "a.go", "content", "package a")},
		},
		{
			"partial call after a value",
			"<write_to_file><path>a.go</path>\n",
			[]Event{call("write_to_file", true, "path", "a.go")},
		},
		{
			"partial call with value closed at the end",
			"<write_to_file><path>a.go</path><content>x</content>\n</write_to",
			[]Event{call("write_to_file", true, "path", "a.go", "content", "x")},
		},
		{
			"partial call with a missing value closing tag",
			"<read_file><path>a.go</read_file>",
			[]Event{call("read_file", true, "path", "a.go</read_file>")},
		},
		{"partial call just opened", "<noop>", []Event{call("noop", true)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			whole := parseAll(testTools, []string{tt.in})
			if !reflect.DeepEqual(whole, tt.want) {
				t.Errorf("whole:\n got %s\nwant %s", dump(whole), dump(tt.want))
			}
			if bytes := parseAll(testTools, bytewise(tt.in)); !reflect.DeepEqual(bytes, whole) {
				t.Errorf("byte at a time:\n got %s\nwant %s", dump(bytes), dump(whole))
			}
		})
	}
}

func dump(evs []Event) string {
	b, _ := json.Marshal(evs)
	return string(b)
}

// TestParserStreamsProse checks that prose is passed on as soon as it
// cannot be the start of a tag, rather than at the end of the stream.
func TestParserStreamsProse(t *testing.T) {
	p := NewParser(testTools)
	steps := []struct {
		chunk string
		want  []Event
	}{
		{"Hello wor", []Event{text("Hello wor")}},
		{"ld <rea", []Event{text("ld ")}},
		{"d", nil},
		{"y> x <", []Event{text("<ready> x ")}},
		{"read_file><path>a", nil},
		{"</path></read_file> after", []Event{call("read_file", false, "path", "a"), text(" after")}},
	}
	for i, s := range steps {
		if got := p.Feed(s.chunk); !reflect.DeepEqual(got, s.want) {
			t.Fatalf("step %d Feed(%q) = %s, want %s", i, s.chunk, dump(got), dump(s.want))
		}
	}
	if got := p.Close(); got != nil {
		t.Errorf("Close() = %s, want nothing", dump(got))
	}
	if got := p.Feed("more"); got != nil {
		t.Errorf("Feed after Close = %s, want nothing", dump(got))
	}
}

func TestParserPending(t *testing.T) {
	p := NewParser(testTools)
	if _, ok := p.Pending(); ok {
		t.Fatal("Pending before any call reported a call")
	}
	p.Feed("<write_to_file><path>a.go</path><content>\npackage a\n\nfunc")
	got, ok := p.Pending()
	want := ToolCall{Name: "write_to_file", Params: map[string]string{"path": "a.go", "content": "package a\n\nfunc"}, Partial: true}
	if !ok || !reflect.DeepEqual(got, want) {
		t.Fatalf("Pending() = %+v, %v; want %+v", got, ok, want)
	}
	got.Params["path"] = "changed"
	evs := p.Feed("</content></write_to_file>")
	if len(evs) != 1 || evs[0].Call == nil || evs[0].Call.Params["path"] != "a.go" {
		t.Fatalf("snapshot shares state with the parser: %s", dump(evs))
	}
	if _, ok := p.Pending(); ok {
		t.Error("Pending after the call closed reported a call")
	}
}

func TestParserLongValueByteAtATime(t *testing.T) {
	// A large value fed a byte at a time must still parse (and quickly:
	// the search for the closing tag resumes where it stopped).
	body := strings.Repeat("line </content> of <b>code</b>\n", 2000)
	in := "<write_to_file><path>big</path><content>\n" + body + "</content></write_to_file>"
	got := parseAll(testTools, bytewise(in))
	want := []Event{call("write_to_file", false, "path", "big", "content", strings.TrimSuffix(body, "\n"))}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %d events, first %.200s", len(got), dump(got))
	}
}

func TestToolCallArgs(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"path":{"type":"string"},
		"count":{"type":"integer"},
		"ratio":{"type":["number","null"]},
		"recursive":{"type":"boolean"},
		"files":{"type":"array","items":{"type":"object"}},
		"opts":{"type":"object"}}}`)
	tests := []struct {
		params map[string]string
		want   string
	}{
		{map[string]string{"path": "a.go"}, `{"path":"a.go"}`},
		{map[string]string{"path": "42"}, `{"path":"42"}`},
		{map[string]string{"count": " 3\n", "recursive": "true", "ratio": "null"}, `{"count":3,"ratio":null,"recursive":true}`},
		{map[string]string{"count": "three", "recursive": "yes"}, `{"count":"three","recursive":"yes"}`},
		{map[string]string{"count": `"3"`}, `{"count":"\"3\""}`},
		{map[string]string{"files": "[{\"path\":\"a\"}]", "opts": "{}"}, `{"files":[{"path":"a"}],"opts":{}}`},
		{map[string]string{"files": "a.go", "opts": "[1]"}, `{"files":"a.go","opts":"[1]"}`},
		{map[string]string{"unknown": "1"}, `{"unknown":"1"}`},
	}
	for _, tt := range tests {
		got := ToolCall{Name: "t", Params: tt.params}.Args(schema)
		if string(got) != tt.want {
			t.Errorf("Args(%v) = %s, want %s", tt.params, got, tt.want)
		}
	}
}

func ExampleParser() {
	p := NewParser(map[string][]string{"read_files": {"files"}})
	for _, chunk := range []string{"Let me look.\n<read_", "files>\n<files>[{\"path\":\"go.mod\"}]</files>\n</read_files>"} {
		for _, ev := range p.Feed(chunk) {
			if ev.Call != nil {
				fmt.Printf("call %s %s\n", ev.Call.Name, ev.Call.Params["files"])
			} else {
				fmt.Printf("text %q\n", ev.Text)
			}
		}
	}
	p.Close()
	// Output:
	// text "Let me look.\n"
	// call read_files [{"path":"go.mod"}]
}

func TestParserKeepsRunesWhole(t *testing.T) {
	p := NewParser(testTools)
	var evs []Event
	for _, c := range bytewise("añ→✓") {
		evs = append(evs, p.Feed(c)...)
	}
	evs = append(evs, p.Close()...)
	for _, e := range evs {
		if !utf8.ValidString(e.Text) {
			t.Errorf("text event %q is not valid UTF-8", e.Text)
		}
	}
	// A stream that really ends inside a rune still hands its bytes on.
	p = NewParser(testTools)
	got := mergeText(append(p.Feed("a\xe2\x86"), p.Close()...))
	if want := []Event{text("a\xe2\x86")}; !reflect.DeepEqual(got, want) {
		t.Errorf("cut rune at the end: got %q, want %q", dump(got), dump(want))
	}
}
