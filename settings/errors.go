package settings

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// InvalidError is a settings value refused, naming its field. Its text is
// what the client is answered (-32602) and what the config file's
// warning says, so both read the same.
type InvalidError struct{ Msg string }

func (e *InvalidError) Error() string { return "invalid params: " + e.Msg }

func invalid(format string, args ...any) *InvalidError {
	return &InvalidError{Msg: fmt.Sprintf(format, args...)}
}

// decode decodes a settings object, a wrong type named by its field as
// the daemon's params are.
func decode(data []byte, v any) error {
	err := json.Unmarshal(data, v)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "params"
		}
		return invalid("%s: expected %s, got %s", field, jsonKind(te.Type.String()), te.Value)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return invalid("params: not valid JSON at byte %d", se.Offset)
	}
	return invalid("params: %v", err)
}

// jsonKind names the JSON a Go type decodes from.
func jsonKind(t string) string {
	switch {
	case strings.Contains(t, "int"):
		return "an integer"
	case strings.Contains(t, "float"):
		return "a number"
	case t == "string":
		return "a string"
	case t == "bool":
		return "a boolean"
	case strings.HasPrefix(t, "[]"):
		return "an array"
	case strings.HasPrefix(t, "map"), strings.Contains(t, "."):
		return "an object"
	}
	return t
}

// prefixed puts prefix before the field an error of decode or Validate
// names: the client's settings arrive inside initializationOptions or a
// didChangeConfiguration body.
func prefixed(err error, prefix string) error {
	var ie *InvalidError
	if !errors.As(err, &ie) {
		return err
	}
	if rest, ok := strings.CutPrefix(ie.Msg, "params"); ok {
		return invalid("%s%s", strings.TrimSuffix(prefix, "."), rest)
	}
	return invalid("%s%s", prefix, ie.Msg)
}
