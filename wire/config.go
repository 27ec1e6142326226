package wire

import "encoding/json"

// ConfigOption is one of a session's ACP config options of the select
// kind (mode, model, approval level), with its current value and choices.
type ConfigOption struct {
	Category     string        `json:"category,omitempty"`
	CurrentValue string        `json:"currentValue"`
	Description  string        `json:"description,omitempty"`
	ID           string        `json:"id"`
	Name         string        `json:"name"`
	Options      []ConfigValue `json:"options"`
	Type         string        `json:"type"`
}

// ConfigValue is one choice of a ConfigOption.
type ConfigValue struct {
	Description string `json:"description,omitempty"`
	Name        string `json:"name"`
	Value       string `json:"value"`
}

// SetConfigOptionParams are session/set_config_option's params.
type SetConfigOptionParams struct {
	ConfigID  string          `json:"configId"`
	SessionID string          `json:"sessionId"`
	Type      string          `json:"type,omitempty"`
	Value     json.RawMessage `json:"value"`
}

// SetConfigOptionResult is session/set_config_option's answer: every
// option, as the change left them.
type SetConfigOptionResult struct {
	ConfigOptions []ConfigOption `json:"configOptions"`
}

// ConfigOptionUpdate says a session's config options changed.
type ConfigOptionUpdate struct {
	ConfigOptions []ConfigOption `json:"configOptions"`
}

func (ConfigOptionUpdate) UpdateKind() string { return "config_option_update" }
func (ConfigOptionUpdate) sessionUpdate()     {}

// MarshalJSON encodes u with its sessionUpdate.
func (u ConfigOptionUpdate) MarshalJSON() ([]byte, error) {
	type plain ConfigOptionUpdate
	if u.ConfigOptions == nil {
		u.ConfigOptions = []ConfigOption{}
	}
	return tagged("sessionUpdate", u.UpdateKind(), plain(u))
}
