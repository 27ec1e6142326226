package tools

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestCommandParts: a command line is split into every command it runs,
// and only a plain program with literal words is Simple.
func TestCommandParts(t *testing.T) {
	type want struct {
		text   string
		simple bool
	}
	for line, parts := range map[string][]want{
		"go test ./...":                 {{"go test ./...", true}},
		"go test -run 'A|B' ./x":        {{"go test -run 'A|B' ./x", true}},
		`go test -run "A.*"`:            {{`go test -run "A.*"`, true}},
		"go test ./...; touch x":        {{"go test ./...", true}, {"touch x", true}},
		"go test && touch x":            {{"go test", true}, {"touch x", true}},
		"go test\ntouch x":              {{"go test", true}, {"touch x", true}},
		"go test | tee x":               {{"go test", true}, {"tee x", true}},
		"go test $(touch x)":            {{"go test $(touch x)", false}, {"touch x", true}},
		"go test `touch x`":             {{"go test `touch x`", false}, {"touch x", true}},
		`go test "$(touch x)"`:          {{`go test "$(touch x)"`, false}, {"touch x", true}},
		"go test > out":                 {{"go test > out", false}},
		"go test ./... 2>&1":            {{"go test ./... 2>&1", true}},
		"go test >/dev/null 2>&1":       {{"go test >/dev/null 2>&1", true}},
		"go test 2>&$fd":                {{"go test 2>&$fd", false}},
		"go test >&out":                 {{"go test >&out", false}},
		"go test >>out 2>&1":            {{"go test >>out 2>&1", false}},
		"go test < in":                  {{"go test < in", false}},
		"go test {fd}>out":              {{"go test {fd}>out", false}},
		"go test <<<x":                  {{"go test <<<x", false}},
		"go test &":                     {{"go test &", false}},
		"go test & touch x":             {{"go test &", false}, {"touch x", true}},
		"(go test; touch x)":            {{"(go test; touch x)", false}, {"go test", true}, {"touch x", true}},
		"go test <(touch x)":            {{"go test <(touch x)", false}, {"touch x", true}},
		"GOFLAGS=-x go test":            {{"GOFLAGS=-x go test", false}},
		"go test $HOME":                 {{"go test $HOME", false}},
		"go test ~/x":                   {{"go test ~/x", false}},
		"go test ./*":                   {{"go test ./*", false}},
		"go test -{run,v}":              {{"go test -{run,v}", false}},
		`go test $'\x2drun'`:            {{`go test $'\x2drun'`, false}},
		`go test a\ b`:                  {{`go test a\ b`, false}},
		"eval 'touch x'":                {{"eval 'touch x'", false}, {"touch x", true}},
		"sh -c 'go test; touch x'":      {{"sh -c 'go test; touch x'", false}, {"go test", true}, {"touch x", true}},
		"bash -lc 'touch x'":            {{"bash -lc 'touch x'", false}, {"touch x", true}},
		"if true; then touch x; fi":     {{"if true; then touch x; fi", false}, {"true", true}, {"touch x", true}},
		"for f in a; do touch $f; done": {{"for f in a; do touch $f; done", false}, {"touch $f", false}},
		"go test 'unclosed":             {{"go test 'unclosed", false}},
		"# nothing":                     nil,
	} {
		got := CommandParts(line)
		var gw []want
		for _, p := range got {
			gw = append(gw, want{p.Text, p.Simple})
		}
		if !slices.Equal(gw, parts) {
			t.Errorf("CommandParts(%q) = %v, want %v", line, gw, parts)
		}
	}
}

// TestCommandPartSubjects: ask and deny rules see a command behind what
// precedes it and behind a wrapper.
func TestCommandPartSubjects(t *testing.T) {
	for line, want := range map[string]string{
		"FORCE=1 rm -r dir":        "rm -r dir",
		">log rm -r dir":           "rm -r dir",
		"env A=1 rm -r dir":        "rm -r dir",
		"nice -n 5 rm -r x":        "rm -r x",
		"timeout 5 rm -r x":        "rm -r x",
		"rm -r $(echo dir)":        "rm -r",
		"sudo -u me rm -r x":       "rm -r x",
		`find . -exec rm -r {} \;`: "rm -r",
	} {
		parts := CommandParts(line)
		if len(parts) == 0 || !slices.Contains(parts[0].Subjects(), want) {
			t.Errorf("subjects of %q: %q, want %q among them", line, parts[0].Subjects(), want)
		}
	}
}

// TestValidationRefusesCaseVariants: Go's decoder gives a key that
// differs from a parameter only in case to that parameter, past the
// checks made on the parameter's own key, so such a key is refused.
func TestValidationRefusesCaseVariants(t *testing.T) {
	v, err := newValidator("run_commands", specFile("run_commands.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range []string{
		`{"commands":["ls"],"Commands":["touch x"]}`,
		`{"commands":["ls"],"COMMANDS":"touch x"}`,
		`{"commands":["ls"],"commandſ":["touch x"]}`,
		`{"commands":["ls"],"Background":true}`,
	} {
		_, err := v.check(json.RawMessage(args))
		var ve *ValidationError
		if !errors.As(err, &ve) || !strings.Contains(err.Error(), "case-sensitive") {
			t.Errorf("%s: %v, want a problem naming the case", args, err)
		}
	}
	if _, err := v.check(json.RawMessage(`{"commands":["ls"],"other":1}`)); err != nil {
		t.Errorf("an unrelated extra key: %v", err)
	}
}

// TestCommandPartsBounded: a wrapper with many words costs no more than
// a bounded number of copies of them.
func TestCommandPartsBounded(t *testing.T) {
	line := "env " + strings.Repeat("word ", 50_000)
	parts := CommandParts(line)
	if len(parts) != 1 || len(parts[0].Inner) > maxWrapped {
		t.Fatalf("%d parts, %d inner commands", len(parts), len(parts[0].Inner))
	}
}

// TestCommandPartsWithoutAProgram: a part with no literal program word (an
// assignment alone, an expansion in first place) is split and judged
// without a panic; it is never simple. The scheduler's policy splits every
// command line of a call, so a panic here failed the whole prompt.
func TestCommandPartsWithoutAProgram(t *testing.T) {
	for _, line := range []string{
		"i=0",
		"a=1 b=2",
		"$cmd x",
		"${x} y",
		"$(echo ls) -la",
		`sh probe.sh cmd; i=0; while [ ! -e f ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done`,
	} {
		parts := CommandParts(line)
		if len(parts) == 0 {
			t.Errorf("%q: no parts", line)
		}
		for _, p := range parts {
			if len(p.Words) == 0 && p.Simple {
				t.Errorf("%q: part %q with no words is simple", line, p.Text)
			}
			_ = p.Subjects()
		}
	}
}

// FuzzCommandParts: no command line makes the split panic, and a part it
// calls simple has a program word.
func FuzzCommandParts(f *testing.F) {
	for _, s := range []string{"go test ./...", "i=0", "a && b; c | d", "$x y", "find . -exec rm {} +", "sh -c 'ls'", "env -S 'a b'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		for _, p := range CommandParts(line) {
			if p.Simple && len(p.Words) == 0 {
				t.Fatalf("%q: simple part %q has no words", line, p.Text)
			}
			_ = p.Subjects()
		}
	})
}
