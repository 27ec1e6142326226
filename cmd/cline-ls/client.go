package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/cline-ls/cline-ls/diff"
	"github.com/cline-ls/cline-ls/internal/jsonrpcclient"
	"github.com/cline-ls/cline-ls/internal/termsafe"
	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/settings"
	"github.com/cline-ls/cline-ls/wire"
	"github.com/cline-ls/cline-ls/workspace"
)

// approvalPolicy is how the headless client answers approval requests.
type approvalPolicy string

const (
	approveAsk   approvalPolicy = "ask"   // ask on the terminal
	approveAllow approvalPolicy = "allow" // allow once, printing what was allowed
	approveDeny  approvalPolicy = "deny"  // reject
)

// client is a small editor-like client of the real server, run in the same
// process over a pipe: it prints the session's events, answers approvals,
// and keeps buffers it opened so edits to them land in memory as they
// would in an editor.
type client struct {
	out      io.Writer
	json     bool // print events as JSON lines
	approve  approvalPolicy
	terminal *bufio.Reader // answers for approveAsk
	// interrupt ends a wait for the terminal (Ctrl-C); nil for none.
	interrupt context.Context

	conn      *jsonrpcclient.Client
	srv       *rpc.Server
	served    chan int
	approving sync.WaitGroup // approvals being answered

	mu        sync.Mutex
	buffers   map[string]*buffer // by URI
	lastKind  string             // to break lines between streamed chunks
	previewed map[string]bool    // tool calls whose diff an approval showed
	diffed    map[string]bool    // tool calls whose applied diff was printed
}

type buffer struct {
	version int32
	text    string
}

// The shapes the client sends, as an editor would, and the parts it reads
// of what the server sends. The daemon's own types for them are rpc's
// and not exported; these declare only what this client uses, members
// in sorted order as the maps they replaced wrote them. What the client
// reads stays lenient: a member it does not print never fails a decode.

// initializeParams is initialize's params: a client that edits buffers
// in place, with versioned document changes, approvals and diffs.
type initializeParams struct {
	Capabilities          clientCapabilities `json:"capabilities"`
	ClientInfo            clientInfo         `json:"clientInfo"`
	InitializationOptions settings.Settings  `json:"initializationOptions"`
	ProcessID             int                `json:"processId"`
	WorkspaceFolders      []workspaceFolder  `json:"workspaceFolders"`
}

type clientCapabilities struct {
	Experimental experimentalCapabilities    `json:"experimental"`
	General      generalCapabilities         `json:"general"`
	Workspace    workspaceClientCapabilities `json:"workspace"`
}

type experimentalCapabilities struct {
	Cline clineCapabilities `json:"cline"`
}

// clineCapabilities are the features of PROTOCOL.md §11 the client has.
type clineCapabilities struct {
	Approvals bool `json:"approvals"`
	Diffs     bool `json:"diffs"`
}

type generalCapabilities struct {
	PositionEncodings []string `json:"positionEncodings"`
}

type workspaceClientCapabilities struct {
	ApplyEdit     bool                      `json:"applyEdit"`
	WorkspaceEdit workspaceEditCapabilities `json:"workspaceEdit"`
}

type workspaceEditCapabilities struct {
	DocumentChanges bool `json:"documentChanges"`
}

type clientInfo struct {
	Name string `json:"name"`
}

type workspaceFolder struct {
	Name string `json:"name"`
	URI  string `json:"uri"`
}

// didOpenParams is textDocument/didOpen's params.
type didOpenParams struct {
	TextDocument textDocumentItem `json:"textDocument"`
}

type textDocumentItem struct {
	LanguageID string `json:"languageId"`
	Text       string `json:"text"`
	URI        string `json:"uri"`
	Version    int32  `json:"version"`
}

// didChangeParams is textDocument/didChange's params; the client sends
// a buffer's whole new text.
type didChangeParams struct {
	ContentChanges []contentChange   `json:"contentChanges"`
	TextDocument   versionedDocument `json:"textDocument"`
}

type contentChange struct {
	Text string `json:"text"`
}

type versionedDocument struct {
	URI     string `json:"uri"`
	Version int32  `json:"version"`
}

// applyEditParams is what the client reads of workspace/applyEdit's
// params: the daemon sends versioned document changes.
type applyEditParams struct {
	Edit workspaceEdit `json:"edit"`
}

type workspaceEdit struct {
	DocumentChanges []textDocumentEdit `json:"documentChanges"`
}

type textDocumentEdit struct {
	Edits        []diff.Edit       `json:"edits"`
	TextDocument versionedDocument `json:"textDocument"`
}

