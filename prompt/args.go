package prompt

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/cline-ls/cline-ls/tools"
)

// ToolParams maps each spec's name to the names of its parameters (the
// properties of its object schema), which is what NewParser needs to know.
// A spec whose schema cannot be read gets no parameters: its calls still
// parse, and validation then says what is missing.
func ToolParams(specs []tools.Spec) map[string][]string {
	known := make(map[string][]string, len(specs))
	for _, s := range specs {
		props := schemaProperties(s.Parameters)
		names := make([]string, 0, len(props))
		for name := range props {
			names = append(names, name)
		}
		slices.Sort(names)
		known[s.Name] = names
	}
	return known
}

// Args converts the call's text values into the JSON arguments a tool's
// Build takes, guided by the tool's parameter schema: strings stay
// strings, and a value for a number, integer, boolean, array or object
// parameter is used as JSON when it is valid JSON of that kind. Anything
// else stays a string, so validation can tell the model which field is
// wrong instead of the call being lost here.
func (c ToolCall) Args(schema json.RawMessage) json.RawMessage {
	props := schemaProperties(schema)
	args := make(map[string]json.RawMessage, len(c.Params))
	for name, value := range c.Params {
		args[name] = argValue(value, props[name].types())
	}
	// Marshalling a map sorts its keys, which keeps the result stable.
	raw, err := json.Marshal(args)
	if err != nil {
		return json.RawMessage("{}") // unreachable: every value is valid JSON
	}
	return raw
}

type propertySchema struct {
	Type json.RawMessage `json:"type"`
}

// types reads "type", which JSON Schema allows to be a name or a list.
func (p propertySchema) types() []string {
	var one string
	if json.Unmarshal(p.Type, &one) == nil {
		return []string{one}
	}
	var many []string
	_ = json.Unmarshal(p.Type, &many) // no type: treated as a string below
	return many
}

func schemaProperties(schema json.RawMessage) map[string]propertySchema {
	var s struct {
		Properties map[string]propertySchema `json:"properties"`
	}
	_ = json.Unmarshal(schema, &s) // unreadable schema: no known properties
	return s.Properties
}

func argValue(value string, types []string) json.RawMessage {
	trimmed := bytes.TrimSpace([]byte(value))
	for _, t := range types {
		if fitsType(trimmed, t) {
			return json.RawMessage(trimmed)
		}
	}
	raw, _ := json.Marshal(value) // a string always marshals
	return raw
}

func fitsType(v []byte, typ string) bool {
	if len(v) == 0 || !json.Valid(v) {
		return false
	}
	switch typ {
	case "integer", "number":
		return v[0] == '-' || ('0' <= v[0] && v[0] <= '9')
	case "boolean":
		return string(v) == "true" || string(v) == "false"
	case "array":
		return v[0] == '['
	case "object":
		return v[0] == '{'
	case "null":
		return string(v) == "null"
	}
	return false
}
