package acppeer

import (
	"encoding/json"
	"testing"

	"github.com/cline-ls/cline-ls/internal/shared"
)

// The terminal answers are read in the SDK's types: answers the ACP
// schema takes decode into them with what the tools need.
func TestTerminalAnswersAgainstTheSchema(t *testing.T) {
	schema := shared.LoadACPSchema(t)
	check := func(def, answer string, into any) {
		t.Helper()
		if err := schema.Validate(def, []byte(answer)); err != nil {
			t.Fatalf("%s: %v", def, err)
		}
		if err := json.Unmarshal([]byte(answer), into); err != nil {
			t.Fatalf("%s does not decode: %v", def, err)
		}
	}
	var c createResult
	check("CreateTerminalResponse", `{"terminalId":"t1"}`, &c)
	var w waitResult
	check("WaitForTerminalExitResponse", `{"exitCode":null,"signal":"SIGKILL"}`, &w)
	var o outputResult
	check("TerminalOutputResponse", `{"output":"x","truncated":true,"exitStatus":{"exitCode":1}}`, &o)
	if c.TerminalId != "t1" || w.ExitCode != nil || w.Signal == nil || *w.Signal != "SIGKILL" ||
		o.Output != "x" || !o.Truncated || o.ExitStatus == nil || *o.ExitStatus.ExitCode != 1 {
		t.Errorf("decoded %+v %+v %+v", c, w, o)
	}
	if x := exitOf(w.ExitCode, w.Signal); x.ExitCode != nil || x.Signal != "SIGKILL" {
		t.Errorf("exit = %+v", x)
	}
}
