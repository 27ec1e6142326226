package rpc

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/prompt"
	"github.com/cline-ls/cline-ls/provider"
	"github.com/cline-ls/cline-ls/session"
	"github.com/cline-ls/cline-ls/settings"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/tools/mcpbridge"
	"github.com/cline-ls/cline-ls/wire"
	"github.com/cline-ls/cline-ls/workspace"
)

// promptParams are session/prompt's. The blocks stay raw until their
// type says which wire.ContentBlock each is.
type promptParams struct {
	SessionID string            `json:"sessionId"`
	Prompt    []json.RawMessage `json:"prompt"`
}

// blockType is what a content block says it is.
type blockType struct {
	Type string `json:"type"`
}

// promptContent turns a prompt's content blocks into the text the model
// reads and the images it sees.
func promptContent(blocks []json.RawMessage) (string, []provider.Image, error) {
	var b strings.Builder
	var images []provider.Image
	for i, raw := range blocks {
		at := fmt.Sprintf("prompt[%d]", i)
		var t blockType
		if err := json.Unmarshal(raw, &t); err != nil {
			return "", nil, paramError(err, at)
		}
		switch t.Type {
		case "text", "resource_link", "resource", "image":
		default:
			return "", nil, invalidParams("%s.type: %q is not supported (text, resource_link, resource, image)", at, t.Type)
		}
		block, err := wire.DecodeContentBlock(raw)
		if err != nil {
			return "", nil, paramError(err, at)
		}
		switch c := block.(type) {
		case wire.TextBlock:
			b.WriteString(c.Text)
		case wire.ResourceLinkBlock:
			b.WriteString(prompt.FileLink(c.URI))
		case wire.ResourceBlock:
			if c.Resource != (wire.EmbeddedResource{}) {
				b.WriteString(prompt.FileBlock(c.Resource.URI, c.Resource.Text))
			}
		case wire.ImageBlock:
			if !slices.Contains(tools.ImageTypes, c.MimeType) {
				return "", nil, invalidParams("%s.mimeType: must be one of %s, got %q", at, strings.Join(tools.ImageTypes, ", "), c.MimeType)
			}
			n := base64.StdEncoding.DecodedLen(len(c.Data))
			if _, err := base64.StdEncoding.DecodeString(c.Data); err != nil || c.Data == "" {
				return "", nil, invalidParams("%s.data: must be the image in standard base64", at)
			}
			if n > tools.MaxImageBytes {
				return "", nil, invalidParams("%s.data: the image is %d KiB, over the %d MiB a prompt image may be", at, n>>10, tools.MaxImageBytes>>20)
			}
			images = append(images, provider.Image{MIMEType: c.MimeType, Data: c.Data})
		}
	}
	if strings.TrimSpace(b.String()) == "" && len(images) == 0 {
		return "", nil, invalidParams("prompt: empty")
	}
	return b.String(), images, nil
}

// turns runs the turns of the connection's sessions: session/prompt,
// a stock client's cline.prompt, cline/compact. What it needs of the rest
// of the server are the functions below, given by newTurns.
type turns struct {
	sess     *sessions
	settings func() settings.Settings
	// scope is the request's context, which $/cancelRequest cancels.
	scope func(ctx context.Context, id jsonrpc2.ID) (work context.Context, release func())
	// command runs an ACP slash command ("/undo"); ok is false for a
	// prompt that is the model's.
	command func(ctx context.Context, ls *liveSession, text string) (res any, ok bool, err error)
	// expand gives an MCP prompt command its server's text.
	expand func(ctx context.Context, ls *liveSession, text string) (string, error)
	// progress reports a turn through $/progress; end ends the report.
	progress func(ctx context.Context, sessionID, title string, cancel context.CancelFunc) (end func(stop string, err error))
	// ended is closed when the connection ends.
	ended      func() <-chan struct{}
	afterReply func(reqID jsonrpc2.ID, fn func(context.Context))
	redact     func(string) string
	show       func(typ wire.MessageType, msg string)
	// canShowDocument reports whether the client has window/showDocument.
	canShowDocument func() bool
	showDocument    func(ctx context.Context, path string, takeFocus bool) error
	writeShown      func(folder, name string, data []byte) (string, error)
	stateDir        func() string
	log             *slog.Logger
}