// applyEditResult is the client's answer to workspace/applyEdit.
type applyEditResult struct {
	Applied       bool   `json:"applied"`
	FailureReason string `json:"failureReason,omitempty"`
}

// newSessionParams is session/new's params, with the mode to start in.
type newSessionParams struct {
	CWD  string `json:"cwd"`
	Mode string `json:"mode"`
}

// setModeParams is session/set_mode's params.
type setModeParams struct {
	ModeID    string `json:"modeId"`
	SessionID string `json:"sessionId"`
}

// promptParams is session/prompt's params.
type promptParams struct {
	Prompt    []wire.ContentBlock `json:"prompt"`
	SessionID string              `json:"sessionId"`
}

// sessionParams is the params of a notification that names only a
// session (session/cancel).
type sessionParams struct {
	SessionID string `json:"sessionId"`
}

// updateView is what the client prints of a session/update, of any
// kind: wire.SessionNotification would refuse a kind it does not know.
type updateView struct {
	Update updateFields `json:"update"`
}

// updateFields are the members of every kind of update the client prints.
type updateFields struct {
	Kind    string           `json:"sessionUpdate"`
	Content json.RawMessage  `json:"content"`
	Title   string           `json:"title"`
	Status  string           `json:"status"`
	ID      string           `json:"toolCallId"`
	ModeID  string           `json:"currentModeId"`
	Entries []wire.PlanEntry `json:"entries"`
	Input   int              `json:"inputTokens"`
	Output  int              `json:"outputTokens"`
	Context wire.ContextUse  `json:"context"`
	Before  int              `json:"before"`
	After   int              `json:"after"`
}

// textItemView is what the client prints of a tool call's content item:
// its text, if it is text.
type textItemView struct {
	Content wire.TextBlock `json:"content"`
}

// startClient starts a server and connects a client to it.
func startClient(out io.Writer, logger *slog.Logger, getenv func(string) string) *client {
	srvEnd, cliEnd := net.Pipe()
	c := &client{out: out, approve: approveAllow, buffers: make(map[string]*buffer),
		previewed: make(map[string]bool), diffed: make(map[string]bool), served: make(chan int, 1)}
	c.srv = rpc.NewServer(rpc.Options{Logger: logger, Version: version(), Getenv: getenv})
	go func() {
		code, _ := c.srv.Serve(context.Background(), srvEnd, srvEnd)
		srvEnd.Close()
		c.served <- code
	}()
	// Updates are printed on the read loop, in the order they come.
	c.conn = jsonrpcclient.New(cliEnd, cliEnd, jsonrpcclient.Options{Observe: c.observe, Discard: true})
	c.conn.Handle("workspace/applyEdit", c.applyEdit)
	return c
}

// initialize sends initialize for root with opts as
// initializationOptions.
func (c *client) initialize(ctx context.Context, root string, opts settings.Settings) error {
	params := initializeParams{
		Capabilities: clientCapabilities{
			Experimental: experimentalCapabilities{Cline: clineCapabilities{Approvals: true, Diffs: true}},
			General:      generalCapabilities{PositionEncodings: []string{"utf-8", "utf-16"}},
			Workspace:    workspaceClientCapabilities{ApplyEdit: true, WorkspaceEdit: workspaceEditCapabilities{DocumentChanges: true}},
		},
		ClientInfo:            clientInfo{Name: "cline-ls " + "headless"},
		InitializationOptions: opts,
		ProcessID:             os.Getpid(),
		WorkspaceFolders:      []workspaceFolder{{Name: "workspace", URI: workspace.PathToURI(root)}},
	}
	if err := c.conn.Call(ctx, "initialize", params, nil); err != nil {
		return err
	}
	return c.conn.Notify(ctx, "initialized", wire.Empty{})
}

// open opens a file as an editor buffer.
func (c *client) open(ctx context.Context, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	uri := workspace.PathToURI(path)
	c.mu.Lock()
	c.buffers[uri] = &buffer{version: 1, text: string(data)}
	c.mu.Unlock()
	return c.conn.Notify(ctx, "textDocument/didOpen", didOpenParams{
		TextDocument: textDocumentItem{LanguageID: "go", Text: string(data), URI: uri, Version: 1},
	})
}

// buffer returns an open buffer's text.
func (c *client) bufferText(path string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if b := c.buffers[workspace.PathToURI(path)]; b != nil {
		return b.text
	}
	return ""
}

