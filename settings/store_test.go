package settings

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/provider"
)

func newTestStore(t *testing.T, file string) (*Store, *int) {
	t.Helper()
	dir := t.TempDir()
	getenv := func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return dir
		}
		return ""
	}
	reads := 0
	st := NewStore(Options{Getenv: getenv, ReadFile: func(name string) ([]byte, error) {
		if name != filepath.Join(dir, "cline-ls", "config.json") {
			return nil, fmt.Errorf("read %s", name)
		}
		reads++
		if file == "" {
			return nil, fs.ErrNotExist
		}
		return []byte(file), nil
	}})
	return st, &reads
}

// TestStoreMergesKeyByKey: what the client sends is merged into what it
// sent before; a null clears a key; the config file fills the rest and is
// read once.
func TestStoreMergesKeyByKey(t *testing.T) {
	st, reads := newTestStore(t, `{"maxTurns": 9, "mode": "plan"}`)
	if cur := st.Current(); cur.Mode != "plan" || cur.MaxTurns != 9 {
		t.Fatalf("before the client: %+v", cur)
	}
	if _, err := st.Apply([]byte(`{"mode": "act", "provider": {"name": "replay", "transcript": "/t.json"}}`), "initializationOptions."); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Apply([]byte(`{"provider": {"model": "m"}}`), "settings."); err != nil {
		t.Fatal(err)
	}
	cur := st.Current()
	if cur.Mode != "act" || cur.Provider.Name != "replay" || cur.Provider.Model != "m" || cur.MaxTurns != 9 {
		t.Fatalf("merged: %+v %+v", cur, cur.Provider)
	}
	if _, err := st.Apply([]byte(`{"mode": null}`), "settings."); err != nil {
		t.Fatal(err)
	}
	if cur := st.Current(); cur.Mode != "plan" {
		t.Errorf("mode after null = %q, want the file's plan", cur.Mode)
	}
	st.Reset()
	if cur := st.Current(); cur.Provider.Name != "" {
		t.Errorf("after Reset the client's provider is kept: %+v", cur.Provider)
	}
	if *reads != 1 {
		t.Errorf("config file read %d times, want once", *reads)
	}
}

// TestStoreRefusesNamingTheField: an invalid change changes nothing, and
// its error names the field under the prefix, through Invalid when set.
func TestStoreRefusesNamingTheField(t *testing.T) {
	st, _ := newTestStore(t, "")
	st.Apply([]byte(`{"maxTurns": 3}`), "settings.")
	for body, want := range map[string]string{
		`{"maxTurns": "x"}`:          "settings.maxTurns: expected an integer",
		`{"mode": "fly"}`:            "settings.mode: must be one of",
		`{"mcpServers": [{"x": 1}]}`: "settings.",
	} {
		_, err := st.Apply([]byte(body), "settings.")
		var ie *InvalidError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an InvalidError with %q", body, err, want)
		}
	}
	if cur := st.Current(); cur.MaxTurns != 3 || cur.Mode != "act" {
		t.Errorf("a refused change changed the settings: %+v", cur)
	}
	sentinel := errors.New("refused")
	st.invalid = func(msg string) error { return fmt.Errorf("%w: %s", sentinel, msg) }
	if _, err := st.Apply([]byte(`{"maxTurns": -1}`), "settings."); !errors.Is(err, sentinel) || !strings.Contains(err.Error(), "settings.maxTurns") {
		t.Errorf("through Invalid: %v", err)
	}
}

// TestStoreFileProblem: a config file that is not valid is ignored and
// said to be, naming the file and the field.
func TestStoreFileProblem(t *testing.T) {
	st, _ := newTestStore(t, `{"maxTurns": -2, "mode": "plan"}`)
	if err := st.FileProblem(); err == nil || !strings.Contains(err.Error(), "config.json") || !strings.Contains(err.Error(), "maxTurns") {
		t.Errorf("FileProblem = %v", err)
	}
	if cur := st.Current(); cur.Mode != "act" {
		t.Errorf("an invalid file's settings were taken: %+v", cur)
	}
}

// TestCurrentIsACopy: what Current returns is the caller's own.
func TestCurrentIsACopy(t *testing.T) {
	st, _ := newTestStore(t, "")
	st.Apply([]byte(`{"rules": [{"tool": "x", "decision": "deny", "modes": ["act"]}], "provider": {"name": "replay", "models": ["a"]}}`), "")
	cur := st.Current()
	cur.Rules[0].Modes[0] = "plan"
	cur.Provider.Models[0] = "b"
	if again := st.Current(); again.Rules[0].Modes[0] != "act" || again.Provider.Models[0] != "a" {
		t.Errorf("Current shares its slices: %+v", again)
	}
}

func TestSettingsDerived(t *testing.T) {
	off, ms := false, 0
	st := Settings{Checkpoints: &CheckpointSettings{Enabled: &off, MaxAgeDays: 1, MaxSizeMB: 2}, Diagnostics: &DiagnosticsSettings{SettleMs: &ms}}
	if on, age, size := st.CheckpointLimits(); on || age.Hours() != 24 || size != 2<<20 {
		t.Errorf("CheckpointLimits = %v %v %v", on, age, size)
	}
	if d := st.DiagnosticsSettle(); d != 0 {
		t.Errorf("DiagnosticsSettle with 0 = %v", d)
	}
	if d := (Settings{}).DiagnosticsSettle(); d != DefaultDiagnosticsSettle {
		t.Errorf("DiagnosticsSettle unset = %v", d)
	}
	if on, _, _ := (Settings{}).CheckpointLimits(); !on {
		t.Error("checkpoints off by default")
	}
}

