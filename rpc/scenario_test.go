package rpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/rpc/rpctest"
	"github.com/cline-ls/cline-ls/session"
	"github.com/cline-ls/cline-ls/workspace"
)

// TestScenarios plays the end-to-end scenarios of testdata/scenarios, one
// txtar archive each, as gopls's integration tests play theirs: a real
// Server over net.Pipe driven by rpctest.Editor in the dialects the
// scenario names, each scenario and dialect a subtest, run side by side.
//
// An archive's comment is the script; its files are the workspace
// (written under $WORK), except model.json, the scripted model's replies
// (a provider.Transcript: the replay provider is then the settings'
// provider unless they name another), and files under text/, which are only
// there for @name arguments. One command a line; # starts a comment;
// [lsp] or [acp] before a command runs it in that dialect only; ! before
// a request expects it to fail (error checks how), before an expectation
// negates it; & after a request's name runs it in the background (wait
// joins it). Arguments are words, Go-quoted strings, @name (that archive
// file's text) or, from a { or [ on, JSON to the end of the line.
// $WORK, $STATE, $SESSION and the names save gave are replaced in every
// line as it runs. The full list is in testdata/scenarios/README.md; in
// short:
//
//	dialects lsp acp | settings JSON | caps JSON | apply normal|skipstale|refuse|late
//	open PATH [TEXT] | edit PATH RANGE TEXT | type PATH RANGE TEXT | flush PATH
//	late [TEXT] | write PATH TEXT | chmod PATH MODE | sync
//	session [JSON] | prompt TEXT | tool NAME JSON | call METHOD JSON | notify METHOD JSON
//	cancel | answer OPTION [FEEDBACK] | on METHOD COMMAND... | wait | restart [MODEL]
//	ok [TEXT...] | fails [TEXT...] | result PATH OP [VALUE] | error [CODE] [TEXT] | save NAME PATH
//	buffer PATH TEXT | editor PATH TEXT | disk PATH [OP] TEXT | exists PATH | perm PATH MODE
//	message METHOD N
//	count METHOD N | await METHOD TEXT... | last METHOD TEXT
//	update KIND [TEXT] | agent OP TEXT | history len N | history contains TEXT | history PATH OP VALUE
//
// A failure names the archive and line, the command, and what was
// expected against what was seen; the first failed command ends the run.
func TestScenarios(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "scenarios", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios in testdata/scenarios (%v)", err)
	}
	// Scenarios mostly wait (for the editor's catch-up, a debounce, an
	// answer), so they run side by side beyond -parallel, which is the
	// number of cores: t.Run may be called from several goroutines.
	type script struct {
		file     string
		ar       *txtar.Archive
		lines    []scriptLine
		dialects []string
	}
	var scripts []script
	for _, file := range files {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			t.Fatal(err)
		}
		lines, err := parseScript(file, string(ar.Comment))
		if err != nil {
			t.Fatal(err)
		}
		dialects := []string{"lsp"}
		for _, l := range lines {
			if l.name == "dialects" {
				dialects = l.words()
			}
		}
		scripts = append(scripts, script{file, ar, lines, dialects})
	}
	sem := make(chan struct{}, scenariosAtOnce)
	var wg sync.WaitGroup
	for _, sc := range scripts {
		wg.Go(func() {
			t.Run(strings.TrimSuffix(filepath.Base(sc.file), ".txtar"), func(t *testing.T) {
				var each sync.WaitGroup
				for _, d := range sc.dialects {
					each.Go(func() {
						sem <- struct{}{}
						defer func() { <-sem }()
						t.Run(d, func(t *testing.T) { runScenario(t, sc.file, sc.ar, sc.lines, d) })
					})
				}
				each.Wait()
			})
		})
	}
	wg.Wait()
}

// scenariosAtOnce bounds the scenarios that run at the same time.
const scenariosAtOnce = 8

// arg is one argument of a script line.
type arg struct {
	text   string
	quoted bool // a Go string, @name or JSON: never a keyword
	json   bool // JSON to the end of the line
}

// scriptLine is one command of a script, its variables not yet replaced.
type scriptLine struct {
	file    string
	n       int
	raw     string // the command as written, for messages
	dialect string // "" or the one dialect it runs in
	neg     bool
	bg      bool
	name    string
	rest    string // what follows the name, parsed when the line runs
}

func (l scriptLine) words() []string { return strings.Fields(l.rest) }

func (l scriptLine) where() string { return fmt.Sprintf("%s:%d: %s", l.file, l.n, l.raw) }

func parseScript(file, script string) ([]scriptLine, error) {
	var out []scriptLine
	for i, raw := range strings.Split(script, "\n") {
		s := strings.TrimSpace(raw)
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		l := scriptLine{file: file, n: i + 1, raw: s}
		if c, rest, ok := strings.Cut(s, "]"); ok && strings.HasPrefix(c, "[") {
			l.dialect = strings.TrimPrefix(c, "[")
			if l.dialect != "lsp" && l.dialect != "acp" {
				return nil, fmt.Errorf("%s:%d: unknown condition [%s], want [lsp] or [acp]", file, l.n, l.dialect)
			}
			s = strings.TrimSpace(rest)
		}
		if rest, ok := strings.CutPrefix(s, "!"); ok {
			l.neg, s = true, strings.TrimSpace(rest)
		}
		l.name, l.rest, _ = strings.Cut(s, " ")
		l.rest = strings.TrimSpace(l.rest)
		if n, ok := strings.CutSuffix(l.name, "&"); ok {
			l.name, l.bg = n, true
		}
		if _, ok := scenarioCommands[l.name]; !ok {
			return nil, fmt.Errorf("%s:%d: unknown command %q", file, l.n, l.name)
		}
		if l.name == "dialects" {
			for _, d := range l.words() {
				if d != "lsp" && d != "acp" {
					return nil, fmt.Errorf("%s:%d: unknown dialect %q, want lsp or acp", file, l.n, d)
				}
			}
		}
		out = append(out, l)
	}
	return out, nil
}

