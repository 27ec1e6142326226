// Package mcptest runs MCP servers for tests in this process: one behind
// OAuth 2.1 as the MCP authorization spec describes it, with an
// authorization server of its own that approves every sign-in at once,
// and tools that need the sign-in and ask the user (elicitation). It is
// a test's, never the daemon's: nothing the binary links imports it.
package mcptest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Scope is the scope the server's tools need.
const Scope = "mcp:tools"

// OAuthServer is an MCP server over Streamable HTTP that answers only a
// bearer token its own authorization server issued: discovery (protected
// resource and authorization server metadata), dynamic client
// registration, the authorization code with PKCE (approved at once:
// /authorize redirects to the client's redirect_uri with a code), the
// token and refresh grants. Its tools: whoami (the signed-in user) and
// ask (an elicitation of a name and a colour, returned as JSON).
type OAuthServer struct {
	// URL is the MCP endpoint.
	URL string
	// TokenLife is how long an access token lasts (default an hour).
	TokenLife time.Duration

	srv *httptest.Server

	mu        sync.Mutex
	clients   map[string][]string // client id → its redirect URIs
	codes     map[string]grant    // authorization codes, once each
	tokens    map[string]time.Time
	refreshes map[string]bool
	// What happened, for tests to check: sign-ins (codes issued), token
	// grants by type, requests refused for want of a token.
	SignIns, CodeGrants, RefreshGrants, Refused int
}

type grant struct {
	client, redirect, challenge string
}

// Option changes a server NewOAuthServer makes.
type Option func(*options)

type options struct{ query, host string }

// OnHost serves on another loopback address than 127.0.0.1 (such as
// 127.0.0.2): an address VS Code does not take for the local machine,
// so it opens the sign-in page as it would a remote server's, without
// its port forwarding, and asks first. The host must be a loopback
// address this machine listens on (Linux: all of 127.0.0.0/8).
func OnHost(host string) Option {
	return func(o *options) { o.host = host }
}

// WithQuery gives the MCP endpoint a query of its own (raw, as in
// "org=a&team=b"), as some hosted servers have: it is part of the
// resource the sign-in names (RFC 8707), escapes and all, which is what
// a client that re-encodes the sign-in address gets wrong.
func WithQuery(rawQuery string) Option {
	return func(o *options) { o.query = rawQuery }
}

// NewOAuthServer starts a server; it stops when the test ends.
func NewOAuthServer(t interface {
	Cleanup(func())
	Fatalf(string, ...any)
}, opts ...Option) *OAuthServer {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	s := &OAuthServer{TokenLife: time.Hour, clients: map[string][]string{}, codes: map[string]grant{},
		tokens: map[string]time.Time{}, refreshes: map[string]bool{}}
	mux := http.NewServeMux()
	s.srv = httptest.NewUnstartedServer(mux)
	if o.host != "" {
		l, err := net.Listen("tcp", net.JoinHostPort(o.host, "0"))
		if err != nil {
			t.Fatalf("mcptest: listening on %s: %v", o.host, err)
		}
		s.srv.Listener.Close()
		s.srv.Listener = l
	}
	s.srv.Start()
	t.Cleanup(s.srv.Close)
	base := s.srv.URL
	s.URL = base + "/mcp"
	if o.query != "" {
		s.URL += "?" + o.query
	}

	mux.Handle("/.well-known/oauth-protected-resource", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: s.URL, AuthorizationServers: []string{base}, ScopesSupported: []string{Scope}}))
	mux.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: s.URL, AuthorizationServers: []string{base}, ScopesSupported: []string{Scope}}))
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{
			"issuer": base, "authorization_endpoint": base + "/authorize", "token_endpoint": base + "/token",
			"registration_endpoint": base + "/register", "scopes_supported": []string{Scope},
			"response_types_supported": []string{"code"}, "grant_types_supported": []string{"authorization_code", "refresh_token"},
			"code_challenge_methods_supported": []string{"S256"}, "token_endpoint_auth_methods_supported": []string{"none"},
		})
	})
	mux.HandleFunc("/register", s.register)
	mux.HandleFunc("/authorize", s.authorize)
	mux.HandleFunc("/token", s.token)

	server := mcp.NewServer(&mcp.Implementation{Name: "mcptest-oauth", Version: "1"}, nil)
	server.AddTool(&mcp.Tool{Name: "whoami", Description: "Says who is signed in.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			who := "nobody"
			if ti := req.Extra.TokenInfo; ti != nil {
				who = ti.UserID
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "signed in as " + who}}}, nil
		})
	server.AddTool(&mcp.Tool{Name: "ask", Description: "Asks the user their name and colour.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Tell me about you.", RequestedSchema: json.RawMessage(`{"type":"object","properties":{` +
				`"name":{"type":"string","title":"Your name"},"colour":{"type":"string","enum":["red","blue"],"default":"blue"}},"required":["name"]}`)})
			out := fmt.Sprint("elicitation failed: ", err)
			if err == nil {
				b, _ := json.Marshal(res.Content)
				out = res.Action + " " + string(b)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: out}}}, nil
		})
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	guard := auth.RequireBearerToken(s.verify, &auth.RequireBearerTokenOptions{
		Scopes: []string{Scope}, ResourceMetadataURL: base + "/.well-known/oauth-protected-resource/mcp"})
	mux.Handle("/mcp", s.counting(guard(handler)))
	return s
}