// fakeModel is a provider.Provider naming its model.
type fakeModel struct{ model string }

func (f fakeModel) Name() string      { return "fake" }
func (f fakeModel) Model() string     { return f.model }
func (f fakeModel) NativeTools() bool { return true }
func (f fakeModel) Stream(context.Context, provider.Request) (provider.Stream, error) {
	return nil, errors.New("fake")
}

// TestModelSwitchFromTheNextTurn: an offered model is shown at once but
// used from the next turn; a model the session chose stays its own.
func TestModelSwitchFromTheNextTurn(t *testing.T) {
	from := ProviderSettings{Name: "fake", Model: "a", ContextWindow: 1000}
	m := NewModelSwitch(fakeModel{"a"}, nil, &from)
	if err := m.BeginTurn(); err != nil || m.Model() != "a" || m.ContextWindow() != 1000 {
		t.Fatalf("first turn: %v %q %d", err, m.Model(), m.ContextWindow())
	}
	if _, stale := m.stale(from); stale {
		t.Error("stale under the settings it was built from")
	}
	now := ProviderSettings{Name: "fake", Model: "b"}
	chosen, stale := m.stale(now)
	if !stale || chosen != "" {
		t.Errorf("Stale(new settings) = %q %v", chosen, stale)
	}
	m.Offer(fakeModel{"b"}, nil, now)
	if m.Shown() != "b" || m.Model() != "a" {
		t.Errorf("before the next turn: shown %q, in use %q", m.Shown(), m.Model())
	}
	m.BeginTurn()
	if m.Model() != "b" || m.ContextWindow() != 0 {
		t.Errorf("next turn: %q window %d", m.Model(), m.ContextWindow())
	}
	m.Choose(fakeModel{"c"}, "c", now)
	if chosen, _ := m.stale(ProviderSettings{Name: "fake", Model: "d"}); chosen != "c" {
		t.Errorf("the session's choice is not kept: %q", chosen)
	}
	var built []string
	build := func(model string) (provider.Provider, error) {
		built = append(built, model)
		return fakeModel{model}, nil
	}
	later := ProviderSettings{Name: "fake", Model: "d", BaseURL: "http://new"}
	if !m.Follow(later, build) || m.Follow(later, build) || len(built) != 1 || built[0] != "c" {
		t.Errorf("Follow: built %q; want the session's own choice rebuilt once", built)
	}
	none := NewModelSwitch(nil, errors.New("no model: set one"), nil)
	if err := none.BeginTurn(); err == nil || err.Error() != "no model: set one" || none.Shown() != "" || none.Name() != "" {
		t.Errorf("no model: %v %q", err, none.Shown())
	}
	if _, err := none.Stream(context.Background(), provider.Request{}); err == nil {
		t.Error("Stream without a model")
	}
}

func TestModelListsCachePerProvider(t *testing.T) {
	l := NewModelLists(func(string) string { return "" }, nil, nil)
	if l.Cached(nil) != nil || l.List(context.Background(), &ProviderSettings{}) != nil {
		t.Error("a listing without a provider")
	}
	p := &ProviderSettings{Name: "fake-provider-with-no-endpoint"}
	l.List(context.Background(), p)
	if got := l.Cached(p); got != nil {
		t.Errorf("a failed listing was cached: %v", got)
	}
	l.lists = map[string][]provider.ModelInfo{listKey(*p): {{ID: "x"}}}
	if got := l.List(context.Background(), p); len(got) != 1 || got[0].ID != "x" {
		t.Errorf("List ignores the cache: %v", got)
	}
	if got := l.Cached(&ProviderSettings{Name: p.Name, BaseURL: "http://elsewhere"}); got != nil {
		t.Errorf("another address shares the cache: %v", got)
	}
}

func TestModelsBySession(t *testing.T) {
	var ms Models
	if ms.Of("a") != nil {
		t.Fatal("a model before any")
	}
	m := ms.Switch("a", fakeModel{"x"}, nil, &ProviderSettings{Name: "fake", ContextWindow: 5})
	if ms.Of("a") != m || m.ContextWindow() != 5 || ms.Of("b") != nil {
		t.Errorf("Of after Switch: %v", ms.Of("a"))
	}
	ms.Forget("a")
	if ms.Of("a") != nil {
		t.Error("a model after Forget")
	}
}

// TestModelMenuChoicesFirst: the choices lead, as listed when listed;
// the rest of the listing follows once each; an empty menu is a list.
func TestModelMenuChoicesFirst(t *testing.T) {
	listed := []provider.ModelInfo{{ID: "b", Name: "Bee"}, {ID: "a", Name: "Ay"}, {ID: "c"}}
	got := ModelMenu("anthropic", []string{"a", "claude-sonnet-4-5"}, listed)
	var ids []string
	for _, m := range got {
		ids = append(ids, m.ID)
	}
	if strings.Join(ids, ",") != "a,claude-sonnet-4-5,b,c" || got[0].Name != "Ay" || got[1].ContextWindow == 0 {
		t.Errorf("menu = %+v", got)
	}
	if m := ModelMenu("", nil, nil); m == nil || len(m) != 0 {
		t.Errorf("empty menu = %#v", m)
	}
}
