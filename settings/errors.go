package settings

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/cline-ls/cline-ls/wire"
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
// the daemon's params are (wire.FieldError).
func decode(data []byte, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		return invalid("%s", wire.FieldError(err, ""))
	}
	return nil
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