// counting counts the requests refused for want of a valid token.
func (s *OAuthServer) counting(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		if rec.status == http.StatusUnauthorized {
			s.mu.Lock()
			s.Refused++
			s.mu.Unlock()
		}
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Counts returns what happened so far, under the lock.
func (s *OAuthServer) Counts() (signIns, codeGrants, refreshGrants, refused int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.SignIns, s.CodeGrants, s.RefreshGrants, s.Refused
}

// ExpireTokens makes every access token issued so far expired, so the
// next request needs the refresh token.
func (s *OAuthServer) ExpireTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.tokens {
		s.tokens[k] = time.Now().Add(-time.Minute)
	}
}

func (s *OAuthServer) verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	s.mu.Lock()
	exp, ok := s.tokens[token]
	s.mu.Unlock()
	if !ok || time.Now().After(exp) {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{Scopes: []string{Scope}, Expiration: exp, UserID: "ada"}, nil
}

func (s *OAuthServer) register(w http.ResponseWriter, r *http.Request) {
	var meta struct {
		RedirectURIs []string `json:"redirect_uris"`
	}
	if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&meta) != nil || len(meta.RedirectURIs) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_client_metadata"})
		return
	}
	id := randomString()
	s.mu.Lock()
	s.clients[id] = meta.RedirectURIs
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{"client_id": id, "redirect_uris": meta.RedirectURIs,
		"token_endpoint_auth_method": "none", "grant_types": []string{"authorization_code", "refresh_token"}})
}

// authorize approves at once: the user has nothing to type.
func (s *OAuthServer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	client, redirect := q.Get("client_id"), q.Get("redirect_uri")
	s.mu.Lock()
	uris, known := s.clients[client]
	s.mu.Unlock()
	ok := known && q.Get("response_type") == "code" && q.Get("code_challenge_method") == "S256" && q.Get("code_challenge") != ""
	registered := false
	for _, u := range uris {
		registered = registered || u == redirect
	}
	if !ok || !registered {
		http.Error(w, "bad authorization request", http.StatusBadRequest)
		return
	}
	// The resource, when named, must be this server's endpoint exactly.
	if q.Has("resource") && q.Get("resource") != s.URL {
		http.Error(w, fmt.Sprintf("bad authorization request: resource %q is not %q", q.Get("resource"), s.URL), http.StatusBadRequest)
		return
	}
	code := randomString()
	s.mu.Lock()
	s.codes[code] = grant{client: client, redirect: redirect, challenge: q.Get("code_challenge")}
	s.SignIns++
	s.mu.Unlock()
	to, _ := url.Parse(redirect)
	v := to.Query()
	v.Set("code", code)
	v.Set("state", q.Get("state"))
	to.RawQuery = v.Encode()
	http.Redirect(w, r, to.String(), http.StatusFound)
}

func (s *OAuthServer) token(w http.ResponseWriter, r *http.Request) {
	if r.ParseForm() != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_request"})
		return
	}
	f := r.PostForm
	s.mu.Lock()
	defer s.mu.Unlock()
	switch f.Get("grant_type") {
	case "authorization_code":
		g, ok := s.codes[f.Get("code")]
		delete(s.codes, f.Get("code"))
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		if !ok || g.client != f.Get("client_id") || g.redirect != f.Get("redirect_uri") ||
			base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_grant"})
			return
		}
		s.CodeGrants++
	case "refresh_token":
		if !s.refreshes[f.Get("refresh_token")] {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_grant"})
			return
		}
		delete(s.refreshes, f.Get("refresh_token"))
		s.RefreshGrants++
	default:
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "unsupported_grant_type"})
		return
	}
	access, refresh := randomString(), randomString()
	s.tokens[access] = time.Now().Add(s.TokenLife)
	s.refreshes[refresh] = true
	writeJSON(w, http.StatusOK, map[string]any{"access_token": access, "token_type": "Bearer",
		"expires_in": int(s.TokenLife / time.Second), "refresh_token": refresh, "scope": Scope})
}

// FollowSignIn plays the browser a sign-in URL is opened in: it follows
// the authorization server's redirect to the client's loopback address,
// as a browser would, and returns what that page said.
func FollowSignIn(ctx context.Context, signInURL string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, signInURL, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	n, _ := resp.Body.Read(buf)
	b.Write(buf[:n])
	if resp.StatusCode != http.StatusOK {
		return b.String(), fmt.Errorf("the sign-in ended with %s", resp.Status)
	}
	return b.String(), nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func randomString() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// StandInBrowser writes the program a test gives an editor as the user's
// browser ($BROWSER): it fetches the address it is given, following
// redirects as a browser would, and appends the page to the log it
// returns. It runs python3 by name, so that an editor run in another
// root (CI's Debian 13) finds that root's own. The test checks python3 is
// there (testenv.LookPath).
func StandInBrowser(t interface{ Fatal(...any) }, dir string) (browser, log string) {
	browser, log = filepath.Join(dir, "browser"), filepath.Join(dir, "browser.log")
	script := "#!/bin/sh\nexec python3" + ` -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1]).read().decode())' "$1" >>` + log + " 2>&1\n"
	if err := os.WriteFile(browser, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return browser, log
}
