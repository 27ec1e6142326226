package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/tools"
)

const fetchPage = `<!doctype html>
<html><head><title> The  Guide </title><style>body { color: red }</style>
<script>var secret = "script text";</script></head>
<body>
<header><a href="/">Site logo</a></header>
<nav><a href="/a">Menu item</a></nav>
<main>
  <h1>Getting started</h1>
  <p>Install the <code>tool</code> with
     <a href="/install">the installer</a> or from <a href="https://example.org/src">source</a>.</p>
  <h2>Steps</h2>
  <ol><li>Download</li><li>Run <b>setup</b><ul><li>nested item</li></ul></li></ol>
  <pre><code>go install example.org/tool@latest
tool --help</code></pre>
  <table><tr><th>Flag</th><th>Meaning</th></tr><tr><td>-v</td><td>verbose</td></tr></table>
  <img src="x.png" alt="a diagram">
  <div hidden>hidden text</div>
  <form><input value="form text"><button>Send</button></form>
</main>
<aside>Related links</aside>
<footer>Copyright footer</footer>
</body></html>`

// fetchServer serves test pages on 127.0.0.1.
func fetchServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, fetchPage)
	})
	mux.HandleFunc("/latin1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=iso-8859-1")
		w.Write([]byte("<html><body><p>caf\xe9 cr\xe8me</p></body></html>"))
	})
	mux.HandleFunc("/data.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"name": "cline-ls", "<b>": 1}`)
	})
	mux.HandleFunc("/image.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x00"))
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, "<html><body><h1>No such page</h1></body></html>")
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		for range 1000 {
			fmt.Fprintln(w, strings.Repeat("b", 99))
		}
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	mux.HandleFunc("/long", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body><article><h1>Animals</h1><p>An overview of animals.</p>")
		for i := range 800 {
			if i == 600 {
				fmt.Fprint(w, "<p>The zebra has black and white stripes.</p>")
				continue
			}
			fmt.Fprintf(w, "<p>Paragraph %d about nothing in particular, repeated to fill the page with text.</p>", i)
		}
		fmt.Fprint(w, "</article></body></html>")
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/page", http.StatusFound)
	})
	mux.HandleFunc("/to-file", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func fetchArgs(reqs ...string) string {
	type req struct {
		URL    string `json:"url"`
		Prompt string `json:"prompt"`
	}
	var rs []req
	for i := 0; i < len(reqs); i += 2 {
		rs = append(rs, req{reqs[i], reqs[i+1]})
	}
	b, _ := json.Marshal(map[string]any{"requests": rs})
	return string(b)
}

func TestFetchWebContentHTML(t *testing.T) {
	srv := fetchServer(t)
	files := wsTree(t, nil)
	res := wsRun(t, files, tools.NameFetchWebContent, fetchArgs(srv.URL+"/page", "how to install"))
	if res.IsError {
		t.Fatalf("error: %s", res.Content)
	}
	wsWant(t, res.Content,
		"URL: "+srv.URL+"/page (HTTP 200, text/html, ",
		"Title: The Guide\n",
		"# Getting started\n\nInstall the `tool` with the installer ("+srv.URL+"/install) or from source (https://example.org/src).",
		"## Steps\n\n1. Download\n2. Run setup\n  - nested item\n",
		"```\ngo install example.org/tool@latest\ntool --help\n```",
		"Flag | Meaning\n-v | verbose",
		"[image: a diagram]",
	)
	wsWantNot(t, res.Content, "script text", "color: red", "Site logo", "Menu item", "Related links",
		"Copyright footer", "hidden text", "form text", "Send")

	res = wsRun(t, files, tools.NameFetchWebContent, fetchArgs(srv.URL+"/latin1", "x", srv.URL+"/data.json", "name"))
	wsWant(t, res.Content, "café crème", `{"name": "cline-ls", "<b>": 1}`, "application/json")

	res = wsRun(t, files, tools.NameFetchWebContent, fetchArgs(srv.URL+"/redirect", "x"))
	wsWant(t, res.Content, "URL: "+srv.URL+"/page (HTTP 200", "# Getting started")
}

func TestFetchWebContentFailuresAndLimits(t *testing.T) {
	srv := fetchServer(t)
	files := wsTree(t, nil)
	res := wsRun(t, files, tools.NameFetchWebContent, fetchArgs(
		srv.URL+"/image.png", "x", srv.URL+"/missing", "x", srv.URL+"/to-file", "x"))
	wsWant(t, res.Content,
		"(HTTP 200, image/png, 12 bytes) — binary content, not shown as text",
		"(HTTP 404, text/html, ", "The server answered 404 Not Found.", "# No such page",
		"/to-file — error: a redirect to a file: URL, which is not fetched")
	wsWantNot(t, res.Content, "root:")
	if res.IsError {
		t.Error("IsError although the image was fetched")
	}

	res = wsRun(t, files, tools.NameFetchWebContent, fetchArgs(srv.URL+"/big", "x"), tools.FetchLimits(0, 1000))
	wsWant(t, res.Content, "(HTTP 200, text/plain, 1000 bytes)", "[Only the first 1000 bytes of the page were read.]")

	res = wsRun(t, files, tools.NameFetchWebContent, fetchArgs(srv.URL+"/slow", "x"), tools.FetchLimits(100*time.Millisecond, 0))
	wsWant(t, res.Content, "/slow — error: no complete answer within 100ms")
	if !res.IsError {
		t.Error("a fetch that timed out is not an error")
	}

	res = wsRun(t, files, tools.NameFetchWebContent, fetchArgs("http://127.0.0.1:1/nothing", "x"))
	wsWant(t, res.Content, "error: ", "refused")
	if !res.IsError {
		t.Error("an unreachable server is not an error")
	}

	_, err := wsBuild(t, files, tools.NameFetchWebContent,
		fetchArgs("file:///etc/passwd", "x", "ftp://example.org/f", "x", "example.org/page", "x", "http:///nohost", "x"))
	wsWant(t, wsErrorText(t, err),
		`requests[0].url: "file:///etc/passwd": only http and https URLs can be fetched, not file:`,
		`requests[1].url: "ftp://example.org/f": only http and https URLs can be fetched, not ftp:`,
		`requests[2].url: "example.org/page" has no scheme; give a full URL such as https://example.org/page`,
		`requests[3].url: "http:///nohost" names no host`)
}

func TestFetchWebContentKeepsWhatThePromptAsksFor(t *testing.T) {
	srv := fetchServer(t)
	files := wsTree(t, nil)
	res := wsRun(t, files, tools.NameFetchWebContent, fetchArgs(srv.URL+"/long", "What stripes does a zebra have?"))
	wsWant(t, res.Content, "# Animals\n\nAn overview of animals.", "The zebra has black and white stripes.",
		"shown are its start and the parts that mention stripes, zebra", "[…]")
	if len(res.Content) > tools.MaxToolOutput+200 {
		t.Errorf("output is %d bytes", len(res.Content))
	}

	// Without matching words, the page is cut in the middle.
	res = wsRun(t, files, tools.NameFetchWebContent, fetchArgs(srv.URL+"/long", "unrelated"))
	wsWant(t, res.Content, "characters cut from the middle", "Paragraph 799")

	inv, err := wsBuild(t, files, tools.NameFetchWebContent, fetchArgs("https://example.org/docs/", "x", "https://go.dev", "y"))
	if err != nil {
		t.Fatal(err)
	}
	if d := inv.Describe(context.Background()); d.Kind != tools.KindFetch || d.Title != "Fetch example.org/docs, go.dev" {
		t.Errorf("description %+v", d)
	}
}

// fetchTransport answers every request itself, so a test can check that
// the client given with FetchClient is the one used.
type fetchTransport func(*http.Request) (*http.Response, error)

func (f fetchTransport) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestFetchWebContentUsesTheGivenClient(t *testing.T) {
	files := wsTree(t, nil)
	var asked string
	client := &http.Client{Transport: fetchTransport(func(r *http.Request) (*http.Response, error) {
		asked = r.URL.String()
		return &http.Response{
			StatusCode: http.StatusOK, Status: "200 OK", Request: r,
			Header: http.Header{"Content-Type": []string{"text/plain"}},
			Body:   io.NopCloser(strings.NewReader("served by the test transport")),
		}, nil
	})}
	res := wsRun(t, files, tools.NameFetchWebContent, fetchArgs("https://example.invalid/doc", "x"), tools.FetchClient(client))
	wsWant(t, res.Content, "URL: https://example.invalid/doc (HTTP 200, text/plain, 28 bytes)", "served by the test transport")
	if asked != "https://example.invalid/doc" {
		t.Errorf("the transport was asked for %q", asked)
	}
}