// splitArgs splits what follows a command's name into arguments.
func splitArgs(s string, files map[string]string) ([]arg, error) {
	var out []arg
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		switch {
		case s[0] == '{' || s[0] == '[':
			if !json.Valid([]byte(s)) {
				return nil, fmt.Errorf("not valid JSON: %s", s)
			}
			return append(out, arg{s, true, true}), nil
		case s[0] == '"':
			q, err := strconv.QuotedPrefix(s)
			if err != nil {
				return nil, fmt.Errorf("bad quoted string at %s", s)
			}
			u, _ := strconv.Unquote(q)
			out = append(out, arg{text: u, quoted: true})
			s = s[len(q):]
		default:
			w, rest, _ := strings.Cut(s, " ")
			if name, ok := strings.CutPrefix(w, "@"); ok {
				text, ok := files[name]
				if !ok {
					return nil, fmt.Errorf("no file %s in the archive", name)
				}
				out = append(out, arg{text: text, quoted: true})
			} else {
				out = append(out, arg{text: w})
			}
			s = rest
		}
	}
	return out, nil
}

// scenario is one run of a script in one dialect.
type scenario struct {
	t       *testing.T
	ctx     context.Context
	dialect string
	files   map[string]string // the archive's, by name
	work    string
	state   string

	settings map[string]any
	caps     map[string]any
	model    string // the archive file the model replays
	ed       *rpctest.Editor

	mu   sync.Mutex // guards vars, which triggers read
	vars map[string]string

	result  json.RawMessage
	err     error // the last failed request's, for error
	bg      []*background
	armed   []*trigger
	answers chan answer
	queued  []int // the lines of the answers given, in order
	file    string
	asked   []string // the asks waiting for an answer, guarded by mu
	ended   bool     // the script is over: goroutines report nothing more; guarded by mu
}

type background struct {
	line   scriptLine
	done   chan struct{}
	result json.RawMessage
	err    error
}

type trigger struct {
	line  scriptLine
	fired chan struct{}
	done  chan struct{}
}

// answer is the editor's answer to the next approval or question it is
// asked.
type answer struct {
	line     int
	option   string // an option id, a window/showMessageRequest title or a cline/askQuestion answer; "dismiss" answers nothing chosen
	feedback string
}

type scenarioCommand func(sc *scenario, l scriptLine, args []arg) error

var scenarioCommands map[string]scenarioCommand

func init() {
	scenarioCommands = map[string]scenarioCommand{
		"dialects": func(*scenario, scriptLine, []arg) error { return nil },
		"settings": (*scenario).cmdSettings,
		"caps":     (*scenario).cmdCaps,
		"apply":    (*scenario).cmdApply,
		"open":     (*scenario).cmdOpen,
		"edit":     (*scenario).cmdEdit,
		"type":     (*scenario).cmdEdit,
		"flush":    (*scenario).cmdFlush,
		"late":     (*scenario).cmdLate,
		"write":    (*scenario).cmdWrite,
		"chmod":    (*scenario).cmdChmod,
		"sync":     (*scenario).cmdSync,
		"session":  (*scenario).cmdRequest,
		"prompt":   (*scenario).cmdRequest,
		"tool":     (*scenario).cmdRequest,
		"call":     (*scenario).cmdRequest,
		"notify":   (*scenario).cmdNotify,
		"cancel":   (*scenario).cmdNotify,
		"answer":   (*scenario).cmdAnswer,
		"on":       (*scenario).cmdOn,
		"wait":     (*scenario).cmdWait,
		"restart":  (*scenario).cmdRestart,
		"result":   (*scenario).cmdResult,
		"ok":       (*scenario).cmdToolResult,
		"fails":    (*scenario).cmdToolResult,
		"message":  (*scenario).cmdMessage,
		"error":    (*scenario).cmdError,
		"save":     (*scenario).cmdSave,
		"buffer":   (*scenario).cmdBuffer,
		"editor":   (*scenario).cmdBuffer,
		"disk":     (*scenario).cmdDisk,
		"exists":   (*scenario).cmdExists,
		"perm":     (*scenario).cmdPerm,
		"count":    (*scenario).cmdCount,
		"await":    (*scenario).cmdAwait,
		"last":     (*scenario).cmdLast,
		"update":   (*scenario).cmdUpdate,
		"agent":    (*scenario).cmdAgent,
		"history":  (*scenario).cmdHistory,
	}
}

// setup commands run before the editor connects; any other starts it.
var setupCommands = map[string]bool{"dialects": true, "settings": true, "caps": true}

// negatable commands take !.
var negatable = map[string]bool{"session": true, "prompt": true, "tool": true, "call": true,
	"exists": true, "update": true, "count": true}

