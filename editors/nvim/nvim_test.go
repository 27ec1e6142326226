// Package nvim_test runs the Neovim client against the real daemon: each
// test starts a headless Neovim on a fresh workspace with a replay
// transcript from testdata/, and the Lua script in tests/ drives the flow
// and writes one line per check to a result file. The tests skip when nvim
// is not installed.
package nvim_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/internal/testbin"
	"github.com/cline-ls/cline-ls/internal/testenv"
)

// daemon returns the cline-ls binary the tests run: the one
// CLINE_NVIM_TEST_DAEMON names, or one built from this tree.
func daemon(t *testing.T) string {
	if bin := os.Getenv("CLINE_NVIM_TEST_DAEMON"); bin != "" {
		return bin
	}
	return testbin.CLI(t)
}

// readInputs reads, once, every file the results depend on that this
// process does not open itself: the plugin and its tests, which Neovim
// reads. Without it go test's cache would not know of them and would
// replay a stale PASS after a change to one. (The daemon's sources are
// read by testbin when it builds the daemon. Files opened before m.Run
// are not recorded, hence a test calls it.)
var readInputs = sync.OnceFunc(func() {
	for _, dir := range []string{"lua", "plugin", "syntax", "tests", "testdata", "doc"} {
		filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				os.ReadFile(path)
			}
			return nil
		})
	}
	os.ReadFile(filepath.Join("..", "..", "README.md")) // TestReadmeSnippet runs its snippet
})

// result is what one headless run left behind.
type result struct {
	ws     string // the workspace folder
	code   int    // nvim's exit code
	lines  []string
	output string // nvim's stdout and stderr
	log    string // the daemon's log
	lspLog string // Neovim's LSP log, which holds the daemon's stderr
}

// runNvim runs script (tests/<script>.lua) for scenario on a workspace
// holding hello.txt ("hello\n"), with testdata/<transcript>.json (or the
// transcript at that absolute path) as the model. The plugin is on the
// runtimepath unless plugin is false. Each setup, given the run's home and
// workspace, adds to them and returns more of Neovim's environment.
func runNvim(t *testing.T, script, scenario, transcript string, plugin bool, setup ...func(home, ws string) []string) result {
	t.Helper()
	if _, err := exec.LookPath("nvim"); err != nil {
		testenv.Missing(t, "nvim is not installed (Debian: apt-get install neovim); skipping the Neovim client tests")
	}
	readInputs()
	bin := daemon(t)
	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	ws := filepath.Join(tmp, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "hello.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(transcript) {
		transcript = filepath.Join("testdata", transcript+".json")
	}
	tr, err := os.ReadFile(transcript)
	if err != nil {
		t.Fatal(err)
	}
	trPath := filepath.Join(tmp, "transcript.json")
	if err := os.WriteFile(trPath, tr, 0o644); err != nil {
		t.Fatal(err)
	}
	resultPath := filepath.Join(tmp, "result.txt")
	logPath := filepath.Join(tmp, "daemon.log")

	args := []string{"--headless", "-u", "NONE", "-i", "NONE", "-n"}
	if plugin {
		args = append(args, "--cmd", "set rtp^="+here, "--cmd", "runtime plugin/cline.lua")
	}
	args = append(args, "-c", "luafile "+filepath.Join(here, "tests", script+".lua"))

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "nvim", args...)
	cmd.Dir = ws
	cmd.WaitDelay = 5 * time.Second
	cmd.Env = append(cleanEnv(),
		"HOME="+tmp,
		"XDG_CONFIG_HOME="+filepath.Join(tmp, "config"),
		"XDG_DATA_HOME="+filepath.Join(tmp, "data"),
		"XDG_STATE_HOME="+filepath.Join(tmp, "state"),
		"XDG_CACHE_HOME="+filepath.Join(tmp, "cache"),
		"CLINE_TEST_BIN="+bin,
		"CLINE_TEST_WS="+ws,
		"CLINE_TEST_TRANSCRIPT="+trPath,
		"CLINE_TEST_STATE="+filepath.Join(tmp, "sessions"),
		"CLINE_TEST_LOG="+logPath,
		"CLINE_TEST_RESULT="+resultPath,
		"CLINE_TEST_SCENARIO="+scenario,
	)
	for _, f := range setup {
		cmd.Env = append(cmd.Env, f(tmp, ws)...)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	r := result{ws: ws, output: out.String()}
	if ctx.Err() != nil {
		r.code = -1
	} else if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running nvim: %v", err)
	}
	if b, err := os.ReadFile(resultPath); err == nil {
		r.lines = strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	}
	if b, err := os.ReadFile(logPath); err == nil {
		r.log = string(b)
	}
	// The daemon's stderr (a panic, say) ends up in Neovim's LSP log:
	// stdpath('cache') on 0.7, stdpath('log') on newer versions.
	for _, p := range []string{filepath.Join(tmp, "cache", "nvim", "lsp.log"), filepath.Join(tmp, "state", "nvim", "lsp.log")} {
		if b, err := os.ReadFile(p); err == nil {
			r.lspLog += string(b)
		}
	}
	return r
}

