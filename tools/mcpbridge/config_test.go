package mcpbridge

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestParseConfig(t *testing.T) {
	raw := []json.RawMessage{
		json.RawMessage(`{"name":"fs","command":"/usr/bin/mcp-fs","args":["--root","/tmp"],"env":[{"name":"A","value":"1"}],"_meta":{"x":1}}`),
		json.RawMessage(`{"type":"http","name":"web","url":"https://example.com/mcp","headers":[{"name":"Authorization","value":"Bearer k"}]}`),
		json.RawMessage(`{"type":"sse","name":"old","url":"http://127.0.0.1:9/sse","headers":[]}`),
		json.RawMessage(`{"name":"off","command":"x","args":[],"env":[],"disabled":true}`),
	}
	got, err := ParseConfig(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := []ServerConfig{
		{Name: "fs", Command: "/usr/bin/mcp-fs", Args: []string{"--root", "/tmp"}, Env: []NameValue{{"A", "1"}}},
		{Name: "web", Type: "http", URL: "https://example.com/mcp", Headers: []NameValue{{"Authorization", "Bearer k"}}},
		{Name: "old", Type: "sse", URL: "http://127.0.0.1:9/sse", Headers: []NameValue{}},
		{Name: "off", Command: "x", Args: []string{}, Env: []NameValue{}, Disabled: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseConfig =\n%+v\nwant\n%+v", got, want)
	}
	if tr := []string{got[0].Transport(), got[1].Transport(), got[2].Transport()}; !reflect.DeepEqual(tr, []string{"stdio", "http", "sse"}) {
		t.Errorf("transports = %v", tr)
	}
	if got, err := ParseConfig(nil); err != nil || len(got) != 0 {
		t.Errorf("ParseConfig(nil) = %v, %v", got, err)
	}
}

func TestParseConfigErrors(t *testing.T) {
	ok := `{"name":"ok","command":"x"}`
	cases := []struct{ entry, want string }{
		{`{"command":"x"}`, "mcpServers[1].name: required"},
		{`{"name":"  ","command":"x"}`, "mcpServers[1].name: required"},
		{`{"name":"ok","command":"y"}`, `mcpServers[1].name: "ok" is already the name of mcpServers[0]`},
		{`{"name":"s"}`, "mcpServers[1].command: required"},
		{`{"name":"s","command":"x","args":"--flag"}`, "mcpServers[1].args: must be an array, got string"},
		{`{"name":"s","command":"x","args":[1]}`, "mcpServers[1].args: must be a string, got number"},
		{`{"name":"s","command":"x","env":{"A":"1"}}`, "mcpServers[1].env: must be an array, got object"},
		{`{"name":"s","command":"x","env":[{"name":"A=B","value":"1"}]}`, `mcpServers[1].env[0].name: must be a non-empty name without "="`},
		{`{"name":"s","command":"x","disabled":"yes"}`, "mcpServers[1].disabled: must be a boolean, got string"},
		{`{"type":"http","name":"h"}`, "mcpServers[1].url: required"},
		{`{"type":"http","name":"h","url":"example.com/mcp"}`, "mcpServers[1].url: must be an absolute http or https URL"},
		{`{"type":"sse","name":"h","url":"ftp://example.com"}`, "mcpServers[1].url: must be an absolute http or https URL"},
		{`{"type":"http","name":"h","url":"http://h","headers":[{"name":"Bad Name","value":"v"}]}`, "mcpServers[1].headers[0].name: must be a header name"},
		{`{"type":"http","name":"h","url":"http://h","headers":[{"name":"X","value":"a\nb"}]}`, "mcpServers[1].headers[0].value: must be one line"},
		{`{"type":"ws","name":"h","url":"ws://h"}`, `mcpServers[1].type: must be "http", "sse" or absent (stdio), got "ws"`},
		{`{"name":"s","command":"x","timeoutSeconds":0}`, "mcpServers[1].timeoutSeconds: must be between 1 and 3600, got 0"},
		{`{"name":"s","command":"x","timeoutSeconds":-5}`, "mcpServers[1].timeoutSeconds: must be between 1 and 3600, got -5"},
		{`{"name":"s","command":"x","timeoutSeconds":0.5}`, "mcpServers[1].timeoutSeconds: must be between 1 and 3600, got 0.5"},
		{`{"name":"s","command":"x","timeoutSeconds":86400}`, "mcpServers[1].timeoutSeconds: must be between 1 and 3600, got 86400"},
		{`{"name":"s","command":"x","timeoutSeconds":"60"}`, "mcpServers[1].timeoutSeconds: must be a number, got string"},
		{`[]`, "mcpServers[1]: must be an object, got array"},
		{`{"name":`, "mcpServers[1]:"},
	}
	for _, c := range cases {
		_, err := ParseConfig([]json.RawMessage{json.RawMessage(ok), json.RawMessage(c.entry)})
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("ParseConfig(%s) error = %v, want it to start with %q", c.entry, err, c.want)
		}
	}
	if _, err := New([]ServerConfig{{Name: "x"}}, Options{}); err == nil || !strings.Contains(err.Error(), "command: required") {
		t.Errorf("New with a bad config: %v", err)
	}
}
