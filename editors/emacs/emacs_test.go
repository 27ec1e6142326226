// Package emacs_test runs the Emacs client (cline.el) and stock Eglot
// against the real cline-ls daemon with the replay model, in headless
// Emacs. It skips when Emacs or Eglot is not installed.
package emacs_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/internal/testbin"
	"github.com/cline-ls/cline-ls/internal/testenv"
)

// flowTimeout guards one Emacs run; a flow takes a few seconds.
const flowTimeout = 3 * time.Minute

// emacsOrSkip returns the emacs binary, or skips the test when Emacs or
// Eglot (built in from Emacs 29, Debian's elpa-eglot on Emacs 28) is
// missing (fails it in CI, which installs both).
func emacsOrSkip(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("emacs")
	if err != nil {
		testenv.Missing(t, "emacs is not installed (Debian: apt-get install emacs-nox elpa-eglot); skipping the Emacs client tests")
	}
	probe := `(progn
  (unless (require 'eglot nil t)
    (require 'package)
    (setq package-user-dir (make-temp-file "cline-probe" t)
          package-directory-list '("/usr/share/emacs/site-lisp/elpa"))
    (package-initialize)
    (require 'eglot nil t))
  (kill-emacs (if (featurep 'eglot) 0 3)))`
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--batch", "-Q", "--eval", probe)
	cmd.Env = hermeticEnv(t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 3 {
			testenv.Missing(t, "Emacs has no Eglot (Debian: apt-get install elpa-eglot); skipping the Emacs client tests")
		}
		t.Fatalf("probing emacs for eglot: %v\n%s", err, out)
	}
	return bin
}

// hermeticEnv is the environment for Emacs and, through it, the daemon:
// no API keys or cline-ls settings from the developer's machine, and home
// as HOME, XDG_CONFIG_HOME's parent and TMPDIR.
func hermeticEnv(home string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasSuffix(name, "_API_KEY"), strings.HasPrefix(name, "CLINE_"),
			name == "HOME", name == "XDG_CONFIG_HOME", name == "TMPDIR", name == "EMACSLOADPATH":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "TMPDIR="+home)
	return append(env, extra...)
}

// flow is one end-to-end scenario of test/e2e.el.
type flow struct {
	name string
	// disk is hello.txt on disk once Emacs has exited.
	disk string
	// minChecks is the least number of passed checks the run must report,
	// so that a script that stops early cannot pass.
	minChecks int
	// terminal runs Emacs in a terminal (emacs -nw) instead of batch.
	terminal bool
	// transcript names the replay transcript in testdata, when it is not
	// the flow's own NAME.json, or is its absolute path.
	transcript string
	// setup, when set, adds to the flow's home and workspace and returns
	// more of Emacs's environment.
	setup func(home, ws string) []string
}

