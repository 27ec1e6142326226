package tools

import (
	"context"
	"strings"
	"testing"
)

const cutKey = "sk-ant-planted-cut-0123456789abcdefghij"

// keyPieces reports the pieces of cutKey (10 bytes or more) that text
// holds outside a whole cutKey: what a cut left of a key, which redaction
// of whole values no longer finds.
func keyPieces(text string) []string {
	rest := strings.ReplaceAll(text, cutKey, "[redacted]")
	var out []string
	for i := 0; i+10 <= len(cutKey); i++ {
		if p := cutKey[i : i+10]; strings.Contains(rest, p) {
			out = append(out, p)
		}
	}
	return out
}

// TestCommandOutputCutKeepsKeysWhole: output over the budget is cut in
// the middle; where the kept head ends or the kept tail starts inside a
// key, the word is left out whole, with the note counting it.
func TestCommandOutputCutKeepsKeysWhole(t *testing.T) {
	o := newCmdOutput(1024, func(string) {})
	// The head keeps 512 bytes: the key starts at 500. The tail keeps the
	// last 512: the second key starts 530 bytes from the end.
	o.write([]byte(strings.Repeat("x ", 250) + cutKey + " " + strings.Repeat("y", 3000) + " "))
	o.write([]byte(cutKey + strings.Repeat(" z", 245)))
	text := o.text()
	if !strings.Contains(text, "characters cut from the middle") {
		t.Fatalf("the output was not cut:\n%s", text)
	}
	if p := keyPieces(text); len(p) > 0 {
		t.Errorf("the cut output holds pieces of the key %q:\n%s", p, text)
	}
}

// TestBackgroundRingKeepsKeysWhole: a read of a running command's output
// leaves for the next one an end that could start a key (keyStart), and
// output that fell out of the ring does not leave the end of a key at
// the start of what is read.
func TestBackgroundRingKeepsKeysWhole(t *testing.T) {
	keyStart := func(text string) int {
		for l := min(len(cutKey)-1, len(text)); l > 0; l-- {
			if strings.HasSuffix(text, cutKey[:l]) {
				return l
			}
		}
		return 0
	}
	r := bgRing{keyStart: keyStart}
	r.write([]byte("token: " + cutKey[:20]))
	first, _ := r.next(false)
	r.write([]byte(cutKey[20:] + "\nready"))
	second, _ := r.next(false)
	if first != "token: " || !strings.Contains(second, cutKey) || !strings.HasSuffix(second, "ready") {
		t.Errorf("reads %q then %q, want the key whole in the second and the rest shown", first, second)
	}
	r.write([]byte(cutKey[:20]))
	if text, _ := r.next(true); text != cutKey[:20] {
		t.Errorf("the read after the command ended = %q, want all that is left", text)
	}

	var over bgRing
	over.write([]byte(cutKey + " " + strings.Repeat("w", bgKeep-len(cutKey)+10)))
	over.write([]byte(" end\n"))
	text, dropped := over.next(false)
	if dropped == 0 {
		t.Fatal("nothing fell out of the ring")
	}
	if p := keyPieces(text); len(p) > 0 {
		t.Errorf("the read after a drop starts with pieces of the key %q: %q…", p, text[:min(len(text), 60)])
	}
}

// TestShortenedTextKeepsKeysWhole: every place that shortens text the
// model or the user sent (a command's title, a tool's output cut in the
// middle) cuts between words, so that what it keeps of a key is the whole
// key or nothing.
func TestShortenedTextKeepsKeysWhole(t *testing.T) {
	command := `curl -sS --retry 3 -H "Authorization: Bearer ` + cutKey + `" https://example.com/`
	title := (&runCommandsCall{commands: []string{command}}).Describe(context.Background()).Title
	middle := wsCutMiddle(strings.Repeat("x ", 250)+cutKey+" "+strings.Repeat("y", 3000)+" "+cutKey+strings.Repeat(" z", 245), 1024)
	for what, text := range map[string]string{"the title": title, "the cut output": middle} {
		if p := keyPieces(text); len(p) > 0 {
			t.Errorf("%s holds pieces of the key %q: %q", what, p, text)
		}
	}
	if !strings.HasPrefix(title, `Run curl -sS --retry 3 -H "Authorization:`) || !strings.HasSuffix(title, "…") {
		t.Errorf("title = %q", title)
	}
}