// call makes a request.
func (c *client) call(ctx context.Context, method string, params, result any) error {
	return c.conn.Call(ctx, method, params, result)
}

// close shuts the server down and returns its exit code.
func (c *client) close(ctx context.Context) int {
	c.conn.Call(ctx, "shutdown", nil, nil)
	c.conn.Notify(ctx, "exit", nil)
	code := <-c.served
	c.conn.Close()
	c.approving.Wait()
	return code
}

// observe prints what the server sends as it comes. An approval request
// (a notification, answered by cline/approvalResponse) is answered off
// the read loop, which must stay free meanwhile; requests are answered by
// the handlers installed in startClient.
func (c *client) observe(m jsonrpcclient.Message) {
	switch m.Method {
	case "cline/approvalRequest":
		c.approving.Go(func() { c.answerApproval(context.Background(), m.Params) })
	case "session/update":
		c.printUpdate(m.Params)
	case "cline/diff":
		c.printDiff(m.Params)
	case "window/logMessage", "window/showMessage":
		var msg wire.MessageParams
		json.Unmarshal(m.Params, &msg)
		c.println("log", termsafe.Text(msg.Message))
	}
}

// printUpdate prints one session/update readably, or as a JSON line.
// Everything in it may come from the model, a file or a command, so
// every field is printed through termsafe: Line for one-line fields,
// Text for bodies.
func (c *client) printUpdate(params json.RawMessage) {
	if c.json {
		c.printJSON(params)
		return
	}
	var p updateView
	json.Unmarshal(params, &p)
	u := p.Update
	switch u.Kind {
	case "agent_message_chunk", "agent_thought_chunk", "user_message_chunk":
		var block wire.TextBlock
		json.Unmarshal(u.Content, &block)
		c.stream(u.Kind, termsafe.Text(block.Text))
	case "tool_call":
		c.println("tool", termsafe.Line(u.Title)+" "+termsafe.Line(u.ID))
	case "tool_call_update":
		if u.Status == "completed" || u.Status == "failed" {
			c.mu.Lock()
			diffed := c.diffed[u.ID]
			c.mu.Unlock()
			if diffed { // its result is the diff just printed
				c.println("tool", termsafe.Line(u.ID)+" "+termsafe.Line(u.Status))
				break
			}
			var items []textItemView
			json.Unmarshal(u.Content, &items)
			var text string
			if len(items) > 0 {
				text = firstLines(items[0].Content.Text, 6)
			}
			c.println("tool", termsafe.Line(u.ID)+" "+termsafe.Line(u.Status)+"\n"+indent(termsafe.Text(text)))
		}
	case "plan":
		var b strings.Builder
		for _, e := range u.Entries {
			fmt.Fprintf(&b, "[%s] %s\n", termsafe.Line(string(e.Status)), termsafe.Line(e.Content))
		}
		c.println("plan", strings.TrimRight(b.String(), "\n"))
	case "current_mode_update":
		c.println("mode", termsafe.Line(u.ModeID))
	case "usage_update":
		c.println("usage", fmt.Sprintf("%d tokens in, %d out; context %d of %d", u.Input, u.Output, u.Context.Used, u.Context.Size))
	case "compaction":
		c.println("context", fmt.Sprintf("compacted from about %d to %d tokens", u.Before, u.After))
	}
}

// printDiff prints an applied edit's diff, or only its size when the
// approval already showed the same change, so each diff is printed once.
func (c *client) printDiff(params json.RawMessage) {
	var d wire.DiffParams
	json.Unmarshal(params, &d)
	c.mu.Lock()
	previewed := c.previewed[d.ToolCallID]
	c.diffed[d.ToolCallID] = d.ToolCallID != ""
	c.mu.Unlock()
	if previewed {
		name := d.URI
		if p, err := workspace.URIToPath(d.URI); err == nil {
			name = filepath.Base(p)
		}
		c.println("diff", fmt.Sprintf("applied to %s as approved (+%d -%d)", termsafe.Line(name), d.Added, d.Removed))
		return
	}
	c.println("diff", "\n"+indent(termsafe.Text(d.Diff)))
}

// stream prints streamed text as it arrives, starting a labelled line when
// the kind of text changes.
func (c *client) stream(kind, text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lastKind != kind {
		label := map[string]string{"agent_message_chunk": "agent", "agent_thought_chunk": "thinking", "user_message_chunk": "user"}[kind]
		if c.lastKind != "" {
			fmt.Fprintln(c.out)
		}
		fmt.Fprintf(c.out, "%-8s ", label+":")
		c.lastKind = kind
	}
	fmt.Fprint(c.out, text)
}