// cleanEnv is the environment without provider keys or cline-ls settings,
// so that nothing but the test's settings picks the model.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "CLINE_"), strings.HasSuffix(k, "_API_KEY"),
			strings.HasPrefix(k, "XDG_"), k == "HOME", k == "VIMINIT", k == "MYVIMRC", k == "NVIM", k == "NVIM_LISTEN_ADDRESS":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// check fails the test with everything needed to see why unless the
// script passed all its checks.
func (r result) check(t *testing.T) {
	t.Helper()
	passed := r.code == 0 && len(r.lines) > 0 && r.lines[len(r.lines)-1] == "PASS"
	if passed {
		for _, l := range r.lines {
			t.Log(l)
		}
		return
	}
	why := fmt.Sprintf("nvim exited with code %d", r.code)
	if r.code == -1 {
		why = "nvim timed out"
	}
	t.Errorf("%s\n--- checks (tests/*.lua)\n%s\n--- nvim output\n%s\n--- daemon log\n%s\n--- nvim LSP log\n%s",
		why, strings.Join(r.lines, "\n"), r.output, tail(r.log, 80), tail(r.lspLog, 60))
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("… %d earlier lines", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}

func (r result) disk(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.ws, "hello.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// An approved edit lands in the open buffer, not on disk, until the user
// saves; the session buffer streams the turn and the diff buffer gets the
// diff.
func TestApprovedEditStaysInBufferUntilSaved(t *testing.T) {
	r := runNvim(t, "plugin", "approve", "approve", true)
	r.check(t)
	if got := r.disk(t); got != "hello, world\n" {
		t.Errorf("after :write, hello.txt = %q, want %q", got, "hello, world\n")
	}
}

// An edit that breaks the file comes back with the new error from the
// editor's diagnostics (vim.diagnostic, from a source of the test's), and
// the edit that fixes it says so: the transcript expects both in the tool
// results.
func TestEditDiagnosticsInToolResult(t *testing.T) {
	r := runNvim(t, "plugin", "diagnostics", "diagnostics", true)
	r.check(t)
}

// A rejected edit leaves buffer and disk unchanged, and the feedback
// typed at the rejection reaches the model.
func TestRejectedEditChangesNothing(t *testing.T) {
	r := runNvim(t, "plugin", "reject", "reject", true)
	r.check(t)
	if got := r.disk(t); got != "hello\n" {
		t.Errorf("hello.txt = %q, want it unchanged", got)
	}
}

// :ClinePlan, plan updates, :ClineAct, then an act turn in which "Always
// allow" spares the second approval.
func TestPlanThenAct(t *testing.T) {
	r := runNvim(t, "plugin", "plan", "plan", true)
	r.check(t)
	if got := r.disk(t); got != "hello\n" {
		t.Errorf("hello.txt = %q, want it unchanged (nothing saved)", got)
	}
}

// Keys typed before and while an approval appears (Enter, digits,
// Escape, the approval view's own keys) go to the file being edited and
// never answer the approval; a key pressed in the approval view does.
func TestTypeaheadNeverAnswersApproval(t *testing.T) {
	runNvim(t, "plugin", "typeahead", "approve", true).check(t)
}

// The same in the session buffer's prompt area: typed keys, <CR> among
// them, stay there and never answer the approval.
func TestTypeaheadInPromptArea(t *testing.T) {
	runNvim(t, "plugin", "typeahead_chat", "approve", true).check(t)
}

// cline/askQuestion is answered through vim.ui.select.
func TestQuestion(t *testing.T) {
	runNvim(t, "plugin", "question", "question", true).check(t)
}

// What the model, commands and files send is shown visibly in the
// session buffer, the approval view, messages and pickers: terminal
// controls, C1, bidi and zero-width characters as escapes.
func TestHostileTextShownVisibly(t *testing.T) {
	runNvim(t, "plugin", "hostile", "hostile", true).check(t)
}

// :ClineCancel during an approval ends the turn as cancelled; the session
// takes the next task.
func TestCancel(t *testing.T) {
	r := runNvim(t, "plugin", "cancel", "cancel", true)
	r.check(t)
	if got := r.disk(t); got != "hello\n" {
		t.Errorf("hello.txt = %q, want it unchanged (nothing saved)", got)
	}
}

// A follow-up typed in the chat buffer lands in the same session; a file
// mention and a selection mention reach the model; the turn and session
// totals, the statusline component and the ? help.
func TestChat(t *testing.T) {
	runNvim(t, "plugin", "chat", "chat", true).check(t)
}

// An earlier session, of a daemon since stopped, is resumed from the list
// and goes on with its history.
func TestResume(t *testing.T) {
	runNvim(t, "plugin", "resume", "resume", true).check(t)
}

// Switching the model mid-session keeps the conversation.
func TestSwitchModel(t *testing.T) {
	runNvim(t, "plugin", "model", "model", true).check(t)
}

// The checkpoint list previews a restore; undo of the last turn restores
// the buffer and drops the turn from the conversation.
func TestUndoLastTurn(t *testing.T) {
	r := runNvim(t, "plugin", "undo", "undo", true)
	r.check(t)
	if got := r.disk(t); got != "hello\n" {
		t.Errorf("hello.txt = %q, want it unchanged", got)
	}
}

// Per-hunk answers in vimdiff: one hunk of two taken by hand is applied
// by the daemon and the model told which part; every hunk taken allows
// the edit.
func TestPickHunks(t *testing.T) {
	runNvim(t, "plugin", "hunks", "hunks", true).check(t)
}

// The parts that need no daemon: questions answered later in a
// coroutine (Neovim 0.10+), streaming into the session buffer, previews.
func TestUnits(t *testing.T) {
	runNvim(t, "plugin", "units", "approve", true).check(t)
}

// No plugin: the stock LSP client, cline.prompt through
// workspace/executeCommand, the approval through the stock
// window/showMessageRequest handler.
func TestStockClient(t *testing.T) {
	r := runNvim(t, "stock", "stock", "approve", false)
	r.check(t)
	if got := r.disk(t); got != "hello, world\n" {
		t.Errorf("after :write, hello.txt = %q, want %q", got, "hello, world\n")
	}
}

// No plugin, as in the README's snippet: a diagnostic on the buffer, the
// stock code action menu, "Fix with agent"; the turn's edit lands in the
// buffer and the command does not hold the editor while the turn runs.
func TestStockCodeAction(t *testing.T) {
	r := runNvim(t, "stock", "codeaction", "fix", false)
	r.check(t)
	if got := r.disk(t); got != "hello, world\n" {
		t.Errorf("after :write, hello.txt = %q, want %q", got, "hello, world\n")
	}
}

// The session buffer's prompt area survives dd of its only line, x and o,
// and what is typed after is sent; the transcript and the separator take
// no edits from the keyboard, and what reaches them from the prompt area
// is put back.
func TestPromptAreaProtected(t *testing.T) {
	runNvim(t, "plugin", "protect", "chat", true).check(t)
}

// After a checkpoint restore (from its preview) and after :ClineSessions
// the cursor is in the session buffer's prompt area, where it was there,
// never in the file window.
func TestCursorBackToPrompt(t *testing.T) {
	runNvim(t, "plugin", "focus", "undo", true).check(t)
}

// One hunk of two taken in vimdiff is reported applied in part, with a
// checkpoint: :ClineUndo puts the file back and drops the turn.
func TestPartialHunksUndo(t *testing.T) {
	runNvim(t, "plugin", "hunks_undo", "hunks_undo", true).check(t)
}

// At 80x24 the session window and the approval view get a usable share
// of the columns and keep it through resizes and windows opened and
// closed; a narrow screen puts the session window below.
func TestLayoutAt80x24(t *testing.T) {
	runNvim(t, "plugin", "layout", "approve", true).check(t)
}

// A killed daemon: the next message offers to resume the session it had;
// yes goes on with it in the new daemon, no starts afresh with new totals.
func TestKilledDaemonOffersResume(t *testing.T) {
	runNvim(t, "plugin", "lost", "lost", true).check(t)
}

// The top-level README's Neovim snippet, read from the README and run as
// it stands (stock client, no plugin) on the Neovim installed here.
func TestReadmeSnippet(t *testing.T) {
	runNvim(t, "stock", "readme", "readme", false).check(t)
}

// :Cline {subcommand} with completion, the old commands as aliases,
// <Plug> mappings, and :checkhealth cline.
func TestCommandsAndHealth(t *testing.T) {
	runNvim(t, "plugin", "commands", "chat", true).check(t)
}

// A session another daemon on the same state directory holds: resuming it
// says so and offers a fork or a read-only view; read-only refuses
// prompts, the fork goes on with the conversation.
func TestSessionHeldElsewhere(t *testing.T) {
	runNvim(t, "plugin", "held", "resume", true).check(t)
}
