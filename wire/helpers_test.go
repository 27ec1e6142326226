package wire_test

import (
	"encoding/json"
	"testing"
)

// mustMember returns the member key of the object data.
func mustMember(t *testing.T, data []byte, key string) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m[key]
}
