package rpc

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/hooks"
	"github.com/cline-ls/cline-ls/internal/proc"
	"github.com/cline-ls/cline-ls/tools/mcpbridge"
	"github.com/cline-ls/cline-ls/wire"
)

// settingsStore owns a connection's settings. What the client sent is kept
// as one JSON object that each change is merged into key by key — settings
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
type settingsStore struct {
	getenv  func(string) string
	file    Settings // the config file's settings; zero when it is missing or ignored
	fileErr error    // the config file's problem, if any

	mu     sync.Mutex     // serialises changes; guards client
	client map[string]any // what the client sent, merged
	now    atomic.Pointer[resolvedSettings]
}

// resolvedSettings is what one change of the settings makes, replaced
// whole, never changed in place.
type resolvedSettings struct {
	settings Settings
	fileErr  error // the config file's problem, if any
	// secrets are the values redaction scrubs: those of the secret
	// variables (proc.SecretValues), the one the settings name included.
	// The environment is read when the settings change.
	secrets []string
}

// newSettingsStore reads the config file with readFile and resolves the
// settings in force before the client has sent any.
func newSettingsStore(getenv func(string) string, readFile func(string) ([]byte, error)) *settingsStore {
	st := &settingsStore{getenv: getenv}
	file, err := readConfigFile(getenv, readFile)
	if errors.Is(err, errNoConfigFile) {
		err = nil
	}
	st.file, st.fileErr = file, err
	st.now.Store(st.resolve(Settings{}))
	return st
}

// resolve resolves the settings in force over what the client sent, and
// which values are secrets under the result.
func (st *settingsStore) resolve(client Settings) *resolvedSettings {
	cur := resolveSettings(client, st.getenv, st.file)
	// A key variable the client names is taken out of the daemon's
	// environment as those named at start were (docs/DESIGN.md §7).
	proc.HideVars(cur.hiddenEnv())
	return &resolvedSettings{settings: cur, fileErr: st.fileErr, secrets: proc.SecretValues(st.getenv, cur.hiddenEnv())}
}

// hiddenEnv names the variables no child process gets and whose values
// are scrubbed, besides those internal/proc always treats as keys (any
// *_API_KEY): the one the settings name for the model's key.
func (st Settings) hiddenEnv() []string {
	if p := st.Provider; p != nil && p.APIKeyEnv != "" {
		return []string{p.APIKeyEnv}
	}
	return nil
}

// apply merges a settings object from the client (initializationOptions,
// or a didChangeConfiguration body) into what it sent before and makes the
// result the settings in force. An invalid object changes nothing; its
// error names the field under prefix.
func (st *settingsStore) apply(raw json.RawMessage, prefix string) (Settings, error) {
	var over map[string]any
	if len(raw) > 0 && string(raw) != "null" {
		// Decode into the typed shape first, so that a wrong type is
		// reported with the field's name.
		var typed Settings
		if err := decodeParams(raw, &typed); err != nil {
			return Settings{}, prefixed(err, prefix)
		}
		if err := json.Unmarshal(raw, &over); err != nil {
			return Settings{}, invalidParams("%s: must be an object", strings.TrimSuffix(prefix, "."))
		}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	merged := mergeJSON(st.client, over)
	var client Settings
	if len(merged) > 0 { // most clients send none: then nothing to decode
		body, err := json.Marshal(merged)
		if err != nil {
			return Settings{}, invalidParams("%s: %v", strings.TrimSuffix(prefix, "."), err)
		}
		if err := decodeParams(body, &client); err != nil {
			return Settings{}, prefixed(err, prefix)
		}
	}
	if err := client.validate(prefix); err != nil {
		return Settings{}, err
	}
	if _, err := mcpbridge.ParseConfig(client.MCPServers); err != nil {
		return Settings{}, invalidParams("%s%v", prefix, err)
	}
	st.client = merged
	r := st.resolve(client)
	st.now.Store(r)
	return r.settings.clone(), nil
}

// reset forgets what the client sent (ACP clients send no settings: the
// environment and the config file decide).
func (st *settingsStore) reset() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.client = nil
	st.now.Store(st.resolve(Settings{}))
}

// current returns the settings in force, as a copy the caller may keep.
func (st *settingsStore) current() Settings { return st.now.Load().settings.clone() }

// hooks returns the hooks and the trusted folders in force, without the
// copy current makes: they are read on every tool call, and the caller
// must not change them.
func (st *settingsStore) hooks() (hooks.Config, []string) {
	cur := &st.now.Load().settings
	return cur.Hooks, cur.TrustedFolders
}

// fileProblem returns what is wrong with the config file, if anything.
func (st *settingsStore) fileProblem() error { return st.now.Load().fileErr }

// secrets returns the values redaction scrubs under the settings in
// force. The caller must not change the slice.
func (st *settingsStore) secrets() []string { return st.now.Load().secrets }

// hiddenEnv returns the variables kept from child processes under the
// settings in force (Settings.hiddenEnv).
func (st *settingsStore) hiddenEnv() []string { return st.now.Load().settings.hiddenEnv() }

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

// prefixed puts prefix before the field an invalid-params error names.
func prefixed(err error, prefix string) error {
	var je *jsonrpc2.Error
	if !errors.As(err, &je) {
		return err
	}
	msg := strings.TrimPrefix(je.Message, "invalid params: ")
	if rest, ok := strings.CutPrefix(msg, "params"); ok {
		return invalidParams("%s%s", strings.TrimSuffix(prefix, "."), rest)
	}
	return invalidParams("%s%s", prefix, msg)
}

// CurrentSettings returns the settings in force.
func (s *Server) CurrentSettings() Settings { return s.cfg.current() }

// reportSettingsFile tells the user when their config file was ignored.
func (s *Server) reportSettingsFile() {
	if err := s.cfg.fileProblem(); err != nil {
		s.log.Warn("config file ignored", "err", err)
		s.showMessage(wire.MessageWarning, "cline-ls: "+err.Error()+"; its settings are ignored")
	}
}

// settingsChanged brings the settings in force to every live session: the
// approvals and rules reach their policies at once (each keeps the rules
// its user added with "always"), the provider and model each session's
// next turn (modelSettingsChanged), the checkpoint settings the
// workspace's store, which every session's checkpoints go through.
func (s *Server) settingsChanged() {
	s.reportSettingsFile()
	s.ckpt.SettingsChanged()
	st := s.CurrentSettings()
	s.sandboxWarn.warn(st, s.log, s.showMessage)
	cfg := policyConfig(st)
	live := s.sess.All()
	for _, ls := range live {
		if err := ls.policy.SetConfig(s.acpcfg.policy(ls.ID(), cfg)); err != nil {
			s.log.Warn("settings not applied to a session", "session", ls.ID(), "err", err)
		}
	}
	s.modelSettingsChanged(live)
}
