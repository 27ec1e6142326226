package rpc

import (
	"encoding/json"

	"github.com/cline-ls/cline-ls/settings"
	"github.com/cline-ls/cline-ls/wire"
)

// newSettingsStore makes the connection's settings store (package
// settings), its refusals answered -32602.
func newSettingsStore(getenv func(string) string, readFile func(string) ([]byte, error)) *settings.Store {
	return settings.NewStore(settings.Options{Getenv: getenv, ReadFile: readFile,
		Invalid: func(msg string) error { return invalidParams("%s", msg) }})
}

// didChangeConfigParams are workspace/didChangeConfiguration's params:
// the settings object, decoded by the store.
type didChangeConfigParams struct {
	Settings json.RawMessage `json:"settings"`
}

// nestedSettings is the settings object of a client that nests ours
// under "cline".
type nestedSettings struct {
	Cline *json.RawMessage `json:"cline"`
}

// CurrentSettings returns the settings in force.
func (s *Server) CurrentSettings() settings.Settings { return s.cfg.Current() }

// reportSettingsFile tells the user when their config file was ignored.
func (s *Server) reportSettingsFile() {
	if err := s.cfg.FileProblem(); err != nil {
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
	s.acpcfg.modelSettingsChanged(live)
}
