package proc

import (
	"os"
	"strings"
	"sync"
)

// keys holds the keys taken out of the environment (HideKeys, HideVars),
// by name, and whether HideKeys ran: only then does HideVars change the
// environment (a test's in-process server leaves the test's alone).
var keys struct {
	mu     sync.RWMutex
	hidden map[string]string
	on     bool
}

// Getenv is the daemon's one lookup of its environment: os.Getenv, and
// the keys taken out of the environment, under their names. Everything
// that reads a key (the provider's apiKeyEnv, the default providers'
// variables, redaction's SecretValues) reads it here.
func Getenv(name string) string {
	keys.mu.RLock()
	v, ok := keys.hidden[name]
	keys.mu.RUnlock()
	if ok {
		return v
	}
	return os.Getenv(name)
}

// HideVars hides, as HideKeys did at start, the variables of names that
// are still in the environment: for a variable that the client's settings
// name as holding the key once the daemon runs. It does nothing unless
// HideKeys ran. A child started before the call may have read the value.
func HideVars(names []string) {
	keys.mu.Lock()
	on := keys.on
	keys.mu.Unlock()
	if !on {
		return
	}
	hide(names)
}

// hide moves the variables of the environment that hold a key (set, and
// IsSecret with names as the variables configured to hold one) into
// keys.hidden, and removes them from the environment block (scrub).
func hide(names []string) error {
	keys.mu.Lock()
	defer keys.mu.Unlock()
	keys.on = true
	var secrets []string
	for _, kv := range os.Environ() {
		name, v, _ := strings.Cut(kv, "=")
		if v == "" || !IsSecret(name, names) {
			continue
		}
		if keys.hidden == nil {
			keys.hidden = map[string]string{}
		}
		keys.hidden[name] = strings.Clone(v)
		secrets = append(secrets, kv)
		os.Unsetenv(name)
	}
	if len(secrets) == 0 {
		return nil
	}
	return scrub(secrets)
}

// hiddenValues returns the values of the keys taken out of the
// environment.
func hiddenValues() []string {
	keys.mu.RLock()
	defer keys.mu.RUnlock()
	out := make([]string, 0, len(keys.hidden))
	for _, v := range keys.hidden {
		out = append(out, v)
	}
	return out
}
