package mcpbridge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// OAuth 2.1 for Streamable HTTP servers, the spec's authorization: the
// SDK's authorization-code handler does the protocol (protected resource
// and authorization server metadata, dynamic client registration, PKCE,
// scope step-up, refresh); around it the daemon keeps the user's part
// (the sign-in URL shown through SignIn, the redirect caught on a
// loopback port) and the tokens, stored under the state directory, mode
// 0600, and never logged.

// SignInWait bounds how long a server waits for the user to sign in.
const SignInWait = 5 * time.Minute

// OAuthConfig configures NewOAuth.
type OAuthConfig struct {
	// StateDir is where tokens are kept (StateDir/mcp-oauth, one file a
	// server); empty keeps them in memory only.
	StateDir string
	// SignIn shows the user the URL to sign in to server at; the flow
	// then waits, up to SignInWait, for the browser's redirect.
	SignIn func(ctx context.Context, server, url string) error
	Logger *slog.Logger
	// ClientMetadataURL, when set, is tried first as the client's id
	// (a client ID metadata document at that URL); Preregistered next;
	// dynamic registration last.
	ClientMetadataURL string
	Preregistered     *oauthex.ClientCredentials
}

// NewOAuth returns what Options.OAuth takes: for each server, a handler
// that signs in through c.SignIn and keeps the tokens.
func NewOAuth(c OAuthConfig) func(ServerConfig) auth.OAuthHandler {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return func(s ServerConfig) auth.OAuthHandler {
		h, err := newOAuthHandler(c, s)
		if err != nil {
			c.Logger.Warn("mcp: no sign-in for the server", "mcp_server", s.Name, "err", err)
			return nil
		}
		return h
	}
}

// tokenFile is what is stored of a sign-in: the client the
// authorization server knows us as, its endpoints and the token.
type tokenFile struct {
	URL          string        `json:"url"` // the server's, without query
	ClientID     string        `json:"clientId"`
	ClientSecret string        `json:"clientSecret,omitempty"`
	AuthURL      string        `json:"authUrl"`
	TokenURL     string        `json:"tokenUrl"`
	AuthStyle    int           `json:"authStyle,omitempty"`
	Scopes       []string      `json:"scopes,omitempty"`
	Token        *oauth2.Token `json:"token"`
}

// tokenPath is where a server's tokens are kept: named by a hash of its
// name and URL, so that a changed URL signs in again.
func tokenPath(dir string, s ServerConfig) string {
	if dir == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(s.Name + "\x00" + DisplayURL(s.URL)))
	return filepath.Join(dir, "mcp-oauth", hex.EncodeToString(sum[:12])+".json")
}

func newOAuthHandler(c OAuthConfig, s ServerConfig) (auth.OAuthHandler, error) {
	// The loopback port is chosen now: dynamic registration records the
	// redirect URL whole.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	redirect := "http://" + addr + "/callback"
	path := tokenPath(c.StateDir, s)
	store := &tokenStore{path: path, url: DisplayURL(s.URL), logger: c.Logger}
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              redirect,
		AuthorizationCodeFetcher: loopbackFetcher(addr, s.Name, c.SignIn),
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{
				RedirectURIs: []string{redirect}, ClientName: "cline-ls",
				GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
				TokenEndpointAuthMethod: "none",
			},
		},
		PreregisteredClient: c.Preregistered,
		RequestRefreshToken: true,
		NewTokenSource: func(ctx context.Context, oc *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			return store.source(ctx, oc, tok), nil
		},
	}
	if c.ClientMetadataURL != "" {
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: c.ClientMetadataURL}
	}
	if ts := store.load(); ts != nil {
		cfg.InitialTokenSource = ts
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		return nil, err
	}
	return refreshFirst{OAuthHandler: h, store: store}, nil
}

// refreshFirst answers a 401 by refreshing the token when there is a
// refresh token, and signs in again only when that fails: a server may
// end a token before the expiry it gave (a restart, a revocation, a
// clock ahead of ours), and the SDK's handler would send the user to the
// browser for it.
type refreshFirst struct {
	auth.OAuthHandler
	store *tokenStore
}

func (h refreshFirst) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	if resp.StatusCode == http.StatusUnauthorized && h.store.refresh(ctx) == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return nil
	}
	return h.OAuthHandler.Authorize(ctx, req, resp)
}