func runScenario(t *testing.T, file string, ar *txtar.Archive, lines []scriptLine, dialect string) {
	sc := &scenario{
		t: t, ctx: testCtx(t), dialect: dialect, files: map[string]string{},
		work: t.TempDir(), state: t.TempDir(),
		settings: map[string]any{}, caps: map[string]any{},
		answers: make(chan answer, 64), file: file, model: "model.json",
	}
	sc.vars = map[string]string{"WORK": sc.work, "STATE": sc.state}
	for _, f := range ar.Files {
		sc.files[f.Name] = string(f.Data)
		if f.Name == "model.json" || strings.HasPrefix(f.Name, "text/") {
			continue
		}
		p := filepath.Join(sc.work, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	defer sc.finish()
	for _, l := range lines {
		if l.dialect != "" && l.dialect != dialect {
			continue
		}
		if l.neg && !negatable[l.name] {
			t.Fatalf("%s: %s does not take !", l.where(), l.name)
		}
		if sc.ed == nil && !setupCommands[l.name] {
			sc.start()
		}
		if err := sc.exec(l); err != nil {
			t.Fatalf("%s\n\t%v", l.where(), err)
		}
	}
}

// exec runs one line, its variables replaced now.
func (sc *scenario) exec(l scriptLine) error {
	args, err := splitArgs(sc.expand(l.rest), sc.files)
	if err != nil {
		return err
	}
	return scenarioCommands[l.name](sc, l, args)
}

var varRef = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?`)

// expand replaces the variables the scenario knows; any other $ is left.
func (sc *scenario) expand(s string) string {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return varRef.ReplaceAllStringFunc(s, func(m string) string {
		if v, ok := sc.vars[varRef.FindStringSubmatch(m)[1]]; ok {
			return v
		}
		return m
	})
}

// finish joins what the script left running and checks that every answer
// it gave was asked for and every trigger fired.
func (sc *scenario) finish() {
	if sc.t.Failed() && sc.ed != nil {
		// What still runs may wait for what the script will never do now
		// (an answer, a flush): the connection's end fails it at once.
		sc.ed.Disconnect()
	}
	for _, b := range sc.bg {
		<-b.done
	}
	for _, tr := range sc.armed {
		select {
		case <-tr.fired:
			<-tr.done
		default:
			sc.t.Errorf("%s\n\tnever fired: no %s came", tr.line.where(), strings.Fields(tr.line.rest)[0])
		}
	}
	if n := len(sc.answers); n > 0 && !sc.t.Failed() {
		sc.t.Errorf("%s:%d: %d answer(s) from here on were never asked for", sc.file, sc.queued[len(sc.queued)-n], n)
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if len(sc.asked) > 0 {
		sc.t.Errorf("%s: the editor was asked (%s) and the script gave no answer", sc.file, strings.Join(sc.asked, ", "))
	}
	sc.ended = true
}

// report fails the test from a goroutine of the scenario's, unless the
// script is already over.
func (sc *scenario) report(format string, args ...any) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if !sc.ended {
		sc.t.Errorf(format, args...)
	}
}

// start connects the editor and initializes the server.
func (sc *scenario) start() {
	t := sc.t
	if tr, ok := sc.files[sc.model]; ok {
		p := filepath.Join(t.TempDir(), "model.json")
		if err := os.WriteFile(p, []byte(sc.expand(tr)), 0o644); err != nil {
			t.Fatal(err)
		}
		if pr, ok := sc.settings["provider"].(map[string]any); !ok || pr["name"] == "replay" {
			sc.settings["provider"] = map[string]any{"name": "replay", "transcript": p}
		}
	}
	if sc.dialect == "acp" {
		config := t.TempDir()
		b, _ := json.Marshal(sc.settings)
		os.MkdirAll(filepath.Join(config, "cline-ls"), 0o755)
		if err := os.WriteFile(filepath.Join(config, "cline-ls", "config.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		env := map[string]string{"XDG_STATE_HOME": sc.state, "XDG_CONFIG_HOME": config, "HOME": t.TempDir()}
		sc.ed = rpctest.NewACP(t, rpc.Options{Getenv: func(k string) string { return env[k] }})
		sc.ed.Handle("session/request_permission", func(ctx context.Context, _ json.RawMessage) (any, error) {
			a, err := sc.nextAnswer(ctx, "session/request_permission")
			if err != nil || a.option == "dismiss" {
				return map[string]any{"outcome": map[string]any{"outcome": "cancelled"}}, err
			}
			return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": a.option}}, nil
		})
		caps := map[string]any{"fs": map[string]any{"readTextFile": true, "writeTextFile": true}}
		maps.Copy(caps, sc.caps)
		if _, err := sc.ed.InitializeACP(sc.ctx, caps); err != nil {
			t.Fatal(err)
		}
		return
	}
	sc.ed = rpctest.New(t, rpc.Options{})
	sc.ed.Handle("window/showMessageRequest", func(ctx context.Context, _ json.RawMessage) (any, error) {
		a, err := sc.nextAnswer(ctx, "window/showMessageRequest")
		if err != nil || a.option == "dismiss" {
			return nil, err
		}
		return map[string]any{"title": a.option}, nil
	})
	sc.ed.Handle("cline/askQuestion", func(ctx context.Context, _ json.RawMessage) (any, error) {
		a, err := sc.nextAnswer(ctx, "cline/askQuestion")
		if err != nil || a.option == "dismiss" {
			return nil, err
		}
		return map[string]any{"answer": a.option}, nil
	})
	caps := map[string]any{
		"workspace": map[string]any{"applyEdit": true, "workspaceEdit": map[string]any{"documentChanges": true}},
		"window":    map[string]any{"showMessage": map[string]any{}},
	}
	maps.Copy(caps, sc.caps)
	if _, err := sc.ed.Initialize(sc.ctx, sc.work, map[string]any{"initializationOptions": sc.settings, "capabilities": caps}); err != nil {
		t.Fatal(err)
	}
	// cline/approvalRequest is a notification, answered by a request.
	go func() {
		for seen := 0; ; seen++ {
			if _, err := sc.ed.Await(sc.ctx, "cline/approvalRequest", func(json.RawMessage) bool {
				return len(sc.ed.Messages("cline/approvalRequest")) > seen
			}); err != nil {
				return
			}
			var req struct {
				ApprovalID string `json:"approvalId"`
			}
			json.Unmarshal(sc.ed.Messages("cline/approvalRequest")[seen].Params, &req)
			a, err := sc.nextAnswer(sc.ctx, "cline/approvalRequest")
			if err != nil {
				return
			}
			p := map[string]any{"approvalId": req.ApprovalID, "outcome": map[string]any{"outcome": "selected", "optionId": a.option}}
			if a.option == "dismiss" {
				p["outcome"] = map[string]any{"outcome": "cancelled"}
			}
			if a.feedback != "" {
				p["feedback"] = a.feedback
			}
			if err := sc.ed.Call(sc.ctx, "cline/approvalResponse", p, nil); err != nil {
				sc.report("%s:%d: answering the approval: %v", sc.file, a.line, err)
			}
		}
	}()
}

// nextAnswer waits for the script's next answer; finish reports an ask
// still waiting when the script ends.
func (sc *scenario) nextAnswer(ctx context.Context, method string) (answer, error) {
	sc.mu.Lock()
	sc.asked = append(sc.asked, method)
	sc.mu.Unlock()
	defer func() {
		sc.mu.Lock()
		if i := slices.Index(sc.asked, method); i >= 0 {
			sc.asked = slices.Delete(sc.asked, i, i+1)
		}
		sc.mu.Unlock()
	}()
	select {
	case a := <-sc.answers:
		return a, nil
	case <-ctx.Done():
		return answer{}, ctx.Err()
	}
}

// --- setup

func (sc *scenario) cmdSettings(l scriptLine, args []arg) error {
	return mergeJSON(sc.settings, args)
}

func (sc *scenario) cmdCaps(l scriptLine, args []arg) error {
	return mergeJSON(sc.caps, args)
}

func mergeJSON(into map[string]any, args []arg) error {
	if len(args) != 1 {
		return errors.New("want one JSON object")
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(args[0].text), &m); err != nil {
		return err
	}
	maps.Copy(into, m)
	return nil
}

func (sc *scenario) cmdApply(l scriptLine, args []arg) error {
	modes := map[string]rpctest.ApplyMode{"normal": rpctest.ApplyNormal, "skipstale": rpctest.ApplySkipStale,
		"refuse": rpctest.ApplyRefuse, "late": rpctest.ApplyLateChange}
	if len(args) != 1 {
		return errors.New("want one of normal, skipstale, refuse, late")
	}
	m, ok := modes[args[0].text]
	if !ok {
		return fmt.Errorf("unknown mode %q, want one of normal, skipstale, refuse, late", args[0].text)
	}
	sc.ed.Mode = m
	return nil
}

// --- the editor's actions

func (sc *scenario) path(p string) string { return filepath.Join(sc.work, filepath.FromSlash(p)) }
func (sc *scenario) uri(p string) string  { return workspace.PathToURI(sc.path(p)) }

func (sc *scenario) cmdOpen(l scriptLine, args []arg) error {
	if len(args) < 1 || len(args) > 2 {
		return errors.New("want PATH [TEXT]")
	}
	var text string
	if len(args) == 2 {
		text = args[1].text
	} else {
		b, err := os.ReadFile(sc.path(args[0].text))
		if err != nil {
			return err
		}
		text = string(b)
	}
	return sc.ed.Open(sc.ctx, sc.uri(args[0].text), text)
}

var rangeSyntax = regexp.MustCompile(`^(\d+):(\d+)-(\d+):(\d+)$`)

func parseRange(s string) (workspace.Range, error) {
	m := rangeSyntax.FindStringSubmatch(s)
	if m == nil {
		return workspace.Range{}, fmt.Errorf("range %q, want LINE:CHAR-LINE:CHAR (0-based)", s)
	}
	n := make([]uint32, 4)
	for i := range n {
		v, _ := strconv.ParseUint(m[i+1], 10, 32)
		n[i] = uint32(v)
	}
	return rng(n[0], n[1], n[2], n[3]), nil
}

// cmdEdit is edit (sent at once) and type (held back until flush).
func (sc *scenario) cmdEdit(l scriptLine, args []arg) error {
	if len(args) != 3 {
		return errors.New("want PATH RANGE TEXT")
	}
	r, err := parseRange(args[1].text)
	if err != nil {
		return err
	}
	if l.name == "type" {
		return sc.ed.Type(sc.uri(args[0].text), r, args[2].text)
	}
	return sc.ed.Edit(sc.ctx, sc.uri(args[0].text), r, args[2].text)
}

func (sc *scenario) cmdFlush(l scriptLine, args []arg) error {
	if len(args) != 1 {
		return errors.New("want PATH")
	}
	return sc.ed.Flush(sc.ctx, sc.uri(args[0].text))
}

func (sc *scenario) cmdLate(l scriptLine, args []arg) error {
	var text string
	if len(args) == 1 {
		text = args[0].text
	}
	sc.ed.SendLate(sc.ctx, text)
	return nil
}

func (sc *scenario) cmdWrite(l scriptLine, args []arg) error {
	if len(args) != 2 {
		return errors.New("want PATH TEXT")
	}
	return os.WriteFile(sc.path(args[0].text), []byte(args[1].text), 0o644)
}

func parseMode(s string) (fs.FileMode, error) {
	m, err := strconv.ParseUint(s, 8, 32)
	if err != nil {
		return 0, fmt.Errorf("mode %q, want octal such as 0640", s)
	}
	return fs.FileMode(m), nil
}

func (sc *scenario) cmdChmod(l scriptLine, args []arg) error {
	if len(args) != 2 {
		return errors.New("want PATH MODE")
	}
	m, err := parseMode(args[1].text)
	if err != nil {
		return err
	}
	return os.Chmod(sc.path(args[0].text), m)
}

func (sc *scenario) cmdSync(scriptLine, []arg) error {
	sc.ed.Sync(sc.ctx)
	return nil
}

// request builds the method and params of a request command.
func (sc *scenario) request(l scriptLine, args []arg) (string, any, error) {
	obj := func(i int) (map[string]any, error) {
		m := map[string]any{}
		if len(args) > i {
			if err := json.Unmarshal([]byte(args[i].text), &m); err != nil {
				return nil, fmt.Errorf("want a JSON object: %v", err)
			}
		}
		return m, nil
	}
	switch l.name {
	case "session":
		p, err := obj(0)
		if _, ok := p["cwd"]; !ok {
			p["cwd"] = sc.work
		}
		if _, ok := p["mcpServers"]; !ok {
			p["mcpServers"] = []any{}
		}
		return "session/new", p, err
	case "prompt":
		if len(args) != 1 {
			return "", nil, errors.New("want TEXT")
		}
		return "session/prompt", map[string]any{"sessionId": sc.expand("$SESSION"),
			"prompt": []any{map[string]any{"type": "text", "text": args[0].text}}}, nil
	case "tool":
		if len(args) != 2 {
			return "", nil, errors.New("want NAME JSON")
		}
		return "cline/callTool", map[string]any{"name": args[0].text, "arguments": json.RawMessage(args[1].text)}, nil
	default:
		if len(args) < 1 || len(args) > 2 {
			return "", nil, errors.New("want METHOD [JSON]")
		}
		if len(args) == 1 {
			return args[0].text, nil, nil
		}
		return args[0].text, json.RawMessage(args[1].text), nil
	}
}

// cmdRequest sends session, prompt, tool and call; its answer is the
// result the next result and save look at.
func (sc *scenario) cmdRequest(l scriptLine, args []arg) error {
	method, params, err := sc.request(l, args)
	if err != nil {
		return err
	}
	if l.bg {
		b := &background{line: l, done: make(chan struct{})}
		sc.bg = append(sc.bg, b)
		go func() {
			defer close(b.done)
			b.result, b.err = sc.ed.CallRaw(sc.ctx, method, params)
		}()
		return nil
	}
	res, err := sc.ed.CallRaw(sc.ctx, method, params)
	return sc.answered(l, res, err)
}

// answered takes a request's answer: an error is a failure unless the
// line expected one; session/new's id becomes $SESSION.
func (sc *scenario) answered(l scriptLine, res json.RawMessage, err error) error {
	sc.result, sc.err = res, err
	switch {
	case err != nil && !l.neg:
		return fmt.Errorf("failed: %v", err)
	case err == nil && l.neg:
		return fmt.Errorf("succeeded, want an error; answered %s", res)
	}
	if l.name == "session" && err == nil {
		var created struct {
			SessionID string `json:"sessionId"`
		}
		json.Unmarshal(res, &created)
		sc.mu.Lock()
		sc.vars["SESSION"] = created.SessionID
		sc.mu.Unlock()
		sc.ed.KnowSession(created.SessionID)
	}
	return nil
}

func (sc *scenario) cmdNotify(l scriptLine, args []arg) error {
	if l.name == "cancel" {
		return sc.ed.Notify(sc.ctx, "session/cancel", map[string]any{"sessionId": sc.expand("$SESSION")})
	}
	if len(args) != 2 {
		return errors.New("want METHOD JSON")
	}
	return sc.ed.Notify(sc.ctx, args[0].text, json.RawMessage(args[1].text))
}

func (sc *scenario) cmdAnswer(l scriptLine, args []arg) error {
	if len(args) < 1 || len(args) > 2 {
		return errors.New("want OPTION [FEEDBACK]")
	}
	a := answer{line: l.n, option: args[0].text}
	if len(args) == 2 {
		a.feedback = args[1].text
	}
	sc.queued = append(sc.queued, l.n)
	sc.answers <- a
	return nil
}

// cmdOn arms a command to run once the next message of a method comes
// (counting from now): an editor that reacts to what the daemon does.
func (sc *scenario) cmdOn(l scriptLine, args []arg) error {
	method, cmd, ok := strings.Cut(l.rest, " ")
	if !ok {
		return errors.New("want METHOD COMMAND...")
	}
	inner, err := parseScript(l.file, cmd)
	if err != nil || len(inner) != 1 {
		return fmt.Errorf("bad command %q: %v", cmd, err)
	}
	in := inner[0]
	in.n, in.raw = l.n, l.raw
	seen := len(sc.ed.Messages(method))
	tr := &trigger{line: l, fired: make(chan struct{}), done: make(chan struct{})}
	sc.armed = append(sc.armed, tr)
	go func() {
		defer close(tr.done)
		if _, err := sc.ed.Await(sc.ctx, method, func(json.RawMessage) bool {
			return len(sc.ed.Messages(method)) > seen
		}); err != nil {
			return
		}
		close(tr.fired)
		if err := sc.exec(in); err != nil {
			sc.report("%s\n\t%v", l.where(), err)
		}
	}()
	return nil
}

// cmdWait joins the background requests (the last one's answer is the
// result) and the triggers that fired.
func (sc *scenario) cmdWait(l scriptLine, args []arg) error {
	bg := sc.bg
	sc.bg = nil
	var errs []error
	for _, b := range bg {
		select {
		case <-b.done:
		case <-sc.ctx.Done():
			return fmt.Errorf("%s did not answer", b.line.where())
		}
		if err := sc.answered(b.line, b.result, b.err); err != nil {
			errs = append(errs, fmt.Errorf("%s: %v", b.line.where(), err))
		}
	}
	for _, tr := range sc.armed {
		select {
		case <-tr.fired:
			<-tr.done
		default:
		}
	}
	return errors.Join(errs...)
}

// cmdRestart ends the daemon (shutdown and exit over LSP, the input's
// end over ACP), which lets go of its sessions, and connects the editor to
// a new one on the same workspace, state and settings, its model replaying
// the archive file named (default: the same).
func (sc *scenario) cmdRestart(l scriptLine, args []arg) error {
	if len(args) > 1 {
		return errors.New("want [MODEL]")
	}
	if len(args) == 1 {
		if _, ok := sc.files[args[0].text]; !ok {
			return fmt.Errorf("no file %s in the archive", args[0].text)
		}
		sc.model = args[0].text
	}
	if err := sc.cmdWait(l, nil); err != nil {
		return err
	}
	if sc.dialect == "lsp" {
		if _, err := sc.ed.Shutdown(sc.ctx); err != nil {
			return fmt.Errorf("shutdown: %v", err)
		}
	} else {
		sc.ed.Disconnect()
		if _, err := sc.ed.Wait(sc.ctx); err != nil {
			return fmt.Errorf("the daemon did not stop: %v", err)
		}
	}
	sc.start()
	return nil
}

// --- expectations

// lookup finds a dotted path (an index in an array, -1 for the last) in
// a JSON value; "." is the whole value.
func lookup(raw json.RawMessage, path string) (any, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("the result %s is not JSON", raw)
	}
	if path == "." {
		return v, nil
	}
	for _, key := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[key] // absent is null, as Go's zero values compare
		case []any:
			i, err := strconv.Atoi(key)
			if i < 0 {
				i += len(x)
			}
			if err != nil || i < 0 || i >= len(x) {
				return nil, fmt.Errorf("no element %s in an array of %d: %s", key, len(x), short(x))
			}
			v = x[i]
		default:
			return nil, fmt.Errorf("%q of %s, which is no object or array", key, short(x))
		}
	}
	return v, nil
}

// shortText is a text cut for a message.
func shortText(s string) string {
	if len(s) > 2000 {
		return strconv.Quote(s[:2000]) + "…"
	}
	return strconv.Quote(s)
}

func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 400 {
		return string(b[:400]) + "…"
	}
	return string(b)
}

// asText is a value as text is compared: a string itself, anything else
// its JSON.
func asText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// compare checks got OP want, as result and agent do.
func compare(got any, op string, want *arg) error {
	need := func() error {
		if want == nil {
			return fmt.Errorf("%s needs a value", op)
		}
		return nil
	}
	if op == "empty" || op == "!empty" {
		if isZero(got) != (op == "empty") {
			return fmt.Errorf("got %s, want it %s", short(got), strings.Replace(op, "!", "not ", 1))
		}
		return nil
	}
	if err := need(); err != nil {
		return err
	}
	g := asText(got)
	switch op {
	case "==", "!=":
		var w any = want.text
		if !want.quoted || want.json {
			if err := json.Unmarshal([]byte(want.text), &w); err != nil {
				w = want.text
			}
		}
		eq := asText(toAny(got)) == asText(toAny(w)) && fmt.Sprintf("%T", got) == fmt.Sprintf("%T", w)
		if eq != (op == "==") {
			return fmt.Errorf("got %s, want %s %s", short(got), op, short(w))
		}
	case "contains", "!contains":
		if strings.Contains(g, want.text) != (op == "contains") {
			verb := map[string]string{"contains": "contain", "!contains": "not contain"}[op]
			return fmt.Errorf("got %s, want it to %s %q", shortText(g), verb, want.text)
		}
	case "prefix":
		if !strings.HasPrefix(g, want.text) {
			return fmt.Errorf("got %q, want it to begin with %q", g, want.text)
		}
	case "suffix":
		if !strings.HasSuffix(g, want.text) {
			return fmt.Errorf("got %q, want it to end with %q", g, want.text)
		}
	case "len":
		n, err := strconv.Atoi(want.text)
		if err != nil {
			return fmt.Errorf("len wants a number, not %q", want.text)
		}
		var have int
		switch x := got.(type) {
		case []any:
			have = len(x)
		case map[string]any:
			have = len(x)
		case string:
			have = len(x)
		default:
			return fmt.Errorf("len of %s, which has none", short(got))
		}
		if have != n {
			return fmt.Errorf("got %d elements, want %d: %s", have, n, short(got))
		}
	default:
		return fmt.Errorf("unknown comparison %q, want ==, !=, contains, !contains, prefix, suffix, len, empty or !empty", op)
	}
	return nil
}

func (sc *scenario) cmdResult(l scriptLine, args []arg) error {
	if len(args) < 2 || len(args) > 3 {
		return errors.New("want PATH OP [VALUE]")
	}
	if sc.result == nil {
		return errors.New("no request has answered yet")
	}
	got, err := lookup(sc.result, args[0].text)
	if err != nil {
		return err
	}
	var want *arg
	if len(args) == 3 {
		want = &args[2]
	}
	return compare(got, args[1].text, want)
}

// isZero says whether a JSON value is what Go decodes as a zero value:
// absent, null, false, 0, "" or an empty array or object.
func isZero(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case bool:
		return !x
	case float64:
		return x == 0
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

// cmdToolResult is ok and fails: the last cline/callTool result is (not)
// an error and its content holds every text.
func (sc *scenario) cmdToolResult(l scriptLine, args []arg) error {
	var r struct {
		Content string `json:"content"`
		IsError bool   `json:"isError"`
	}
	if sc.result == nil || json.Unmarshal(sc.result, &r) != nil {
		return fmt.Errorf("no tool result to check (the last answer: %s)", sc.result)
	}
	if r.IsError != (l.name == "fails") {
		return fmt.Errorf("the tool result is (isError %v) %q", r.IsError, r.Content)
	}
	for _, a := range args {
		if !strings.Contains(r.Content, a.text) {
			return fmt.Errorf("the tool result %q does not contain %q", r.Content, a.text)
		}
	}
	return nil
}

// cmdMessage makes the Nth (from 0; -1 the last) message of a method the
// server sent the result.
func (sc *scenario) cmdMessage(l scriptLine, args []arg) error {
	if len(args) != 2 {
		return errors.New("want METHOD N")
	}
	msgs := sc.ed.Messages(args[0].text)
	i, err := strconv.Atoi(args[1].text)
	if i < 0 {
		i += len(msgs)
	}
	if err != nil || i < 0 || i >= len(msgs) {
		return fmt.Errorf("no %s message %s: %d were sent", args[0].text, args[1].text, len(msgs))
	}
	sc.result = msgs[i].Params
	return nil
}

func (sc *scenario) cmdError(l scriptLine, args []arg) error {
	if sc.err == nil {
		return errors.New("the last request did not fail")
	}
	if len(args) > 0 && !args[0].quoted {
		if code, err := strconv.Atoi(args[0].text); err == nil {
			var je *jsonrpc2.Error
			if !errors.As(sc.err, &je) || int(je.Code) != code {
				return fmt.Errorf("error %v, want code %d", sc.err, code)
			}
			args = args[1:]
		}
	}
	for _, a := range args {
		if !strings.Contains(sc.err.Error(), a.text) {
			return fmt.Errorf("error %q, want it to contain %q", sc.err, a.text)
		}
	}
	return nil
}

func (sc *scenario) cmdSave(l scriptLine, args []arg) error {
	if len(args) != 2 {
		return errors.New("want NAME PATH")
	}
	v, err := lookup(sc.result, args[1].text)
	if err != nil {
		return err
	}
	sc.mu.Lock()
	sc.vars[args[0].text] = asText(v)
	sc.mu.Unlock()
	return nil
}

// cmdBuffer is buffer, which checks the editor's buffer and, over LSP,
// the daemon's mirror of it, after a round trip; and editor, which checks
// the editor's buffer alone, at once.
func (sc *scenario) cmdBuffer(l scriptLine, args []arg) error {
	if len(args) != 2 {
		return errors.New("want PATH TEXT")
	}
	uri, want := sc.uri(args[0].text), args[1].text
	if l.name == "buffer" {
		sc.ed.Sync(sc.ctx)
	}
	if got, _, ok := sc.ed.Text(uri); !ok || got != want {
		return fmt.Errorf("the editor's buffer holds %q (open: %v), want %q", got, ok, want)
	}
	if sc.dialect == "lsp" && l.name == "buffer" {
		if snap, _ := sc.ed.Server.Buffers().Get(uri); snap.Text != want {
			return fmt.Errorf("the daemon's mirror holds %q, want %q", snap.Text, want)
		}
	}
	return nil
}

// cmdDisk checks a file on disk: its whole text, or OP TEXT.
func (sc *scenario) cmdDisk(l scriptLine, args []arg) error {
	if len(args) != 2 && len(args) != 3 {
		return errors.New("want PATH TEXT or PATH OP TEXT")
	}
	b, err := os.ReadFile(sc.path(args[0].text))
	if err != nil {
		return err
	}
	if len(args) == 3 {
		if err := compare(string(b), args[1].text, &args[2]); err != nil {
			return fmt.Errorf("on disk: %v", err)
		}
		return nil
	}
	if string(b) != args[1].text {
		return fmt.Errorf("the disk holds %q, want %q", b, args[1].text)
	}
	return nil
}

func (sc *scenario) cmdExists(l scriptLine, args []arg) error {
	if len(args) != 1 {
		return errors.New("want PATH")
	}
	_, err := os.Stat(sc.path(args[0].text))
	switch {
	case err == nil && l.neg:
		return errors.New("the file exists, want none")
	case err != nil && !l.neg:
		return fmt.Errorf("want the file: %v", err)
	}
	return nil
}

func (sc *scenario) cmdPerm(l scriptLine, args []arg) error {
	if len(args) != 2 {
		return errors.New("want PATH MODE")
	}
	want, err := parseMode(args[1].text)
	if err != nil {
		return err
	}
	fi, err := os.Stat(sc.path(args[0].text))
	if err != nil {
		return err
	}
	if fi.Mode().Perm() != want {
		return fmt.Errorf("mode %v, want %v", fi.Mode().Perm(), want)
	}
	return nil
}

func (sc *scenario) cmdCount(l scriptLine, args []arg) error {
	if len(args) != 2 {
		return errors.New("want METHOD N")
	}
	n, err := strconv.Atoi(args[1].text)
	if err != nil {
		return fmt.Errorf("count wants a number, not %q", args[1].text)
	}
	if got := len(sc.ed.Messages(args[0].text)); (got == n) == l.neg {
		return fmt.Errorf("%d %s messages, want %s%d", got, args[0].text, map[bool]string{true: "other than "}[l.neg], n)
	}
	return nil
}

// holds says whether a message's params hold every text: in the raw
// JSON or in one of its strings (which the JSON escapes).
func holds(raw json.RawMessage, texts []arg) bool {
	var strs []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			strs = append(strs, x)
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	var v any
	json.Unmarshal(raw, &v)
	walk(v)
	for _, t := range texts {
		if !strings.Contains(string(raw), t.text) && !slices.ContainsFunc(strs, func(s string) bool { return strings.Contains(s, t.text) }) {
			return false
		}
	}
	return true
}

func (sc *scenario) cmdAwait(l scriptLine, args []arg) error {
	if len(args) < 1 {
		return errors.New("want METHOD [TEXT...]")
	}
	m, texts := args[0].text, args[1:]
	msg, err := sc.ed.Await(sc.ctx, m, func(p json.RawMessage) bool { return holds(p, texts) })
	if err != nil {
		var seen []string
		for _, x := range sc.ed.Messages(m) {
			seen = append(seen, string(x.Params))
		}
		return fmt.Errorf("%v; the %s messages seen:\n\t%s", err, m, strings.Join(seen, "\n\t"))
	}
	sc.result = msg.Params
	return nil
}

func (sc *scenario) cmdLast(l scriptLine, args []arg) error {
	if len(args) < 2 {
		return errors.New("want METHOD TEXT...")
	}
	msgs := sc.ed.Messages(args[0].text)
	if len(msgs) == 0 {
		return fmt.Errorf("no %s message", args[0].text)
	}
	if last := msgs[len(msgs)-1]; !holds(last.Params, args[1:]) {
		return fmt.Errorf("the last %s is %s", args[0].text, last.Params)
	}
	return nil
}

// sessionUpdates are the session/update payloads of $SESSION (of every
// session before one is made).
func (sc *scenario) sessionUpdates() []map[string]any {
	id := sc.expand("$SESSION")
	var out []map[string]any
	for _, m := range sc.ed.Messages("session/update") {
		var p struct {
			SessionID string         `json:"sessionId"`
			Update    map[string]any `json:"update"`
		}
		json.Unmarshal(m.Params, &p)
		if id == "$SESSION" || p.SessionID == id {
			out = append(out, p.Update)
		}
	}
	return out
}

func (sc *scenario) cmdUpdate(l scriptLine, args []arg) error {
	if len(args) < 1 {
		return errors.New("want KIND [TEXT...]")
	}
	kinds := map[string]int{}
	found := false
	for _, u := range sc.sessionUpdates() {
		k, _ := u["sessionUpdate"].(string)
		kinds[k]++
		if b, _ := json.Marshal(u); k == args[0].text && holds(b, args[1:]) {
			found = true
		}
	}
	switch {
	case found && l.neg:
		return fmt.Errorf("a %s update was sent, want none (updates by kind: %v)", args[0].text, kinds)
	case !found && !l.neg:
		return fmt.Errorf("no such %s update (updates by kind: %v)", args[0].text, kinds)
	}
	return nil
}

func (sc *scenario) cmdAgent(l scriptLine, args []arg) error {
	if len(args) != 2 {
		return errors.New("want OP TEXT")
	}
	return compare(agentText(sc.sessionUpdates()), args[0].text, &args[1])
}

// cmdHistory looks at the history the session saved: the messages it
// resumes with (len), its records (contains), or what it resumes as
// (session.Resumed: Title, Plan, Mode...) at a path.
func (sc *scenario) cmdHistory(l scriptLine, args []arg) error {
	if len(args) != 2 && len(args) != 3 {
		return errors.New("want len N, contains TEXT or PATH OP VALUE")
	}
	dir := sc.state
	if sc.dialect == "acp" {
		dir = session.DefaultStateDir(func(k string) string {
			if k == "XDG_STATE_HOME" {
				return sc.state
			}
			return ""
		})
	}
	st, err := session.NewStore(dir)
	if err != nil {
		return err
	}
	meta, recs, err := st.Load(sc.expand("$SESSION"))
	if err != nil {
		return err
	}
	switch {
	case len(args) == 2 && args[0].text == "len":
		return compare(toAny(session.Resume(meta, recs).History), "len", &args[1])
	case len(args) == 2 && args[0].text == "contains":
		return compare(toAny(recs), "contains", &args[1])
	case len(args) == 3:
		b, _ := json.Marshal(session.Resume(meta, recs))
		got, err := lookup(b, args[0].text)
		if err != nil {
			return err
		}
		return compare(got, args[1].text, &args[2])
	}
	return errors.New("want len N, contains TEXT or PATH OP VALUE")
}

// toAny is v as JSON decodes it.
func toAny(v any) any {
	b, _ := json.Marshal(v)
	var out any
	json.Unmarshal(b, &out)
	if out == nil {
		out = []any{}
	}
	return out
}

// TestScenarioScript checks the script language itself: how a line
// splits into arguments, and that a mistake in a script is named by its
// file and line before anything runs.
func TestScenarioScript(t *testing.T) {
	t.Parallel()
	files := map[string]string{"text/a": "from the archive\n"}
	args, err := splitArgs(`a.txt "x\ty" @text/a 0:0-1:2 {"k": [1, "two"]}`, files)
	if err != nil {
		t.Fatal(err)
	}
	want := []arg{{text: "a.txt"}, {text: "x\ty", quoted: true}, {text: "from the archive\n", quoted: true},
		{text: "0:0-1:2"}, {text: `{"k": [1, "two"]}`, quoted: true, json: true}}
	if !slices.Equal(args, want) {
		t.Errorf("args = %+v, want %+v", args, want)
	}
	for _, bad := range []string{`"open`, `@text/missing`, `{"k":`} {
		if _, err := splitArgs(bad, files); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	if r, err := parseRange("2:15-2:16"); err != nil || r != rng(2, 15, 2, 16) {
		t.Errorf("parseRange = %v, %v", r, err)
	}
	if _, err := parseRange("2:15"); err == nil {
		t.Error("a range without its end was taken")
	}

	lines, err := parseScript("s.txtar", "# a comment\n\n[acp] ! prompt& hi\nsettings {}\n")
	if err != nil || len(lines) != 2 {
		t.Fatalf("parseScript = %+v, %v", lines, err)
	}
	if l := lines[0]; l.n != 3 || l.dialect != "acp" || !l.neg || !l.bg || l.name != "prompt" || l.rest != "hi" {
		t.Errorf("line = %+v", l)
	}
	for script, msg := range map[string]string{
		"sync\nfrobnicate x\n": `s.txtar:2: unknown command "frobnicate"`,
		"[vim] sync\n":         "s.txtar:1: unknown condition [vim]",
		"dialects lsp dap\n":   `s.txtar:1: unknown dialect "dap"`,
	} {
		if _, err := parseScript("s.txtar", script); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: err = %v, want %q", script, err, msg)
		}
	}

	raw := json.RawMessage(`{"checkpoints": [{"id": "a"}, {"id": "b", "files": ["x"]}]}`)
	for path, want := range map[string]any{"checkpoints.-1.id": "b", "checkpoints.0.files": nil, "checkpoints.1.files.0": "x"} {
		if got, err := lookup(raw, path); err != nil || got != want {
			t.Errorf("lookup %s = %v, %v, want %v", path, got, err, want)
		}
	}
	for _, path := range []string{"checkpoints.2", "checkpoints.0.id.x", "checkpoints.first"} {
		if _, err := lookup(raw, path); err == nil {
			t.Errorf("lookup %s: no error", path)
		}
	}

	for _, c := range []struct {
		got  any
		op   string
		want *arg
		ok   bool
	}{
		{2.0, "==", &arg{text: "2"}, true},
		{"2", "==", &arg{text: "2"}, false},
		{"2", "==", &arg{text: "2", quoted: true}, true},
		{map[string]any{"a": []any{}}, "==", &arg{text: `{"a": []}`, quoted: true, json: true}, true},
		{nil, "empty", nil, true},
		{[]any{}, "empty", nil, true},
		{"x", "!empty", nil, true},
		{[]any{1.0, 2.0}, "len", &arg{text: "2"}, true},
		{"hello world", "contains", &arg{text: "lo w"}, true},
		{"hello", "!contains", &arg{text: "lo"}, false},
		{"hello", "prefix", &arg{text: "he"}, true},
		{"hello", "suffix", &arg{text: "he"}, false},
		{"hello", "like", &arg{text: "he"}, false},
	} {
		if err := compare(c.got, c.op, c.want); (err == nil) != c.ok {
			t.Errorf("compare(%v %s %+v) = %v, want ok: %v", c.got, c.op, c.want, err, c.ok)
		}
	}
}
