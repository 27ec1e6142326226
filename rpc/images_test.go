package rpc_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/rpc/rpctest"
)

// TestPromptImagesReachTheModel: an image block of session/prompt reaches
// the provider's request as an image; a bad one, or one for a model
// without vision, is refused naming the field.
func TestPromptImagesReachTheModel(t *testing.T) {
	ctx := testCtx(t)
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, `data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"a cat"},"finish_reason":"stop"}]}`+"\n\n")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
	for _, c := range []struct {
		model string
		block map[string]any
		want  string // "" means the model got it
	}{
		{"gpt-4o", map[string]any{"type": "image", "mimeType": "image/png", "data": png}, ""},
		{"gpt-4o", map[string]any{"type": "image", "mimeType": "image/tiff", "data": png}, "prompt[1].mimeType"},
		{"gpt-4o", map[string]any{"type": "image", "mimeType": "image/png", "data": "not base64!"}, "prompt[1].data"},
		{"gpt-3.5-turbo", map[string]any{"type": "image", "mimeType": "image/png", "data": png}, "does not take images"},
	} {
		ed := rpctest.New(t, rpc.Options{Getenv: func(k string) string {
			if k == "TEST_API_KEY" {
				return "sk-test"
			}
			return ""
		}})
		root := t.TempDir()
		ed.Initialize(ctx, root, map[string]any{"initializationOptions": map[string]any{
			"provider": map[string]any{"name": "openai", "model": c.model, "baseUrl": srv.URL + "/v1", "apiKeyEnv": "TEST_API_KEY"},
			"stateDir": t.TempDir()}})
		id := newSessionIn(t, ctx, ed, root)
		mu.Lock()
		before := len(bodies)
		mu.Unlock()
		err := ed.Call(ctx, "session/prompt", map[string]any{"sessionId": id, "prompt": []any{
			map[string]any{"type": "text", "text": "what is this?"}, c.block}}, nil)
		mu.Lock()
		got := bodies[before:]
		mu.Unlock()
		if c.want != "" {
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s %v: err = %v, want one naming %q", c.model, c.block["mimeType"], err, c.want)
			}
			if len(got) != 0 {
				t.Errorf("a refused prompt reached the model")
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || !strings.Contains(got[0], `"image_url"`) || !strings.Contains(got[0], "data:image/png;base64,"+png) {
			t.Errorf("the request does not carry the image: %v", got)
		}
	}
}