// loopbackFetcher shows the sign-in URL and waits on addr for the
// browser's redirect with the code.
func loopbackFetcher(addr, server string, signIn func(context.Context, string, string) error) auth.AuthorizationCodeFetcher {
	return func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		if signIn == nil {
			return nil, errors.New("the server needs a sign-in, and there is no one to show it to")
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("listening for the sign-in's redirect: %w", err)
		}
		got := make(chan *auth.AuthorizationResult, 1)
		srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/callback" {
				http.NotFound(w, r)
				return
			}
			q := r.URL.Query()
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			if e := q.Get("error"); e != "" {
				fmt.Fprintf(w, "<p>Sign-in to %s failed: %s. You can close this tab.</p>", html.EscapeString(server), html.EscapeString(e))
			} else {
				fmt.Fprintf(w, "<p>Signed in to %s. You can close this tab.</p>", html.EscapeString(server))
			}
			select {
			case got <- &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}:
			default:
			}
		})}
		go func() { _ = srv.Serve(l) }()
		// Shut down, not closed: the browser is still reading the page
		// when the code arrives.
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if srv.Shutdown(sctx) != nil {
				srv.Close()
			}
		}()
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), SignInWait)
		defer cancel()
		stop := context.AfterFunc(ctx, cancel)
		defer stop()
		if err := signIn(wctx, server, args.URL); err != nil {
			return nil, fmt.Errorf("showing the sign-in: %w", err)
		}
		select {
		case res := <-got:
			if res.Code == "" {
				return nil, errors.New("the sign-in was refused")
			}
			return res, nil
		case <-wctx.Done():
			return nil, fmt.Errorf("no sign-in within %v", SignInWait)
		}
	}
}

// tokenStore keeps one server's tokens in a file of mode 0600, and is
// the token source of every request to it: a refresh, the oauth2
// library's or a forced one, goes through it and is saved.
type tokenStore struct {
	path   string
	url    string
	logger *slog.Logger

	mu     sync.Mutex
	last   tokenFile
	oc     *oauth2.Config
	ctx    context.Context // the HTTP client refreshes use
	src    oauth2.TokenSource
	access string // the access token last handed out
	forced string // the access token a forced refresh gave
}

// load returns the file's tokens as the token source, or nil.
func (t *tokenStore) load() oauth2.TokenSource {
	if t.path == "" {
		return nil
	}
	b, err := os.ReadFile(t.path)
	if err != nil {
		return nil
	}
	var f tokenFile
	if json.Unmarshal(b, &f) != nil || f.Token == nil || f.URL != t.url {
		return nil
	}
	oc := &oauth2.Config{ClientID: f.ClientID, ClientSecret: f.ClientSecret, Scopes: f.Scopes,
		Endpoint: oauth2.Endpoint{AuthURL: f.AuthURL, TokenURL: f.TokenURL, AuthStyle: oauth2.AuthStyle(f.AuthStyle)}}
	return t.source(context.Background(), oc, f.Token)
}

// source makes tok, from a sign-in or the file, the current token.
func (t *tokenStore) source(ctx context.Context, oc *oauth2.Config, tok *oauth2.Token) oauth2.TokenSource {
	t.mu.Lock()
	t.last = tokenFile{URL: t.url, ClientID: oc.ClientID, ClientSecret: oc.ClientSecret, AuthURL: oc.Endpoint.AuthURL,
		TokenURL: oc.Endpoint.TokenURL, AuthStyle: int(oc.Endpoint.AuthStyle), Scopes: oc.Scopes}
	t.oc, t.ctx, t.src, t.access = oc, ctx, oc.TokenSource(ctx, tok), tok.AccessToken
	t.mu.Unlock()
	t.save(tok)
	return t
}

// Token hands out the current token, refreshed by the oauth2 library
// when it has expired; a new one is saved.
func (t *tokenStore) Token() (*oauth2.Token, error) {
	t.mu.Lock()
	src := t.src
	t.mu.Unlock()
	if src == nil {
		return nil, errors.New("not signed in")
	}
	tok, err := src.Token()
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	fresh := tok.AccessToken != t.access
	t.access = tok.AccessToken
	t.mu.Unlock()
	if fresh {
		t.save(tok)
	}
	return tok, nil
}

// refresh gets a new access token with the refresh token, once per
// access token: a refreshed token the server refuses too means a new
// sign-in.
func (t *tokenStore) refresh(ctx context.Context) error {
	t.mu.Lock()
	oc, rctx, f := t.oc, t.ctx, t.last
	stale := t.access != "" && t.access == t.forced
	t.mu.Unlock()
	if oc == nil || f.Token == nil || f.Token.RefreshToken == "" || stale {
		return errors.New("no refresh token to use")
	}
	if rctx == nil {
		rctx = ctx
	}
	tok, err := oc.TokenSource(rctx, &oauth2.Token{RefreshToken: f.Token.RefreshToken}).Token()
	if err != nil {
		t.logger.Info("mcp: refreshing the sign-in failed; signing in again", "err", err)
		return err
	}
	t.mu.Lock()
	t.src, t.access, t.forced = oc.TokenSource(rctx, tok), tok.AccessToken, tok.AccessToken
	t.mu.Unlock()
	t.save(tok)
	return nil
}

// save writes the token; a failure is logged (without the token) and
// the sign-in lasts until the daemon exits.
func (t *tokenStore) save(tok *oauth2.Token) {
	t.mu.Lock()
	t.last.Token = tok
	f := t.last
	t.mu.Unlock()
	if t.path == "" {
		return
	}
	b, _ := json.Marshal(f)
	if err := writePrivate(t.path, b); err != nil {
		t.logger.Warn("mcp: the sign-in's tokens could not be saved", "err", err)
	}
}

// writePrivate writes b to path through a temporary file, both mode 0600
// in a folder of mode 0700.
func writePrivate(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".token-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
