package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/internal/mcptest"
)

// signInBrowser is the terminal a user reads "cline-ls mcp login" on and
// the browser they open its URL in: every sign-in URL written to it is
// followed as a browser would, the redirect reaching the command's
// loopback listener.
type signInBrowser struct {
	t    *testing.T
	mu   sync.Mutex
	text strings.Builder
	wg   sync.WaitGroup
}

var signInURL = regexp.MustCompile(`\n  (http://\S+/authorize\?\S+)\n`)

func (b *signInBrowser) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	before := len(signInURL.FindAllStringSubmatch(b.text.String(), -1))
	b.text.Write(p)
	all := signInURL.FindAllStringSubmatch(b.text.String(), -1)
	for _, m := range all[before:] {
		u := m[1]
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if page, err := mcptest.FollowSignIn(ctx, u); err != nil || !strings.Contains(page, "Signed in to secure") {
				b.t.Errorf("the page the browser shows at the end of the sign-in: %v: %q", err, page)
			}
		}()
	}
	return len(p), nil
}

// TestMCPLoginFromTheTerminal: "cline-ls mcp login" signs in to a server
// behind OAuth (discovery, dynamic registration, PKCE) through the
// browser the user opens its URL in; the tokens are kept 0600 under the
// state folder, later commands (other processes, as the daemon is) use
// them without a sign-in, and an expired token is refreshed, not signed
// in again. Before the login a call says how to sign in.
func TestMCPLoginFromTheTerminal(t *testing.T) {
	srv := mcptest.NewOAuthServer(t)
	cfg, state := t.TempDir(), t.TempDir()
	b, _ := json.Marshal(map[string]any{"mcpServers": []any{map[string]any{"name": "secure", "type": "http", "url": srv.URL, "headers": []any{}}}})
	os.MkdirAll(filepath.Join(cfg, "cline-ls"), 0o700)
	if err := os.WriteFile(filepath.Join(cfg, "cline-ls", "config.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		switch k {
		case "XDG_CONFIG_HOME":
			return cfg
		case "XDG_STATE_HOME":
			return state
		}
		return os.Getenv(k)
	}
	run := func(stderr io.Writer, args ...string) (int, string) {
		var out strings.Builder
		code := mcpCmd(args, &out, stderr, getenv)
		return code, out.String()
	}

	var errs strings.Builder
	if code, _ := run(&errs, "call", "secure", "whoami"); code != 1 || !strings.Contains(errs.String(), "run: cline-ls mcp login secure") {
		t.Errorf("a call before signing in: %d %q, want it to say how to sign in", code, errs.String())
	}

	browser := &signInBrowser{t: t}
	code, out := run(browser, "login", "secure")
	browser.wg.Wait()
	if code != 0 || !strings.Contains(out, "MCP server secure: connected") {
		t.Fatalf("login: %d %q\n%s", code, out, browser.text.String())
	}
	if signIns, grants, _, _ := srv.Counts(); signIns != 1 || grants != 1 {
		t.Errorf("sign-ins %d, code grants %d; want one of each", signIns, grants)
	}
	files, _ := filepath.Glob(filepath.Join(state, "cline-ls", "mcp-oauth", "*"))
	if len(files) != 1 {
		t.Fatalf("token files %v, want one under the state folder", files)
	}
	if fi, err := os.Stat(files[0]); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v %v, want 0600", fi.Mode(), err)
	}

	errs.Reset()
	if code, out := run(&errs, "call", "secure", "whoami"); code != 0 || out != "signed in as ada\n" {
		t.Errorf("a call after the login: %d %q %s", code, out, errs.String())
	}
	srv.ExpireTokens()
	errs.Reset()
	if code, out := run(&errs, "call", "secure", "whoami"); code != 0 || out != "signed in as ada\n" {
		t.Errorf("a call with the token expired: %d %q %s", code, out, errs.String())
	}
	if signIns, _, refreshes, _ := srv.Counts(); signIns != 1 || refreshes != 1 {
		t.Errorf("sign-ins %d, refreshes %d; want the expired token refreshed, no second sign-in", signIns, refreshes)
	}
}
