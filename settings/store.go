package settings

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cline-ls/cline-ls/hooks"
	"github.com/cline-ls/cline-ls/internal/proc"
	"github.com/cline-ls/cline-ls/tools/mcpbridge"
)

// Store owns a connection's settings. What the client sent is kept as one
// JSON object that each change is merged into key by key — settings
// arrive in pieces (eglot sends {"settings":{}} right after connecting), a
// key that is absent keeps its value and a key set to null clears it. The
// settings in force are resolved from it afresh on every change and never
// mutated after, so readers share them without copies going stale. The
// user's config file is read once, when the store is made: every
// resolution after takes what was read then.
//
// Readers take no lock: every message to the client is scrubbed of the
// secrets the settings imply, and with a hundred sessions writing at once
// a lock there made them queue behind each other for hundreds of
// milliseconds.
type Store struct {
	getenv  func(string) string
	invalid func(msg string) error
	file    Settings // the config file's settings; zero when it is missing or ignored
	fileErr error    // the config file's problem, if any

	mu     sync.Mutex     // serialises changes; guards client
	client map[string]any // what the client sent, merged
	now    atomic.Pointer[resolved]
}

// resolved is what one change of the settings makes, replaced whole,
// never changed in place.
type resolved struct {
	settings Settings
	fileErr  error // the config file's problem, if any
	// secrets are the values redaction scrubs: those of the secret
	// variables (proc.SecretValues), the one the settings name included.
	// The environment is read when the settings change.
	secrets []string
}

// Options are what a Store reads and how it answers.
type Options struct {
	Getenv func(string) string
	// ReadFile reads the config file; nil is os.ReadFile.
	ReadFile func(string) ([]byte, error)
	// Invalid makes the error Apply returns of a refused value from the
	// message naming its field (the transport's invalid-params error);
	// nil returns the *InvalidError itself.
	Invalid func(msg string) error
}

// NewStore reads the config file and resolves the settings in force
// before the client has sent any.
func NewStore(opts Options) *Store {
	readFile := opts.ReadFile
	if readFile == nil {
		readFile = os.ReadFile
	}
	st := &Store{getenv: opts.Getenv, invalid: opts.Invalid}
	file, err := readConfigFile(opts.Getenv, readFile)
	if errors.Is(err, errNoConfigFile) {
		err = nil
	}
	st.file, st.fileErr = file, err
	st.now.Store(st.resolve(Settings{}))
	return st
}

// resolve resolves the settings in force over what the client sent, and
// which values are secrets under the result.
func (st *Store) resolve(client Settings) *resolved {
	cur := resolve(client, st.getenv, st.file)
	// A key variable the client names is taken out of the daemon's
	// environment as those named at start were (docs/DESIGN.md §7).
	proc.HideVars(cur.HiddenEnv())
	return &resolved{settings: cur, fileErr: st.fileErr, secrets: proc.SecretValues(st.getenv, cur.HiddenEnv())}
}

// HiddenEnv names the variables no child process gets and whose values
// are scrubbed, besides those internal/proc always treats as keys (any
// *_API_KEY): the one the settings name for the model's key.
func (st Settings) HiddenEnv() []string {
	if p := st.Provider; p != nil && p.APIKeyEnv != "" {
		return []string{p.APIKeyEnv}
	}
	return nil
}

// refuse is err as Apply returns it.
func (st *Store) refuse(err error) error {
	var ie *InvalidError
	if st.invalid != nil && errors.As(err, &ie) {
		return st.invalid(ie.Msg)
	}
	return err
}

// Apply merges a settings object from the client (initializationOptions,
// or a didChangeConfiguration body) into what it sent before and makes the
// result the settings in force. An invalid object changes nothing; its
// error names the field under prefix.
func (st *Store) Apply(raw json.RawMessage, prefix string) (Settings, error) {
	var over map[string]any
	if len(raw) > 0 && string(raw) != "null" {
		// Decode into the typed shape first, so that a wrong type is
		// reported with the field's name.
		var typed Settings
		if err := decode(raw, &typed); err != nil {
			return Settings{}, st.refuse(prefixed(err, prefix))
		}
		if err := json.Unmarshal(raw, &over); err != nil {
			return Settings{}, st.refuse(invalid("%s: must be an object", strings.TrimSuffix(prefix, ".")))
		}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	merged := mergeJSON(st.client, over)
	var client Settings
	if len(merged) > 0 { // most clients send none: then nothing to decode
		body, err := json.Marshal(merged)
		if err != nil {
			return Settings{}, st.refuse(invalid("%s: %v", strings.TrimSuffix(prefix, "."), err))
		}
		if err := decode(body, &client); err != nil {
			return Settings{}, st.refuse(prefixed(err, prefix))
		}
	}
	if err := client.Validate(prefix); err != nil {
		return Settings{}, st.refuse(err)
	}
	if _, err := mcpbridge.ParseConfig(client.MCPServers); err != nil {
		return Settings{}, st.refuse(invalid("%s%v", prefix, err))
	}
	st.client = merged
	r := st.resolve(client)
	st.now.Store(r)
	return r.settings.Clone(), nil
}

// Reset forgets what the client sent (ACP clients send no settings: the
// environment and the config file decide).
func (st *Store) Reset() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.client = nil
	st.now.Store(st.resolve(Settings{}))
}

// Current returns the settings in force, as a copy the caller may keep.
func (st *Store) Current() Settings { return st.now.Load().settings.Clone() }

// Hooks returns the hooks and the trusted folders in force, without the
// copy Current makes: they are read on every tool call, and the caller
// must not change them.
func (st *Store) Hooks() (hooks.Config, []string) {
	cur := &st.now.Load().settings
	return cur.Hooks, cur.TrustedFolders
}

// FileProblem returns what is wrong with the config file, if anything.
func (st *Store) FileProblem() error { return st.now.Load().fileErr }

// Secrets returns the values redaction scrubs under the settings in
// force. The caller must not change the slice.
func (st *Store) Secrets() []string { return st.now.Load().secrets }

// HiddenEnv returns the variables kept from child processes under the
// settings in force (Settings.HiddenEnv).
func (st *Store) HiddenEnv() []string { return st.now.Load().settings.HiddenEnv() }

// mergeJSON overlays over on base, recursing into objects: a null in over
// deletes the key. Neither argument is changed.
func mergeJSON(base, over map[string]any) map[string]any {
	out := make(map[string]any, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		if v == nil {
			delete(out, k)
			continue
		}
		if vo, ok := v.(map[string]any); ok {
			if bo, ok := out[k].(map[string]any); ok {
				out[k] = mergeJSON(bo, vo)
				continue
			}
			out[k] = mergeJSON(nil, vo)
			continue
		}
		out[k] = v
	}
	return out
}
