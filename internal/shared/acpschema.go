package shared

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// ACPSchema validates what the daemon sends against ACP's schema
// (acp/schema.json): a whole message (Check) — the JSON-RPC envelope
// against the schema's "Agent" branch, and each payload against the
// definition for its method (found through the definitions' x-side /
// x-method tags), since the envelope alone admits any "extension" payload
// — or one value against a named definition (Validate). Everything is
// resolved once, as one schema over {"message": <the message>, "key":
// "<side> <kind> <method>" or "def <name>", "payload": ...}.
type ACPSchema struct {
	rs   *jsonschema.Resolved
	keys map[string]bool
	defs map[string]any
}

// LoadACPSchema returns the schema, or skips t when the conformance data
// is absent. It is read and resolved once per test binary (resolving takes
// seconds under the race detector) and is safe for concurrent use.
func LoadACPSchema(t testing.TB) *ACPSchema {
	t.Helper()
	Conformance(t)
	as, err := acpSchema()
	if err != nil {
		t.Fatal(err)
	}
	return as
}

// acpSchema is called once Conformance has found the data.
var acpSchema = sync.OnceValues(func() (*ACPSchema, error) {
	c, err := Find()
	if err != nil {
		return nil, err
	}
	return readACPSchema(filepath.Join(c, "acp", "schema.json"))
})

func readACPSchema(path string) (*ACPSchema, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var root map[string]any
	if err := json.Unmarshal(b, &root); err != nil {
		return nil, err
	}
	defs := root["$defs"].(map[string]any)
	as := &ACPSchema{keys: map[string]bool{}, defs: defs}
	var branches []any
	branch := func(key, def string) {
		as.keys[key] = true
		branches = append(branches, map[string]any{
			"properties": map[string]any{"key": map[string]any{"const": key}, "payload": map[string]any{"$ref": "#/$defs/" + def}},
			"required":   []any{"key"},
		})
	}
	for name, def := range defs {
		branch("def "+name, name)
		d, _ := def.(map[string]any)
		side, _ := d["x-side"].(string)
		method, _ := d["x-method"].(string)
		var kind string
		switch {
		case side == "" || method == "":
			continue
		case strings.HasSuffix(name, "Request"):
			kind = "request"
		case strings.HasSuffix(name, "Response"):
			kind = "response"
		case strings.HasSuffix(name, "Notification"):
			kind = "notification"
		default:
			continue
		}
		if side == "protocol" { // both ways ($/cancel_request): the client handles it too
			side = "client"
		}
		branch(side+" "+kind+" "+method, name)
	}
	branches = append(branches, map[string]any{"properties": map[string]any{"key": map[string]any{"const": "error"}}, "required": []any{"key"}})
	doc := map[string]any{
		"$schema": root["$schema"],
		"$defs":   defs,
		"type":    "object",
		"properties": map[string]any{
			"message": map[string]any{"anyOf": root["anyOf"].([]any)[:1]}, // the "Agent" branch
		},
		"anyOf": branches,
	}
	b, _ = json.Marshal(doc)
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	if as.rs, err = s.Resolve(nil); err != nil {
		return nil, err
	}
	return as, nil
}

// Check validates one message the daemon sent; requests maps the ids of
// the client's requests to their methods, to type the responses.
func (as *ACPSchema) Check(line string, requests map[string]string) error {
	var v map[string]any
	if err := json.Unmarshal([]byte(line), &v); err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	var key string
	var payload any
	switch {
	case v["method"] != nil && v["id"] != nil:
		key, payload = fmt.Sprintf("client request %v", v["method"]), v["params"]
	case v["method"] != nil:
		key, payload = fmt.Sprintf("client notification %v", v["method"]), v["params"]
	case v["result"] != nil:
		id, _ := json.Marshal(v["id"])
		key, payload = "agent response "+requests[string(id)], v["result"]
	default:
		key = "error" // an error response: the envelope covers it
	}
	if key != "error" && !as.keys[key] {
		return fmt.Errorf("no ACP definition for %q", key)
	}
	if err := as.rs.Validate(map[string]any{"message": v, "key": key, "payload": payload}); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

// Validate checks data, one JSON value, against the definition named def
// (for example "SessionUpdate").
func (as *ACPSchema) Validate(def string, data []byte) error {
	if !as.keys["def "+def] {
		return fmt.Errorf("the schema has no definition %q", def)
	}
	var payload any
	if err := json.Unmarshal(data, &payload); err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if err := as.rs.Validate(map[string]any{"key": "def " + def, "payload": payload}); err != nil {
		return fmt.Errorf("%s: %w", def, err)
	}
	return nil
}

// Enum returns the string values a definition allows: its "const"s under
// oneOf or anyOf, or its "enum".
func (as *ACPSchema) Enum(def string) []string {
	d, _ := as.defs[def].(map[string]any)
	var out []string
	for _, k := range []string{"oneOf", "anyOf"} {
		alts, _ := d[k].([]any)
		for _, a := range alts {
			if c, ok := a.(map[string]any)["const"].(string); ok {
				out = append(out, c)
			}
		}
	}
	for _, e := range asSlice(d["enum"]) {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func asSlice(v any) []any { s, _ := v.([]any); return s }
