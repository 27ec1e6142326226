package proc

import (
	"os"
	"strings"
)

// hiddenKeys holds the keys HideKeys took out of the environment, by name.
// It is written once, at start, before any goroutine of ours runs, and
// only read after.
var hiddenKeys map[string]string

// Getenv is the daemon's one lookup of its environment: os.Getenv, and
// the keys that HideKeys took out of the environment, under their names.
// Everything that reads a key (the provider's apiKeyEnv, the default
// providers' variables, redaction's SecretValues) reads it here.
func Getenv(name string) string {
	if v, ok := hiddenKeys[name]; ok {
		return v
	}
	return os.Getenv(name)
}

// takeSecrets moves the variables of the environment that hold a key (set,
// and IsSecret with named as the variables configured to hold one) into
// hiddenKeys, and returns them as they were, NAME=VALUE.
func takeSecrets(named []string) []string {
	var secrets []string
	for _, kv := range os.Environ() {
		name, v, _ := strings.Cut(kv, "=")
		if v == "" || !IsSecret(name, named) {
			continue
		}
		if hiddenKeys == nil {
			hiddenKeys = map[string]string{}
		}
		hiddenKeys[name] = strings.Clone(v)
		secrets = append(secrets, kv)
		os.Unsetenv(name)
	}
	return secrets
}
