// Package hookstest is the one scenario the end-to-end hook tests play in
// every client (Neovim, Emacs, VS Code, the ACP clients): two Claude Code
// hook scripts as their users write them, kept in testdata/hooks at the
// module's root, configured as the README says, on a small Go module, with
// the replay transcript of a model that tries `rm -rf build` and then makes
// an edit `go vet` complains about.
package hookstest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/internal/testenv"
)

// What the scenario's clients look for.
const (
	// Prompt is the user's task; the transcript's first reply expects it.
	Prompt = "tidy the build folder and spell out the count"
	// Blocked is the start of no-rm-rf.sh's reason, which the model gets
	// as the refused call's result and the card shows.
	Blocked = "Blocked by no-rm-rf.sh: `rm -rf build`"
	// BlockedNote is how the card names the PreToolUse outcome.
	BlockedNote = "): blocked: " + Blocked
	// VetReport is what go vet says of the edit, which the model's next
	// request carries.
	VetReport = `fmt.Printf format %d has arg "seven" of wrong type string`
	// ContextNote ends the card's line for the PostToolUse outcome.
	ContextNote = "): added context"
	// LastWords is the model's answer once it has seen the vet report.
	LastWords = "go vet says the verb is wrong; stopping here."
	// Artifact is the file under build/ that must survive the rm -rf.
	Artifact = "build/app.bin"
)

// Scripts are the paths of the hook scripts and the transcripts:
// Transcript the scenario's, Distrusted the same task's when the hooks do
// not run and the user rejects the rm -rf when asked.
type Scripts struct {
	NoRmRf, GoVet, Transcript, Distrusted string
}

// dir is testdata/hooks at the module's root.
func dir(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("hookstest: no source path")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "hooks")
}

// Find returns the scripts, ending the test through testenv.Missing when
// what they run (bash, python3, go) is not installed.
func Find(t testing.TB) Scripts {
	t.Helper()
	for _, p := range []string{"bash", "python3", "go"} {
		testenv.LookPath(t, p, "the Claude Code hook scripts of testdata/hooks run it")
	}
	d, err := filepath.Abs(dir(t))
	if err != nil {
		t.Fatal(err)
	}
	s := Scripts{NoRmRf: filepath.Join(d, "no-rm-rf.sh"), GoVet: filepath.Join(d, "go-vet.py"), Transcript: filepath.Join(d, "transcript.json"),
		Distrusted: filepath.Join(d, "distrust.json")}
	for _, p := range []string{s.NoRmRf, s.GoVet, s.Transcript, s.Distrusted} {
		if _, err := os.Stat(p); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// Hooks is the hooks setting as a Claude Code user writes it.
func (s Scripts) Hooks() map[string]any {
	entry := func(matcher, command string) []any {
		return []any{map[string]any{"matcher": matcher,
			"hooks": []any{map[string]any{"type": "command", "command": command, "timeout": 120}}}}
	}
	return map[string]any{
		"PreToolUse":  entry("Bash", s.NoRmRf),
		"PostToolUse": entry("Edit|Write|MultiEdit", s.GoVet),
	}
}

// WriteConfig writes the user's config file, $XDG_CONFIG_HOME/cline-ls/config.json
// under configHome, holding the hooks and extra settings.
func (s Scripts) WriteConfig(t testing.TB, configHome string, extra map[string]any) {
	t.Helper()
	cfg := map[string]any{"hooks": s.Hooks()}
	for k, v := range extra {
		cfg[k] = v
	}
	writeJSON(t, filepath.Join(configHome, "cline-ls", "config.json"), cfg)
}

// WriteProject writes the hooks into the folder's own .cline/settings.json,
// whose hooks run only once the user trusts the folder.
func (s Scripts) WriteProject(t testing.TB, ws string) {
	t.Helper()
	writeJSON(t, filepath.Join(ws, ".cline", "settings.json"), map[string]any{"hooks": s.Hooks()})
}

func writeJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// WriteModule writes the Go module the model works on into ws: vet-clean
// main.go and a build folder holding Artifact.
func WriteModule(t testing.TB, ws string) {
	t.Helper()
	files := map[string]string{
		"go.mod":  "module example.com/greet\n\ngo 1.21\n",
		"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Printf(\"%d\\n\", 7)\n}\n",
		Artifact:  "built\n",
	}
	for name, body := range files {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Env is what go vet needs in a client's environment whose HOME is a
// fresh folder: the developer's build cache (a cold one would rebuild
// the standard library inside the hook's timeout on a loaded machine), and
// no toolchain download or module proxy, which the machine cannot reach.
func Env(t testing.TB) []string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOCACHE: %v", err)
	}
	return []string{"GOCACHE=" + strings.TrimSpace(string(out)), "GOTOOLCHAIN=local", "GOPROXY=off", "GOFLAGS="}
}

// Check fails the test unless the workspace shows the scenario's effects
// on disk: the build folder is still there, and main.go holds the edit
// (when onDisk; an edit of an open buffer stays in the editor).
func Check(t testing.TB, ws string, onDisk bool) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(ws, Artifact)); err != nil {
		t.Errorf("the blocked rm -rf removed the build folder: %v", err)
	}
	if !onDisk {
		return
	}
	b, err := os.ReadFile(filepath.Join(ws, "main.go"))
	if err != nil || !strings.Contains(string(b), `"seven"`) {
		t.Errorf("main.go after the edit: %q %v", b, err)
	}
}

// Expectations are the scenario's words for a client's own script, as
// environment variables: CLINE_HOOK_PROMPT, CLINE_HOOK_BLOCKED (the
// reason the command's card shows), CLINE_HOOK_VET, CLINE_HOOK_CONTEXT
// (the end of the edit card's hook line) and CLINE_HOOK_LAST (the model's
// last words).
func Expectations() []string {
	return []string{"CLINE_HOOK_PROMPT=" + Prompt, "CLINE_HOOK_BLOCKED=" + Blocked, "CLINE_HOOK_VET=" + VetReport,
		"CLINE_HOOK_CONTEXT=" + ContextNote, "CLINE_HOOK_LAST=" + LastWords}
}
