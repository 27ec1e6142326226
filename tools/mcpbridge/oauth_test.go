package mcpbridge

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

// TestTokensKeptPrivately: a sign-in's tokens are written under the
// state folder, mode 0600 in a folder of mode 0700, read back by the next
// handler for the same server and URL (not for another URL), and a
// refreshed token is saved too; nothing of them reaches the log.
func TestTokensKeptPrivately(t *testing.T) {
	dir := t.TempDir()
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv := ServerConfig{Name: "remote", Type: TransportHTTP, URL: "https://mcp.example/mcp?key=q"}
	store := &tokenStore{path: tokenPath(dir, srv), url: DisplayURL(srv.URL), logger: logger}
	oc := &oauth2.Config{ClientID: "client-1", Endpoint: oauth2.Endpoint{AuthURL: "https://auth.example/authorize", TokenURL: "https://auth.example/token"}}
	tok := &oauth2.Token{AccessToken: "access-sekrit", RefreshToken: "refresh-sekrit", Expiry: time.Now().Add(time.Hour)}
	ts := store.source(context.Background(), oc, tok)
	if got, err := ts.Token(); err != nil || got.AccessToken != "access-sekrit" {
		t.Fatalf("token = %v, %v", got, err)
	}
	fi, err := os.Stat(store.path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, want 0600", fi.Mode().Perm())
	}
	if di, _ := os.Stat(filepath.Dir(store.path)); di.Mode().Perm() != 0o700 {
		t.Errorf("token folder mode %v, want 0700", di.Mode().Perm())
	}
	b, _ := os.ReadFile(store.path)
	if strings.Contains(string(b), "key=q") {
		t.Errorf("the file keeps the URL's query: %s", b)
	}

	again := &tokenStore{path: tokenPath(dir, srv), url: DisplayURL(srv.URL), logger: logger}
	loaded := again.load()
	if loaded == nil {
		t.Fatal("the next handler did not find the tokens")
	}
	if got, err := loaded.Token(); err != nil || got.AccessToken != "access-sekrit" {
		t.Errorf("loaded token = %v, %v", got, err)
	}
	moved := srv
	moved.URL = "https://elsewhere.example/mcp"
	if (&tokenStore{path: tokenPath(dir, moved), url: DisplayURL(moved.URL), logger: logger}).load() != nil {
		t.Error("a server at another URL got the tokens")
	}

	// A token the source hands out anew (a refresh) is saved.
	store.mu.Lock()
	store.src = oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "access-2", RefreshToken: "refresh-sekrit", Expiry: time.Now().Add(time.Hour)})
	store.mu.Unlock()
	if _, err := ts.Token(); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(store.path)
	if !strings.Contains(string(b), "access-2") {
		t.Errorf("the refreshed token was not saved: %s", b)
	}
	if strings.Contains(logs.String(), "sekrit") || strings.Contains(logs.String(), "access-2") {
		t.Errorf("the log holds a token:\n%s", logs.String())
	}
}
