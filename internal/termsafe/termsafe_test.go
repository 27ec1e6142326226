package termsafe

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// hostile are the strings the escaping is for, each with what Line shows.
var hostile = []struct{ in, line string }{
	{"touch pwned-spoof\r\x1b[2K\x1b[1Als", `touch pwned-spoof\r\x1b[2K\x1b[1Als`},
	{"\x1b]52;c;cm0gLXJmIH4=\x07", `\x1b]52;c;cm0gLXJmIH4=\x07`},                               // OSC 52: the clipboard
	{"\x1b]0;title\x1b\\", `\x1b]0;title\x1b\`},                                                // OSC 0: the window title
	{"a\u009b2Jb", `a\u009b2Jb`},                                                               // the 8-bit CSI
	{"\u009d0;t\u009c", `\u009d0;t\u009c`},                                                     // 8-bit OSC and ST
	{"x\x7fy\x08z\x00", `x\x7fy\x08z\x00`},                                                     // DEL, backspace, NUL
	{"access = \u202e\u2066// admin\u2069\u2066", `access = \u202e\u2066// admin\u2069\u2066`}, // Trojan Source
	{"rm\u200b -rf", `rm\u200b -rf`},
	{"file\u2060name\ufeff", `file\u2060name\ufeff`},
	{"a\u200db\u200c", `a\u200db\u200c`},
	{"tag\U000E0041\U000E0042", `tag\U000e0041\U000e0042`}, // invisible ASCII
	{"soft\u00adhyphen", `soft\u00adhyphen`},
	{"\u3164\u3164", `\u3164\u3164`}, // Hangul fillers: blank names
	{"a\ufe0f\U000E0100", `a\ufe0f\U000e0100`},
	{"two\nlines\tand a tab", `two\nlines\tand a tab`},
	{"line\u2028sep", `line\u2028sep`},
	{"bad \xff\xfe utf8 \xc3", `bad \xff\xfe utf8 \xc3`},
}

func TestLineEscapesEveryHostileString(t *testing.T) {
	for _, tc := range hostile {
		if got := Line(tc.in); got != tc.line {
			t.Errorf("Line(%q) = %s, want %s", tc.in, got, tc.line)
		}
		if Safe(tc.in) && !strings.ContainsAny(tc.in, "\n") {
			t.Errorf("Safe(%q) = true", tc.in)
		}
	}
}

// TestModes: Text keeps lines, tabs and joiners; Exact only lines.
func TestModes(t *testing.T) {
	for _, tc := range []struct{ in, text, exact string }{
		{"a\nb\tc", "a\nb\tc", "a\nb\\tc"},
		{"👨\u200d👩\u200d👧", "👨\u200d👩\u200d👧", `👨\u200d👩\u200d👧`},
		{"ok\r\n", `ok\r` + "\n", `ok\r` + "\n"},
		{"soft\u00ad", "soft\u00ad", `soft\u00ad`},
		{"\x1b[31mred", `\x1b[31mred`, `\x1b[31mred`},
		{"\u202eevil", `\u202eevil`, `\u202eevil`},
	} {
		if got := Text(tc.in); got != tc.text {
			t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.text)
		}
		if got := Exact(tc.in); got != tc.exact {
			t.Errorf("Exact(%q) = %q, want %q", tc.in, got, tc.exact)
		}
		if got := Safe(tc.in); got != (Exact(tc.in) == tc.in) {
			t.Errorf("Safe(%q) = %v, Exact gives %q", tc.in, got, Exact(tc.in))
		}
	}
}

// TestPlainTextUnchanged: ordinary text of any script is left alone.
func TestPlainTextUnchanged(t *testing.T) {
	for _, s := range []string{"", "go test ./...", "naïve café 文件 ünïcödé", "שלום עולם", "مرحبا", "e\u0301", "\ufffd", "क्षि", "path/with spaces/$x~"} {
		for name, f := range map[string]func(string) string{"Text": Text, "Exact": Exact, "Line": Line} {
			if got := f(s); got != s {
				t.Errorf("%s(%q) = %q, want it unchanged", name, s, got)
			}
		}
	}
}

// TestEveryRune: whatever the input, Line's output is valid UTF-8 with
// no control, format, separator or private character left in it, and
// Text's has none but '\n', '\t' and the joiners.
func TestEveryRune(t *testing.T) {
	var b strings.Builder
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		b.WriteRune(r)
		if r%7 == 0 {
			b.WriteByte(0x80 | byte(r)&0x3F) // a stray continuation byte
		}
	}
	all := b.String()
	check := func(name, out string, allowed func(rune) bool) {
		if !utf8.ValidString(out) {
			t.Fatalf("%s's output is not UTF-8", name)
		}
		for _, r := range out {
			if allowed(r) {
				continue
			}
			if unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector) {
				t.Fatalf("%s left %U", name, r)
			}
		}
	}
	check("Line", Line(all), func(rune) bool { return false })
	check("Exact", Exact(all), func(r rune) bool { return r == '\n' })
	// Text may keep the format characters that show or join (soft
	// hyphen, Arabic number signs), not those that reorder or hide.
	dangerous := []*unicode.RangeTable{unicode.Bidi_Control, unicode.Other_Default_Ignorable_Code_Point, unicode.Zl, unicode.Zp, unicode.Cc}
	for _, r := range Text(all) {
		if r != '\n' && r != '\t' && r != 0x200C && r != 0x200D && r != 0x00AD && r != 0x034F && (unicode.In(r, dangerous...) || r == 0x200B || r == 0xFEFF || r >= 0x2060 && r <= 0x2064 || r >= 0xE0000 && r <= 0xE007F) {
			t.Fatalf("Text left %U", r)
		}
	}
}

// TestJSON: the escaped JSON decodes to the same value and holds no
// character a terminal would act on.
func TestJSON(t *testing.T) {
	var v = map[string]any{"sessionUpdate": "agent_message_chunk"}
	for _, tc := range hostile {
		v["text"] = tc.in
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		out := JSON(raw)
		var back map[string]any
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("JSON(%s) = %s: %v", raw, out, err)
		}
		if want := strings.ToValidUTF8(tc.in, "\ufffd"); back["text"] != want && !strings.Contains(tc.in, "\xc3") {
			t.Errorf("JSON(%q) decodes to %q", tc.in, back["text"])
		}
		for _, r := range string(out) {
			if r >= 0x7f && hidden(r, exact) {
				t.Errorf("JSON(%q) = %s left %U", tc.in, out, r)
			}
		}
	}
	if plain := []byte(`{"a":"b"}`); &JSON(plain)[0] != &plain[0] {
		t.Error("JSON copied a text that needed nothing")
	}
}
