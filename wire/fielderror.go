package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
)

// FieldError is what a JSON decoding error found wrong, naming the member
// at fault ("textDocument.version: expected an integer, got string")
// rather than a byte offset: the one wording of the daemon's -32602
// answers and of its refusals of settings. at is the path of the value
// decoded, "" for the params themselves.
func FieldError(err error, at string) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		switch {
		case at != "" && field != "":
			field = at + "." + field
		case at != "":
			field = at
		case field == "":
			field = "params"
		}
		return fmt.Sprintf("%s: expected %s, got %s", field, JSONKind(te.Type), te.Value)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("params: not valid JSON at byte %d", se.Offset)
	}
	return fmt.Sprintf("params: %v", err)
}

// JSONKind names the JSON value a Go type decodes from, as an author of
// JSON would; a named type (the ACP SDK's SessionId, a string) by what it
// is made of, a pointer by what it points to.
func JSONKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return JSONKind(t.Elem())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return t.String()
}