// newTurns makes the connection's turns part from the server's parts.
func newTurns(s *Server) *turns {
	return &turns{sess: s.sess, settings: s.CurrentSettings, scope: s.requestScope,
		command: func(ctx context.Context, ls *liveSession, text string) (any, bool, error) {
			return s.acpcfg.acpCommand(ctx, ls, text)
		},
		expand: func(ctx context.Context, ls *liveSession, text string) (string, error) {
			return s.mcp.PromptText(ctx, mcpOf(ls), text)
		},
		progress: func(ctx context.Context, sessionID, title string, cancel context.CancelFunc) func(stop string, err error) {
			return s.client().BeginTurn(ctx, sessionID, title, cancel)
		},
		ended: s.endOfConnection, afterReply: s.afterReply,
		redact: s.redact, show: s.showMessage,
		showDocument: func(ctx context.Context, path string, takeFocus bool) error {
			return showDocument(ctx, s.call, path, takeFocus)
		},
		writeShown: func(folder, name string, data []byte) (string, error) {
			return workspace.WriteShownFile(s.stateDir(), folder, name, data)
		},
		stateDir: s.stateDir, log: s.log,
		canShowDocument: func() bool {
			s.mu.Lock()
			defer s.mu.Unlock()
			return s.caps.showDocument
		}}
}

// servePrompt serves session/prompt. It runs until the turn ends, so it
// releases the read loop first.
func (t *turns) servePrompt(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	raw := req.Params()
	var p promptParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if err := required("sessionId", p.SessionID); err != nil {
		return nil, err
	}
	text, images, err := promptContent(p.Prompt)
	if err != nil {
		return nil, err
	}
	if len(images) > 0 {
		if pr := t.settings().Provider; pr != nil && !provider.SeesImages(pr.Name, pr.Model) {
			return nil, invalidParams("prompt: the model %s/%s does not take images; describe the image in text or choose a model with vision", pr.Name, pr.Model)
		}
	}
	ls, err := t.sess.get(p.SessionID)
	if err != nil {
		return nil, err
	}
	jsonrpc2.Async(ctx)
	work, release := t.scope(ctx, req.ID()) // $/cancel_request cancels the turn
	defer release()
	if res, ok, err := t.command(work, ls, text); ok {
		return res, err
	}
	return t.run(work, ls, text, images)
}

// run runs one turn of ls. The connection ending (stdin closed, exit)
// cancels it at once, before anything else is torn down.
func (t *turns) run(ctx context.Context, ls *liveSession, text string, images []provider.Image) (wire.PromptResult, error) {
	if mcpbridge.IsPromptCommand(text) {
		expanded, err := t.expand(ctx, ls, text)
		if err != nil {
			return wire.PromptResult{}, invalidParams("prompt: %s", err.Error())
		}
		text = expanded
	}
	done, ok := t.sess.BeginTurn(ls)
	if !ok {
		return wire.PromptResult{}, jsonrpc2.Errorf(jsonrpc2.InvalidRequest, "invalid request: the connection is closing")
	}
	defer done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-t.ended():
			cancel()
		case <-ctx.Done():
		}
	}()
	end := t.progress(ctx, ls.ID(), tools.ShortTitle(t.redact(prompt.UserWords(text))), cancel)
	stop, err := ls.PromptWith(ctx, text, images)
	end(string(stop), err)
	if errors.Is(err, session.ErrBusy) {
		return wire.PromptResult{}, invalidParams("sessionId: %v", err)
	}
	if err != nil {
		return wire.PromptResult{}, jsonrpc2.Errorf(jsonrpc2.InternalError, "%s", t.redact(err.Error()))
	}
	return wire.PromptResult{StopReason: string(stop)}, nil
}

// connDone is closed when the connection has ended.
func (s *Server) connDone() <-chan struct{} {
	if s.conn == nil {
		return nil
	}
	return s.conn.Done()
}

// promptCommand serves the cline.prompt command. A stock client's
// workspace/executeCommand blocks its editor until answered (eglot's
// does, and its didChange timer cannot run meanwhile), so the command
// answers at once with the session id and the turn runs on its own: it
// reports through $/progress (the agent's text as report messages) and
// window/logMessage, and its end through the progress end and a
// window/showMessage naming the stop reason, with the answer (turnEnded).
func (t *turns) promptCommand(reqID jsonrpc2.ID, id, mode, text string) (any, error) {
	if strings.TrimSpace(text) == "" {
		return nil, invalidParams("arguments[0].text: required")
	}
	if id == "" {
		res, err := t.sess.newSession("", mode, nil)
		if err != nil {
			return nil, err
		}
		id = res.SessionID
	}
	ls, err := t.sess.get(id)
	if err != nil {
		return nil, err
	}
	if ls.Running() {
		return nil, invalidParams("arguments[0].sessionId: %v", session.ErrBusy)
	}
	// The turn starts once this answer is on its way, so the client reads
	// it before the turn's first request (a progress token, an approval):
	// eglot, blocked in its executeCommand, may not serve a request that
	// arrives first.
	t.afterReply(reqID, func(ctx context.Context) {
		done := ls.recordTurn()
		res, err := t.run(ctx, ls, text, nil)
		transcript, answer := done()
		switch {
		case err != nil:
			t.show(wire.MessageError, "cline-ls: the turn failed: "+err.Error())
		default:
			t.turnEnded(ctx, id, text, res.StopReason, transcript, answer)
		}
	})
	return wire.SessionIDResult{SessionID: id}, nil
}
