// Package proc owns the daemon's child processes: it starts them so that
// they die with the daemon, finds everything a command leaves behind
// (process group, descendants, orphans re-parented to the daemon) and
// kills it, and builds the environment every child starts with.
//
// The kernel state it manages is the process's own (one child subreaper
// attribute, one thread that children are forked from, one watchdog), so
// it is kept here once per process rather than per connection.
package proc

import (
	"os"
	"strings"
)

// OwnerVar is the variable that marks every process a Group starts, and
// their descendants, with the group's token. A process that left the
// group's process group and its parent chain (setsid plus a double fork)
// is still found by it.
const OwnerVar = "CLINE_LS_OWNER"

// IsSecret reports whether a variable holds a secret key, which must not
// reach a child and whose value is scrubbed from what the daemon shows or
// stores: any name that ends in _API_KEY (ANTHROPIC_API_KEY,
// OPENAI_API_KEY, GEMINI_API_KEY, GOOGLE_API_KEY, OPENROUTER_API_KEY...)
// or is one of hidden (the configured provider key variable, whatever its
// name). It is the one rule for both uses.
func IsSecret(name string, hidden []string) bool {
	if strings.HasSuffix(strings.ToUpper(name), "_API_KEY") {
		return true
	}
	for _, h := range hidden {
		if h != "" && name == h {
			return true
		}
	}
	return false
}

// knownKeyVars are the key variables of the providers the daemon speaks
// to: where the environment cannot be listed, SecretValues looks these up.
var knownKeyVars = []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENROUTER_API_KEY"}

// minSecretLen is the shortest value SecretValues reports: scrubbing a
// shorter one would mangle ordinary text.
const minSecretLen = 8

// SecretValues returns the values, read with getenv, of the secret
// variables (IsSecret) among the well-known key variables and named, and
// every key taken out of the environment (HideKeys, HideVars): what
// redaction scrubs.
func SecretValues(getenv func(string) string, named []string) []string {
	var out []string
	for _, names := range [][]string{knownKeyVars, named} {
		for _, n := range names {
			if n == "" || !IsSecret(n, named) {
				continue
			}
			if v := getenv(n); len(v) >= minSecretLen {
				out = append(out, v)
			}
		}
	}
	for _, v := range hiddenValues() {
		if len(v) >= minSecretLen {
			out = append(out, v)
		}
	}
	return out
}

// Env builds a child's environment: base (the daemon's own when nil)
// without secrets (IsSecret) and without another owner's mark, then set,
// which is added as given, so a variable a configuration names explicitly
// is passed even when it looks like a key. Every spawn goes through it.
func Env(base, hidden, set []string) []string {
	if base == nil {
		base = os.Environ()
	}
	out := make([]string, 0, len(base)+len(set)+1)
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		if IsSecret(name, hidden) || name == OwnerVar {
			continue
		}
		out = append(out, kv)
	}
	return append(out, set...)
}
