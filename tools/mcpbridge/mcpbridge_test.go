package mcpbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cline-ls/cline-ls/tools"
)

// guard bounds every wait in these tests. It only turns a hang into a
// failure; no test depends on how fast anything is.
const guard = 60 * time.Second

// stdioServer configures the test binary as a stdio server.
func stdioServer(t *testing.T, name string, env ...NameValue) ServerConfig {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Under -race, a process sleeps a second at exit unless told not to.
	base := []NameValue{{serverModeEnv, "stdio"}, {"GORACE", "atexit_sleep_ms=0"}}
	return ServerConfig{Name: name, Command: exe, Env: append(base, env...)}
}

// logBuffer collects a Manager's log output.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// statusLog records every OnStatus report.
type statusLog struct {
	mu   sync.Mutex
	seen []ServerStatus
}

func (l *statusLog) add(s ServerStatus) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, s)
}

// states returns the states reported for a server, in order.
func (l *statusLog) states(name string) []State {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []State
	for _, s := range l.seen {
		if s.Name == name {
			out = append(out, s.State)
		}
	}
	return out
}

// harness is a started Manager with its logs and status reports.
type harness struct {
	m      *Manager
	logs   *logBuffer
	status *statusLog
}

func start(t *testing.T, cfgs []ServerConfig, opts Options) *harness {
	t.Helper()
	h := &harness{logs: &logBuffer{}, status: &statusLog{}}
	opts.Logger = slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	opts.OnStatus = h.status.add
	if opts.ConnectTimeout == 0 {
		opts.ConnectTimeout = guard / 2 // a loaded machine is slow to start a race-enabled binary
	}
	if opts.RestartDelay == 0 {
		opts.RestartDelay = 10 * time.Millisecond
	}
	m, err := New(cfgs, opts)
	if err != nil {
		t.Fatal(err)
	}
	h.m = m
	t.Cleanup(func() { _ = m.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	m.Start(ctx)
	return h
}

// statusOf returns a server's current status.
func (h *harness) statusOf(t *testing.T, name string) ServerStatus {
	t.Helper()
	for _, s := range h.m.Status() {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no status for %q in %+v", name, h.m.Status())
	return ServerStatus{}
}

// waitState waits until a server reaches one of the states.
func (h *harness) waitState(t *testing.T, name string, want ...State) ServerStatus {
	t.Helper()
	deadline := time.Now().Add(guard)
	for {
		s := h.statusOf(t, name)
		if slices.Contains(want, s.State) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("server %q stayed %s (%s), want %v", name, s.State, s.Err, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitReports waits until OnStatus has reported exactly these states
// for a server, failing as soon as the reports stray from them.
func (h *harness) waitReports(t *testing.T, name string, want []State) {
	t.Helper()
	deadline := time.Now().Add(guard)
	for {
		got := h.status.states(name)
		if slices.Equal(got, want) {
			return
		}
		if len(got) > len(want) || !slices.Equal(got, want[:len(got)]) || time.Now().After(deadline) {
			t.Fatalf("%s reported %v, want %v", name, got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (h *harness) tool(t *testing.T, name string) tools.Tool {
	t.Helper()
	for _, tl := range h.m.Tools() {
		if tl.Spec().Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %q among %v", name, toolNames(h.m.Tools()))
	return nil
}

func toolNames(ts []tools.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Spec().Name)
	}
	return out
}

// run builds and executes a call, failing the test on a Go error.
func run(t *testing.T, tl tools.Tool, args string) tools.Result {
	t.Helper()
	inv, err := tl.Build(json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s.Build(%s): %v", tl.Spec().Name, args, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	res, err := inv.Execute(ctx, tools.ExecOptions{})
	if err != nil {
		t.Fatalf("%s.Execute(%s): %v", tl.Spec().Name, args, err)
	}
	return res
}

// builtin returns a generic MCP built-in bound to h's Manager.
func (h *harness) builtin(t *testing.T, name string) tools.Tool {
	t.Helper()
	tl, err := tools.Builtin(name, h.m.Builtins()[name])
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

func sameJSON(t *testing.T, got, want []byte) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("bad JSON %s: %v", got, err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("bad JSON %s: %v", want, err)
	}
	return reflect.DeepEqual(g, w)
}

func TestStdioToolsNamesSchemasAndCalls(t *testing.T) {
	h := start(t, []ServerConfig{stdioServer(t, "local")}, Options{})
	st := h.statusOf(t, "local")
	if st.State != StateRunning || st.Tools != 9 || st.Resources != 2 {
		t.Fatalf("status = %+v, want running with 9 tools and 2 resources", st)
	}

	names := toolNames(h.m.Tools())
	want := []string{"local__mcp__add", "local__mcp__crash", "local__mcp__echo", "local__mcp__fail", "local__mcp__getenv",
		"local__mcp__grow", "local__mcp__mixed", "local__mcp__pid", "local__mcp__sleep"}
	for _, w := range want {
		if !slices.Contains(names, w) {
			t.Errorf("tool %s missing from %v", w, names)
		}
	}

	add := h.tool(t, "local__mcp__add")
	spec := add.Spec()
	if !sameJSON(t, spec.Parameters, []byte(addSchema)) {
		t.Errorf("add schema changed:\n got %s\nwant %s", spec.Parameters, addSchema)
	}
	if spec.Kind != tools.KindOther || spec.ReadOnly {
		t.Errorf("add: kind %q, read-only %v; want other, not read-only", spec.Kind, spec.ReadOnly)
	}
	if spec.Description != "Test tool add." {
		t.Errorf("add description = %q", spec.Description)
	}

	// The kept schema is enforced before anything is sent.
	if _, err := add.Build(json.RawMessage(`{"a":1,"b":2,"mode":"product"}`)); err == nil {
		t.Error("a value outside the enum was accepted")
	}
	if _, err := add.Build(json.RawMessage(`{"a":1,"b":2,"opts":{"tags":[]}}`)); err == nil {
		t.Error("a nested object without its required field was accepted")
	}
	if res := run(t, add, `{"a":2,"b":40,"opts":{"round":true}}`); res.Content != "42" || res.IsError {
		t.Errorf("add = %+v, want 42", res)
	}
	if res := run(t, add, `{"a":2,"b":40,"mode":"max"}`); res.Content != "40" {
		t.Errorf("add max = %+v, want 40", res)
	}

	echo := h.tool(t, "local__mcp__echo")
	inv, err := echo.Build(json.RawMessage(`{"text":"hello there"}`))
	if err != nil {
		t.Fatal(err)
	}
	if d := inv.Describe(context.Background()); d.Title != "local: echo" || d.Kind != tools.KindOther {
		t.Errorf("Describe = %+v, want title \"local: echo\", kind other", d)
	}
	if res := run(t, echo, `{"text":"hello there"}`); res.Content != "hello there" || res.IsError {
		t.Errorf("echo = %+v", res)
	}

	if res := run(t, h.tool(t, "local__mcp__fail"), `{}`); !res.IsError || res.Content != "it broke" {
		t.Errorf("fail = %+v, want an error result saying it broke", res)
	}

	res := run(t, h.tool(t, "local__mcp__mixed"), `{}`)
	for _, part := range []string{"some text", "[image, image/png, 4 bytes, not shown]", "[resource test://inline]\ninline text", "[resource test://greeting: greeting]"} {
		if !strings.Contains(res.Content, part) {
			t.Errorf("mixed result lacks %q:\n%s", part, res.Content)
		}
	}
}

func TestGenericBuiltins(t *testing.T) {
	h := start(t, []ServerConfig{stdioServer(t, "local")}, Options{})
	use := h.builtin(t, tools.NameUseMCPTool)

	res := run(t, use, `{"server_name":"local","tool_name":"echo","arguments":{"text":"via use_mcp_tool"}}`)
	if res.Content != "via use_mcp_tool" || res.IsError {
		t.Errorf("use_mcp_tool echo = %+v", res)
	}
	inv, err := use.Build(json.RawMessage(`{"server_name":"local","tool_name":"echo","arguments":{"text":"x"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if d := inv.Describe(context.Background()); d.Title != "local: echo" {
		t.Errorf("use_mcp_tool title = %q", d.Title)
	}

	refused := []struct{ args, path, says string }{
		{`{"server_name":"elsewhere","tool_name":"echo"}`, "server_name", `the servers are: local`},
		{`{"server_name":"local","tool_name":"nope"}`, "tool_name", "echo"},
		{`{"server_name":"local","tool_name":"echo","arguments":{"text":5}}`, "arguments.text", ""},
		{`{"server_name":"local","tool_name":"echo","arguments":{}}`, "arguments", "text"},
	}
	for _, c := range refused {
		_, err := use.Build(json.RawMessage(c.args))
		var ve *tools.ValidationError
		if !errors.As(err, &ve) {
			t.Errorf("use_mcp_tool %s: err = %v, want a validation error", c.args, err)
			continue
		}
		if ve.Tool != tools.NameUseMCPTool || len(ve.Problems) == 0 || !strings.HasPrefix(ve.Problems[0].Path, c.path) ||
			!strings.Contains(ve.Error(), c.says) {
			t.Errorf("use_mcp_tool %s: %+v, want tool %s, a problem at %s saying %q", c.args, ve, tools.NameUseMCPTool, c.path, c.says)
		}
	}

	access := h.builtin(t, tools.NameAccessMCPResource)
	res = run(t, access, `{"server_name":"local","uri":"test://greeting"}`)
	if res.IsError || !strings.Contains(res.Content, "hello resource") {
		t.Errorf("access_mcp_resource greeting = %+v", res)
	}
	res = run(t, access, `{"server_name":"local","uri":"test://blob"}`)
	if res.IsError || !strings.Contains(res.Content, "3 bytes of binary data") {
		t.Errorf("access_mcp_resource blob = %+v", res)
	}
	res = run(t, access, `{"server_name":"local","uri":"test://missing"}`)
	if !res.IsError || !strings.Contains(res.Content, "test://greeting") {
		t.Errorf("access_mcp_resource of an unknown URI = %+v, want an error listing test://greeting", res)
	}
	inv, err = access.Build(json.RawMessage(`{"server_name":"local","uri":"test://greeting"}`))
	if err != nil {
		t.Fatal(err)
	}
	if d := inv.Describe(context.Background()); d.Title != "local: test://greeting" || d.Kind != tools.KindRead {
		t.Errorf("access_mcp_resource Describe = %+v", d)
	}
}

func TestHTTPServers(t *testing.T) {
	for _, sse := range []bool{false, true} {
		kind := map[bool]string{false: TransportHTTP, true: TransportSSE}[sse]
		t.Run(kind, func(t *testing.T) {
			ts := newHTTPServer(t, sse, "t0ken")
			h := start(t, []ServerConfig{
				{Name: "remote", Type: kind, URL: ts.URL, Headers: []NameValue{{"Authorization", "Bearer t0ken"}}},
				{Name: "nokey", Type: kind, URL: ts.URL},
			}, Options{ConnectTimeout: 20 * time.Second})
			if st := h.statusOf(t, "remote"); st.State != StateRunning {
				t.Fatalf("remote: %+v", st)
			}
			t.Logf("nokey: %s", h.statusOf(t, "nokey").Err)
			if st := h.statusOf(t, "nokey"); st.State != StateFailed || !strings.Contains(st.Err, ts.URL) {
				t.Errorf("a server refusing us: %+v, want failed naming the URL", st)
			}
			if !sameJSON(t, h.tool(t, "remote__mcp__add").Spec().Parameters, []byte(addSchema)) {
				t.Error("add schema changed over HTTP")
			}
			if res := run(t, h.tool(t, "remote__mcp__echo"), `{"text":"over http"}`); res.Content != "over http" {
				t.Errorf("echo = %+v", res)
			}
			res := run(t, h.builtin(t, tools.NameAccessMCPResource), `{"server_name":"remote","uri":"test://greeting"}`)
			if !strings.Contains(res.Content, "hello resource") {
				t.Errorf("resource = %+v", res)
			}
			if slices.ContainsFunc(toolNames(h.m.Tools()), func(n string) bool { return strings.HasPrefix(n, "nokey") }) {
				t.Error("a failed server contributed tools")
			}
		})
	}
}

func TestLongNameShortenedAndLogged(t *testing.T) {
	long := strings.Repeat("x", 60)
	h := start(t, []ServerConfig{stdioServer(t, long)}, Options{})
	var echo tools.Tool
	for _, tl := range h.m.Tools() {
		if n := tl.Spec().Name; strings.Contains(n, "__mcp__echo") {
			echo = tl
		}
		if n := tl.Spec().Name; len(n) > tools.MaxToolNameLen {
			t.Errorf("tool name %q is %d characters long", n, len(n))
		}
	}
	if echo == nil {
		t.Fatalf("no echo tool among %v", toolNames(h.m.Tools()))
	}
	if !strings.Contains(h.logs.String(), "shortened") || !strings.Contains(h.logs.String(), echo.Spec().Name) {
		t.Errorf("the shortening of %s was not logged:\n%s", echo.Spec().Name, h.logs.String())
	}
	if res := run(t, echo, `{"text":"still works"}`); res.Content != "still works" {
		t.Errorf("shortened echo = %+v", res)
	}
	// Sanitising: a server name with a space still gives a valid name.
	h2 := start(t, []ServerConfig{stdioServer(t, "my server")}, Options{})
	h2.tool(t, "my_server__mcp__echo")
}

func TestDisabledServerContributesNothing(t *testing.T) {
	dir := t.TempDir()
	off := stdioServer(t, "off", NameValue{startedFileEnv, filepath.Join(dir, "off")})
	off.Disabled = true
	on := stdioServer(t, "on", NameValue{startedFileEnv, filepath.Join(dir, "on")})
	h := start(t, []ServerConfig{off, on}, Options{})

	if st := h.statusOf(t, "off"); st.State != StateDisabled {
		t.Errorf("off: %+v, want disabled", st)
	}
	if got := h.status.states("off"); !slices.Equal(got, []State{StateDisabled}) {
		t.Errorf("off reported %v, want [disabled]", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "off")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the disabled server was started (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "on")); err != nil {
		t.Errorf("the enabled server left no trace of starting: %v", err)
	}
	for _, n := range toolNames(h.m.Tools()) {
		if strings.HasPrefix(n, "off") {
			t.Errorf("disabled server contributed %s", n)
		}
	}
	h.tool(t, "on__mcp__echo")
	_, err := h.builtin(t, tools.NameUseMCPTool).Build(json.RawMessage(`{"server_name":"off","tool_name":"echo"}`))
	if err == nil || !strings.Contains(err.Error(), "disabled") {
		t.Errorf("use_mcp_tool on a disabled server: %v, want an error saying it is disabled", err)
	}
}

func TestMissingCommandFails(t *testing.T) {
	h := start(t, []ServerConfig{
		{Name: "ghost", Command: "cline-ls-no-such-mcp-server"},
		stdioServer(t, "local"),
	}, Options{})
	st := h.statusOf(t, "ghost")
	t.Logf("ghost: %s", st.Err)
	if st.State != StateFailed || !strings.Contains(st.Err, "cline-ls-no-such-mcp-server") || !strings.Contains(st.Err, "not found") {
		t.Errorf("ghost: %+v, want failed, naming the command and saying it was not found", st)
	}
	if got := h.status.states("ghost"); !slices.Equal(got, []State{StateStarting, StateFailed}) {
		t.Errorf("ghost reported %v, want [starting failed]", got)
	}
	if st := h.statusOf(t, "local"); st.State != StateRunning {
		t.Errorf("one failing server took another down: %+v", st)
	}
	res := run(t, h.builtin(t, tools.NameUseMCPTool), `{"server_name":"ghost","tool_name":"echo"}`)
	if !res.IsError || !strings.Contains(res.Content, "not running") {
		t.Errorf("call to a failed server = %+v", res)
	}
}

func TestConnectTimeout(t *testing.T) {
	mute := stdioServer(t, "mute")
	mute.Env[0] = NameValue{serverModeEnv, "mute"}
	h := start(t, []ServerConfig{mute}, Options{ConnectTimeout: 300 * time.Millisecond})
	if st := h.statusOf(t, "mute"); st.State != StateFailed || !strings.Contains(st.Err, "no answer within 300ms") {
		t.Errorf("mute: %+v, want failed for want of an answer", st)
	}
}

func TestEnvironment(t *testing.T) {
	t.Setenv("MCPBRIDGE_TEST_SECRET", "s3cret")
	h := start(t, []ServerConfig{stdioServer(t, "local", NameValue{"GREETING", "hi"})}, Options{})
	getenv := h.tool(t, "local__mcp__getenv")
	if res := run(t, getenv, `{"name":"GREETING"}`); res.Content != "hi" {
		t.Errorf("configured variable: %q, want hi", res.Content)
	}
	if res := run(t, getenv, `{"name":"MCPBRIDGE_TEST_SECRET"}`); res.Content != "(no output)" {
		t.Errorf("the daemon's own variable reached the server: %q", res.Content)
	}
	if os.Getenv("PATH") != "" {
		if res := run(t, getenv, `{"name":"PATH"}`); res.Content != os.Getenv("PATH") {
			t.Errorf("PATH = %q, want the daemon's", res.Content)
		}
	}
}

// TestEnvironmentWithoutKeys: a base environment that holds API keys
// (the daemon's own, passed whole) reaches a server without them; a key
// the server's own configuration sets is passed.
func TestEnvironmentWithoutKeys(t *testing.T) {
	base := append(os.Environ(), "ANTHROPIC_API_KEY=sk-ant-1", "CUSTOM_KEY=sk-custom-2", "KEEP=kept")
	h := start(t, []ServerConfig{stdioServer(t, "local", NameValue{"OPENAI_API_KEY", "sk-configured"})},
		Options{BaseEnv: base, HideEnv: []string{"CUSTOM_KEY"}})
	getenv := h.tool(t, "local__mcp__getenv")
	for name, want := range map[string]string{"ANTHROPIC_API_KEY": "(no output)", "CUSTOM_KEY": "(no output)",
		"KEEP": "kept", "OPENAI_API_KEY": "sk-configured"} {
		if res := run(t, getenv, fmt.Sprintf(`{"name":%q}`, name)); res.Content != want {
			t.Errorf("%s = %q, want %q", name, res.Content, want)
		}
	}
}

func TestCrashedServerRestarts(t *testing.T) {
	h := start(t, []ServerConfig{stdioServer(t, "crashy")}, Options{})
	pid := h.tool(t, "crashy__mcp__pid")
	first, err := strconv.Atoi(run(t, pid, `{}`).Content)
	if err != nil {
		t.Fatal(err)
	}
	if res := run(t, h.tool(t, "crashy__mcp__crash"), `{}`); !res.IsError || !strings.Contains(res.Content, "connection was lost") {
		t.Errorf("a call that kills its server = %+v, want an error result saying the connection was lost", res)
	}
	h.waitReports(t, "crashy", []State{StateStarting, StateRunning, StateRestarting, StateRunning})
	if st := h.statusOf(t, "crashy"); st.State != StateRunning || st.Tools != 9 {
		t.Errorf("after the restart: %+v, want running with its 9 tools listed again", st)
	}
	second, err := strconv.Atoi(run(t, h.tool(t, "crashy__mcp__pid"), `{}`).Content)
	if err != nil {
		t.Fatal(err)
	}
	if second == first {
		t.Errorf("pid %d both before and after the crash", first)
	}
	if res := run(t, h.tool(t, "crashy__mcp__echo"), `{"text":"back"}`); res.Content != "back" {
		t.Errorf("echo after restart = %+v", res)
	}
	checkGone(t, first)
	if !strings.Contains(h.logs.String(), "exit status 3") {
		t.Errorf("the crash's exit status was not logged:\n%s", h.logs.String())
	}
}

func TestRestartsAreBounded(t *testing.T) {
	dir := t.TempDir()
	mark, starts := filepath.Join(dir, "crashed"), filepath.Join(dir, "starts")
	h := start(t, []ServerConfig{stdioServer(t, "doomed",
		NameValue{crashMarkEnv, mark}, NameValue{dieIfEnv, mark}, NameValue{startsLogEnv, starts})},
		Options{MaxRestarts: 2})
	h.tool(t, "doomed__mcp__crash")
	run(t, h.tool(t, "doomed__mcp__crash"), `{}`)
	st := h.waitState(t, "doomed", StateFailed)
	t.Logf("doomed: %s", st.Err)
	for _, want := range []string{"gave up after 2 restart attempts", "exit status 7", "dying on purpose"} {
		if !strings.Contains(st.Err, want) {
			t.Errorf("error %q lacks %q", st.Err, want)
		}
	}
	b, err := os.ReadFile(starts)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n != 3 {
		t.Errorf("the server was started %d times, want 1 + 2 restarts", n)
	}
	if names := toolNames(h.m.Tools()); len(names) != 0 {
		t.Errorf("a failed server still offers %v", names)
	}
	res := run(t, h.builtin(t, tools.NameUseMCPTool), `{"server_name":"doomed","tool_name":"echo","arguments":{"text":"x"}}`)
	if !res.IsError || !strings.Contains(res.Content, "not running") {
		t.Errorf("call to a failed server = %+v", res)
	}
}

func TestCallDuringOutage(t *testing.T) {
	// A long first delay keeps the server restarting while we call.
	h := start(t, []ServerConfig{stdioServer(t, "slow")}, Options{RestartDelay: time.Hour})
	echo := h.tool(t, "slow__mcp__echo")
	run(t, h.tool(t, "slow__mcp__crash"), `{}`)
	h.waitState(t, "slow", StateRestarting)
	if _, err := echo.Build(json.RawMessage(`{"text":"x"}`)); err != nil {
		t.Fatal(err)
	}
	res := run(t, echo, `{"text":"anyone?"}`)
	t.Logf("during the outage: %s", res.Content)
	if !res.IsError || !strings.Contains(res.Content, "being restarted") || !strings.Contains(res.Content, "exit status 3") {
		t.Errorf("call during the outage = %+v, want an error saying the server is being restarted and why", res)
	}
	if !slices.Contains(toolNames(h.m.Tools()), "slow__mcp__echo") {
		t.Error("a restarting server's tools disappeared")
	}
}

func TestCancelledCall(t *testing.T) {
	sleeping := filepath.Join(t.TempDir(), "sleeping")
	h := start(t, []ServerConfig{stdioServer(t, "local", NameValue{sleepingFileEnv, sleeping})}, Options{})
	inv, err := h.tool(t, "local__mcp__sleep").Build(json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type outcome struct {
		res tools.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := inv.Execute(ctx, tools.ExecOptions{})
		done <- outcome{res, err}
	}()
	deadline := time.Now().Add(guard)
	for {
		if _, err := os.Stat(sleeping); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the sleep tool never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case o := <-done:
		if !errors.Is(o.err, context.Canceled) {
			t.Errorf("cancelled call = %+v, %v; want context.Canceled", o.res, o.err)
		}
	case <-time.After(guard):
		t.Fatal("the call ignored its cancellation")
	}
	if res := run(t, h.tool(t, "local__mcp__echo"), `{"text":"after"}`); res.Content != "after" {
		t.Errorf("echo after a cancelled call = %+v", res)
	}
}

func TestToolListChanges(t *testing.T) {
	h := start(t, []ServerConfig{stdioServer(t, "local")}, Options{})
	run(t, h.tool(t, "local__mcp__grow"), `{}`)
	deadline := time.Now().Add(guard)
	for !slices.Contains(toolNames(h.m.Tools()), "local__mcp__extra") {
		if time.Now().After(deadline) {
			t.Fatalf("the new tool never appeared: %v", toolNames(h.m.Tools()))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if res := run(t, h.tool(t, "local__mcp__extra"), `{}`); res.Content != "extra here" {
		t.Errorf("extra = %+v", res)
	}
	if st := h.statusOf(t, "local"); st.Tools != 10 {
		t.Errorf("status after the change: %+v, want 10 tools", st)
	}
}

func TestCloseLeavesNothingBehind(t *testing.T) {
	// The HTTP servers are there before the count and after it: what
	// must go is everything on the client's side of their connections.
	ts, old := newHTTPServer(t, false, ""), newHTTPServer(t, true, "")
	before := runtime.NumGoroutine()
	h := start(t, []ServerConfig{
		stdioServer(t, "local"),
		{Name: "remote", Type: TransportHTTP, URL: ts.URL},
		{Name: "old", Type: TransportSSE, URL: old.URL},
	}, Options{})
	pid, err := strconv.Atoi(run(t, h.tool(t, "local__mcp__pid"), `{}`).Content)
	if err != nil {
		t.Fatal(err)
	}
	run(t, h.tool(t, "remote__mcp__echo"), `{"text":"x"}`)
	run(t, h.tool(t, "old__mcp__echo"), `{"text":"x"}`)
	reports := len(h.status.states("local"))

	if err := h.m.Close(); err != nil {
		t.Fatal(err)
	}
	checkGone(t, pid)
	for _, st := range h.m.Status() {
		if st.State != StateStopped {
			t.Errorf("after Close: %+v, want stopped", st)
		}
	}
	if got := len(h.status.states("local")); got != reports {
		t.Errorf("OnStatus was called during Close")
	}
	res := run(t, h.builtin(t, tools.NameUseMCPTool), `{"server_name":"local","tool_name":"echo","arguments":{"text":"x"}}`)
	if !res.IsError || !strings.Contains(res.Content, "shut down") {
		t.Errorf("call after Close = %+v", res)
	}
	if err := h.m.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	deadline := time.Now().Add(guard)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines before, %d after Close:\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestStartAfterCloseStartsNothing(t *testing.T) {
	started := filepath.Join(t.TempDir(), "started")
	m, err := New([]ServerConfig{stdioServer(t, "local", NameValue{startedFileEnv, started})}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_ = m.Close()
	m.Start(context.Background())
	if _, err := os.Stat(started); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Start after Close started a server (%v)", err)
	}
}

func TestRestartsDisabled(t *testing.T) {
	h := start(t, []ServerConfig{stdioServer(t, "once")}, Options{MaxRestarts: -1})
	run(t, h.tool(t, "once__mcp__crash"), `{}`)
	h.waitReports(t, "once", []State{StateStarting, StateRunning, StateFailed})
	if st := h.statusOf(t, "once"); !strings.Contains(st.Err, "exit status 3") || strings.Contains(st.Err, "gave up") {
		t.Errorf("once: %+v, want failed with the exit status and no restart attempt", st)
	}
}

// fromSDK is what our client reads of a result as the SDK's server
// encodes it.
func fromSDK(t *testing.T, res *mcp.CallToolResult) *callToolResult {
	t.Helper()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var out callToolResult
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return &out
}

func TestToolResultConversion(t *testing.T) {
	structured := toolResult(fromSDK(t, &mcp.CallToolResult{StructuredContent: map[string]any{"n": 1}}))
	if structured.Content != `{"n":1}` || structured.IsError {
		t.Errorf("structured only = %+v, want its JSON", structured)
	}
	if r := toolResult(fromSDK(t, &mcp.CallToolResult{IsError: true})); !r.IsError || r.Content == "" {
		t.Errorf("an empty error = %+v, want an error result that says something", r)
	}
	big := strings.Repeat("é", maxResultChars) + "tail"
	r := toolResult(fromSDK(t, &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: big}}}))
	if n := len([]rune(r.Content)); n > maxResultChars+100 || !strings.Contains(r.Content, "characters cut") ||
		!strings.HasSuffix(r.Content, "tail") || !strings.HasPrefix(r.Content, "éé") {
		t.Errorf("a %d-character result became %d characters, head %q, tail %q", len([]rune(big)), n, r.Content[:10], r.Content[len(r.Content)-10:])
	}
}
