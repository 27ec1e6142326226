package wire

import (
	"encoding/json"
	"testing"
)

func TestFieldError(t *testing.T) {
	type sessionID string
	var v struct {
		TextDocument struct {
			Version int32 `json:"version"`
		} `json:"textDocument"`
		Session sessionID `json:"sessionId"`
		Limit   *float64  `json:"limit"`
	}
	for _, c := range []struct{ in, at, want string }{
		{`{"textDocument":{"version":"3"}}`, "", "textDocument.version: expected an integer, got string"},
		{`{"sessionId":5}`, "", "sessionId: expected a string, got number"},
		{`{"limit":"x"}`, "settings", "settings.limit: expected a number, got string"},
		{`[]`, "", "params: expected an object, got array"},
		{`{"textDocument":`, "", "params: not valid JSON at byte 16"},
		{`{"a":1,}`, "", "params: not valid JSON at byte 8"},
	} {
		err := json.Unmarshal([]byte(c.in), &v)
		if err == nil {
			t.Fatalf("%s decoded", c.in)
		}
		if got := FieldError(err, c.at); got != c.want {
			t.Errorf("FieldError(%s, %q) = %q, want %q", c.in, c.at, got, c.want)
		}
	}
}
