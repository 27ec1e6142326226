package session

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/provider"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/tools/toolstest"
)

// pngHead is the start of a 1×1 PNG, enough for read_files to take it as
// one.
const pngHead = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00"

// namedModel is a scriptModel under another model name.
type namedModel struct {
	*scriptModel
	model string
}

func (m namedModel) Model() string { return m.model }

// pictureBytes is the size of each test picture: larger than the store's
// read buffer, so a saved image is a line longer than one buffer-full.
const pictureBytes = 100_000

// imageSession is a session whose read_files is the real one over a
// folder holding n pictures, pic0.png … (each its own bytes).
func imageSession(t *testing.T, p provider.Provider, window, n int) (*Session, *Store) {
	t.Helper()
	root := t.TempDir()
	for i := range n {
		os.WriteFile(filepath.Join(root, fmt.Sprintf("pic%d.png", i)), []byte(pngHead+strings.Repeat(fmt.Sprint(i), pictureBytes-len(pngHead))), 0o644)
	}
	files, err := toolstest.New(root)
	if err != nil {
		t.Fatal(err)
	}
	st, err := NewStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	log, err := st.Create(Meta{SessionID: "s1", Cwd: root})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	policy, _ := NewPolicy(PolicyConfig{})
	s, err := New(Config{ID: "s1", CWD: root, Mode: "act", Provider: p, Impls: tools.WorkspaceTools(files), Files: files,
		Policy: policy, Log: log, MaxTurns: 50, ContextWindow: window}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s, st
}

// readPictures reads pic0.png, pic1.png … one call a step, then ends.
func readPictures(n int) func(int, provider.Request) ([]provider.Event, error) {
	return func(i int, _ provider.Request) ([]provider.Event, error) {
		if i == n {
			return textEvents("Seen them."), nil
		}
		return callEvents(fmt.Sprintf("c%d", i), tools.NameReadFiles, map[string]any{"files": []any{map[string]any{"path": fmt.Sprintf("pic%d.png", i)}}}), nil
	}
}

func resultsOf(msgs []provider.Message) []provider.ToolResult {
	var out []provider.ToolResult
	for _, m := range msgs {
		for _, p := range m.Parts {
			if p.Result != nil {
				out = append(out, *p.Result)
			}
		}
	}
	return out
}

// TestReadImageReachesAVisionModel: a picture read_files returns goes to a
// model with vision as an image of the call's result, and is kept in the
// saved history, so a reloaded session sends it again.
func TestReadImageReachesAVisionModel(t *testing.T) {
	m := &scriptModel{reply: readPictures(1)}
	s, st := imageSession(t, m, 0, 1)
	if _, err := s.Prompt(t.Context(), "What is in pic0.png?"); err != nil {
		t.Fatal(err)
	}
	reqs := m.requests()
	rs := resultsOf(reqs[len(reqs)-1].Messages)
	want := base64.StdEncoding.EncodeToString([]byte(pngHead + strings.Repeat("0", pictureBytes-len(pngHead))))
	if len(rs) != 1 || len(rs[0].Images) != 1 || rs[0].Images[0].MIMEType != "image/png" || rs[0].Images[0].Data != want {
		t.Fatalf("the request after the read carries results %+v, want one with the picture", rs)
	}
	if !strings.Contains(rs[0].Content, "File: pic0.png — an image (image/png, 97.7 KB)") {
		t.Errorf("result text = %q", rs[0].Content)
	}
	s.flush()
	meta, recs, err := st.Load("s1")
	if err != nil {
		t.Fatal(err)
	}
	if got := resultsOf(Resume(meta, recs).History); len(got) != 1 || len(got[0].Images) != 1 || got[0].Images[0].Data != want {
		t.Errorf("the reloaded history's results are %+v, want the picture kept", got)
	}
}

// TestReadImageForAModelWithoutVision: a model that takes no images gets
// a note saying so in place of the picture.
func TestReadImageForAModelWithoutVision(t *testing.T) {
	m := &scriptModel{reply: readPictures(1)}
	s, _ := imageSession(t, namedModel{m, "gpt-3.5-turbo"}, 0, 1)
	if _, err := s.Prompt(t.Context(), "What is in pic0.png?"); err != nil {
		t.Fatal(err)
	}
	reqs := m.requests()
	rs := resultsOf(reqs[len(reqs)-1].Messages)
	if len(rs) != 1 || len(rs[0].Images) != 0 {
		t.Fatalf("results %+v, want one without images", rs)
	}
	if !strings.Contains(rs[0].Content, "[image not shown: the model gpt-3.5-turbo does not accept images]") {
		t.Errorf("result text = %q, want the note", rs[0].Content)
	}
}

// TestCompactionDropsImagesFirst: when the images are what fills the
// window, compaction takes out those of the older turns and nothing
// else: no summary is asked for, every result's text stays, and the
// newest picture is still sent. Resuming gives the same view.
func TestCompactionDropsImagesFirst(t *testing.T) {
	m := &scriptModel{reply: readPictures(4), summary: func(provider.Request) (string, error) {
		t.Error("a summary was asked for although dropping images was enough")
		return "summary", nil
	}}
	// Two images and the tools pass 80% of a 6,000-token window; the
	// text is small.
	s, st := imageSession(t, m, 6000, 4)
	if _, err := s.Prompt(t.Context(), "Compare the four pictures."); err != nil {
		t.Fatal(err)
	}
	reqs := m.requests()
	last := resultsOf(reqs[len(reqs)-1].Messages)
	if len(last) != 4 {
		t.Fatalf("the last request has %d results, want all 4 kept", len(last))
	}
	for i, r := range last[:3] {
		if len(r.Images) != 0 || !strings.Contains(r.Content, "File: pic") || !strings.Contains(r.Content, droppedImage) {
			t.Errorf("older result %d = %+v, want its text and the note, no image", i, r)
		}
	}
	if len(last[3].Images) != 1 {
		t.Errorf("the newest result lost its image: %+v", last[3])
	}
	s.flush()
	meta, recs, err := st.Load("s1")
	if err != nil {
		t.Fatal(err)
	}
	var methods []string
	for _, r := range recs {
		if r.Compaction != nil {
			methods = append(methods, r.Compaction.Method)
		}
	}
	if len(methods) < 2 || slices.ContainsFunc(methods, func(m string) bool { return m != MethodImages }) {
		t.Errorf("compactions %v, want each to drop images only", methods)
	}
	if got, want := transcriptOf(Resume(meta, recs).History), transcriptOf(s.History()); got != want {
		t.Errorf("resumed view differs from the live one:\n%s\n---\n%s", got, want)
	}
}