// shellQuote joins args into one sh command line.
func shellQuote(args ...string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// TestEmacsFlows runs each flow of test/e2e.el in its own Emacs and
// daemon: approve (flow 1), reject (flow 2), plan (plan mode, a question,
// a mode switch and a y-or-n-p approval), cancel (cline-cancel while an
// approval is asked, then a next task), stock (flow 3: Eglot with no
// plugin, workspace/executeCommand and window/showMessageRequest),
// typeahead (keys typed while an approval waits never answer it), chat
// (a prompt typed in *cline*, a follow-up with a file and a selection
// mentioned, the status line, the last turn undone), resume (a session of
// an earlier daemon reopened and continued) and codeaction (stock Eglot:
// a code action on a flymake diagnostic runs a turn) and nokey (the first
// run with no API key, then the README's offline model), review (an
// edit's hunk taken back in Ediff), model (model and mode switched from
// the chat) and hostile (control, bidi and zero-width characters from the
// model, commands and files shown as escapes, the command approved
// exactly) and diagnostics (an edit that breaks the file comes back with
// Flymake's new error, one that fixes it says so).
func TestEmacsFlows(t *testing.T) {
	emacs := emacsOrSkip(t)
	here, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	daemon := testbin.CLI(t)
	flows := []flow{
		{name: "approve", disk: "hello, world\n", minChecks: 24},
		{name: "reject", disk: "hello\n", minChecks: 10},
		{name: "plan", disk: "hello\n", minChecks: 13},
		{name: "cancel", disk: "hello\n", minChecks: 10},
		{name: "stock", disk: "hello, world\n", minChecks: 12, terminal: true},
		{name: "typeahead", disk: "hello\n", minChecks: 8},
		{name: "chat", disk: "hello\n", minChecks: 44, terminal: true},
		{name: "resume", disk: "hello\n", minChecks: 12},
		{name: "codeaction", disk: "hello, world\n", minChecks: 12, terminal: true},
		{name: "nokey", disk: "hello\n", minChecks: 9, transcript: "approve"},
		{name: "review", disk: "hello\n", minChecks: 15, terminal: true, transcript: "approve"},
		{name: "model", disk: "hello\n", minChecks: 6},
		{name: "hostile", disk: "hello\n", minChecks: 20},
		{name: "diagnostics", disk: "hello\n", minChecks: 8, terminal: true},
		{name: "planresume", disk: "hello\n", minChecks: 9},
		{name: "stockedits", disk: "hello\n", minChecks: 8, terminal: true},
		{name: "livemodel", disk: "hello\n", minChecks: 5},
		{name: "killed", disk: "hello\n", minChecks: 8, transcript: "resume"},
		{name: "held", disk: "hello\n", minChecks: 10, transcript: "resume"},
		{name: "hunks", disk: "hello\n", minChecks: 20, terminal: true},
		{name: "hunkparse", disk: "hello\n", minChecks: 10, transcript: "approve"},
	}
	for _, f := range flows {
		t.Run(f.name, func(t *testing.T) {
			// Each flow has its own Emacs, daemon, workspace, home and
			// state; most of a flow's time is Emacs waiting on the
			// daemon or on its own timers, so they overlap well.
			t.Parallel()
			runFlow(t, emacs, daemon, here, f)
		})
	}
}

func runFlow(t *testing.T, emacs, daemon, here string, f flow) {
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	state := filepath.Join(root, "state")
	home := filepath.Join(root, "home")
	for _, d := range []string{ws, state, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	hello := filepath.Join(ws, "hello.txt")
	if err := os.WriteFile(hello, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	name := f.name
	if f.transcript != "" {
		name = f.transcript
	}
	transcript, err := filepath.Abs(filepath.Join(here, "testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	if filepath.IsAbs(f.transcript) {
		transcript = f.transcript
	}
	logFile := filepath.Join(root, "cline-ls.log")
	result := filepath.Join(root, "result.txt")

	ctx, cancel := context.WithTimeout(context.Background(), flowTimeout)
	defer cancel()
	script := filepath.Join(here, "test", "e2e.el")
	cmd := exec.CommandContext(ctx, emacs, "--batch", "-Q", "-l", script)
	if f.terminal {
		// A real terminal Emacs, with a command loop that goes idle as
		// a user's does: script(1) gives it a pseudo-terminal.
		scriptBin, err := exec.LookPath("script")
		if err != nil {
			testenv.Missing(t, "script(1) is not installed (Debian: bsdutils); skipping the terminal flow")
		}
		// A terminal of 80x24, the smallest a user has.
		cmd = exec.CommandContext(ctx, scriptBin, "-qfec", "stty rows 24 cols 80 2>/dev/null; "+shellQuote(emacs, "-nw", "-Q", "-l", script), "/dev/null")
	}
	cmd.Dir = ws
	cmd.Env = hermeticEnv(home,
		"CLINE_TEST_FLOW="+f.name,
		"CLINE_LS="+daemon,
		"CLINE_TEST_LOG="+logFile,
		"CLINE_TEST_WORKSPACE="+ws,
		"CLINE_TEST_TRANSCRIPT="+transcript,
		"CLINE_TEST_STATE="+state,
		"CLINE_TEST_RESULT="+result,
		"TERM=xterm",
	)
	if f.setup != nil {
		cmd.Env = append(cmd.Env, f.setup(home, ws)...)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()

	report := func() {
		t.Logf("emacs output:\n%s", out.String())
		filepath.WalkDir(state, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
				if b, err := os.ReadFile(p); err == nil {
					t.Logf("session file %s:\n%s", p, b)
				}
			}
			return nil
		})
		if b, err := os.ReadFile(logFile); err == nil {
			t.Logf("cline-ls log (%s):\n%s", logFile, b)
		} else {
			t.Logf("no cline-ls log: %v", err)
		}
	}
	if ctx.Err() != nil {
		report()
		t.Fatalf("emacs did not finish within %v", flowTimeout)
	}
	res, err := os.ReadFile(result)
	if err != nil {
		report()
		t.Fatalf("emacs wrote no result file (%v); exit: %v", err, runErr)
	}
	passed := 0
	for _, line := range strings.Split(strings.TrimSpace(string(res)), "\n") {
		switch {
		case strings.HasPrefix(line, "ok "):
			passed++
		case line != "":
			t.Error(line)
		}
	}
	if runErr != nil {
		t.Errorf("emacs: %v", runErr)
	}
	if passed < f.minChecks {
		t.Errorf("%d checks passed, want at least %d:\n%s", passed, f.minChecks, res)
	}
	disk, err := os.ReadFile(hello)
	if err != nil {
		t.Fatal(err)
	}
	if string(disk) != f.disk {
		t.Errorf("hello.txt on disk after the run = %q, want %q", disk, f.disk)
	}
	if t.Failed() {
		report()
	}
}

// TestByteCompile compiles cline.el with warnings (but obsolescence) as
// errors.
func TestByteCompile(t *testing.T) {
	emacs := emacsOrSkip(t)
	src, err := os.ReadFile("cline.el")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	el := filepath.Join(dir, "cline.el")
	if err := os.WriteFile(el, src, 0o644); err != nil {
		t.Fatal(err)
	}
	eval := `(progn
  (unless (require 'eglot nil t)
    (require 'package)
    (setq package-user-dir (make-temp-file "cline-compile" t)
          package-directory-list '("/usr/share/emacs/site-lisp/elpa"))
    (package-initialize))
  ;; Newer Eglots mark some of the names cline.el uses for older ones
  ;; as obsolete; those warnings are expected.
  (setq byte-compile-error-on-warn t
        byte-compile-warnings '(not obsolete)))`
	ctx, cancel := context.WithTimeout(context.Background(), flowTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, emacs, "--batch", "-Q", "--eval", eval, "-f", "batch-byte-compile", el)
	cmd.Env = hermeticEnv(dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("byte-compiling cline.el: %v\n%s", err, out)
	}
}