// printJSON prints one message as a JSON line, with what a terminal
// would act on written as \u escapes (the same value to a JSON reader).
func (c *client) printJSON(params json.RawMessage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.out.Write(append(termsafe.JSON(params), '\n'))
}

// println prints a labelled line. text must have been made safe for the
// terminal (termsafe) by the caller, which knows which of its parts are
// one-line fields.
func (c *client) println(label, text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lastKind != "" {
		fmt.Fprintln(c.out)
		c.lastKind = ""
	}
	if c.json {
		return
	}
	fmt.Fprintf(c.out, "%-8s %s\n", label+":", text)
}

func (c *client) answerApproval(ctx context.Context, params json.RawMessage) {
	var req wire.ApprovalRequestParams
	json.Unmarshal(params, &req)
	// What is approved is shown exactly: a command with nothing hidden
	// (a carriage return cannot draw "ls" over "touch x"), and a note
	// when it holds what the terminal would not have shown.
	detail := termsafe.Text(req.Diff)
	if req.Command != "" {
		detail = "$ " + termsafe.Exact(req.Command)
		if !termsafe.Safe(req.Command) {
			detail += "\n(the command holds characters a terminal does not show; they are written above as \\x.., \\u.., \\t)"
		}
	}
	c.println("approve?", termsafe.Line(req.ToolCall.Title)+"\n"+indent(detail))
	if req.Diff != "" {
		c.mu.Lock()
		c.previewed[req.ToolCall.ToolCallID] = true
		c.mu.Unlock()
	}
	option, feedback := "allow_once", ""
	switch c.approve {
	case approveDeny:
		option = "reject_once"
		c.println("approval", "rejected (--approve=deny)")
	case approveAsk:
		c.mu.Lock()
		fmt.Fprint(c.out, "allow? [y/N/a(lways)] ")
		c.mu.Unlock()
		line, ok := c.readLine()
		if !ok {
			option = "reject_once"
			break
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
		case "a", "always":
			option = "allow_always"
		default:
			option = "reject_once"
			c.mu.Lock()
			fmt.Fprint(c.out, "rejected; tell the agent why or what to do instead (Enter for nothing): ")
			c.mu.Unlock()
			line, _ := c.readLine()
			feedback = strings.TrimSpace(line)
		}
	default:
		c.println("approval", "allowed")
	}
	resp := wire.ApprovalResponseParams{ApprovalID: req.ApprovalID, Feedback: feedback,
		Outcome: &wire.PermissionOutcome{Outcome: wire.OutcomeSelected, OptionID: option}}
	c.conn.Call(ctx, "cline/approvalResponse", resp, nil)
}

// readLine reads an answer from the terminal, or gives up (false) on an
// interrupt: the read itself cannot be stopped, and the turn is ending.
func (c *client) readLine() (string, bool) {
	if c.interrupt == nil {
		line, _ := c.terminal.ReadString('\n')
		return line, true
	}
	got := make(chan string, 1)
	go func() {
		line, _ := c.terminal.ReadString('\n')
		got <- line
	}()
	select {
	case line := <-got:
		return line, true
	case <-c.interrupt.Done():
		return "", false
	}
}

// applyEdit applies a workspace edit to the client's buffers, as an editor
// does, and reports the change back with didChange.
func (c *client) applyEdit(ctx context.Context, params json.RawMessage) (any, error) {
	var p applyEditParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, err
	}
	enc := c.srv.Encoding()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, dc := range p.Edit.DocumentChanges {
		b := c.buffers[dc.TextDocument.URI]
		if b == nil || b.version != dc.TextDocument.Version {
			return applyEditResult{FailureReason: "stale or unknown document"}, nil
		}
		text, err := diff.ApplyEdits(b.text, dc.Edits, enc)
		if err != nil {
			return applyEditResult{FailureReason: err.Error()}, nil
		}
		b.text = text
		b.version++
		c.conn.Notify(ctx, "textDocument/didChange", didChangeParams{
			ContentChanges: []contentChange{{Text: text}},
			TextDocument:   versionedDocument{URI: dc.TextDocument.URI, Version: b.version},
		})
	}
	return applyEditResult{Applied: true}, nil
}

// errText is an error as exec and demo print it: its message may carry
// a model's or a server's text.
func errText(err error) string { return termsafe.Text(err.Error()) }

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = append(lines[:n], "…")
	}
	return strings.Join(lines, "\n")
}

func indent(s string) string {
	if s == "" {
		return ""
	}
	return "         " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n         ")
}
