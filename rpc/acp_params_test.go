package rpc

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"
	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/internal/shared"
)

// The ACP params the daemon reads are acp-go-sdk's types, ours beside
// them only where the SDK's cannot say what the daemon must. These tests
// hold each of ours to the ACP schema: a request the schema takes decodes
// through both alike, and the one ours is for is shown.

// paramsError is err as a -32602's message, "" for another error.
func paramsError(err error) string {
	var je *jsonrpc2.Error
	if errors.As(err, &je) && je.Code == jsonrpc2.InvalidParams {
		return je.Message
	}
	return ""
}

func TestACPInitParamsAgainstTheSchema(t *testing.T) {
	schema := shared.LoadACPSchema(t)
	ok := `{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":false},"terminal":true},"clientInfo":{"name":"zed","version":"1"}}`
	if err := schema.Validate("InitializeRequest", []byte(ok)); err != nil {
		t.Fatal(err)
	}
	p, err := decodeACPInit([]byte(ok))
	if err != nil || !p.versioned || p.ProtocolVersion != 1 || !p.ClientCapabilities.Fs.ReadTextFile ||
		p.ClientCapabilities.Fs.WriteTextFile || !p.ClientCapabilities.Terminal {
		t.Fatalf("decoded %+v, %v", p, err)
	}

	// What ours is for: the schema requires protocolVersion, and the
	// SDK's plain number reads its absence as version 0.
	missing, zero := `{"clientCapabilities":{}}`, `{"protocolVersion":0,"clientCapabilities":{}}`
	if schema.Validate("InitializeRequest", []byte(missing)) == nil {
		t.Fatal("the schema takes an initialize without protocolVersion")
	}
	if err := schema.Validate("InitializeRequest", []byte(zero)); err != nil {
		t.Fatal(err)
	}
	var a, b acp.InitializeRequest
	if json.Unmarshal([]byte(missing), &a) != nil || json.Unmarshal([]byte(zero), &b) != nil || a.ProtocolVersion != b.ProtocolVersion {
		t.Fatal("the SDK's InitializeRequest now tells a missing protocolVersion from 0: versionPresence can go")
	}
	if p, _ := decodeACPInit([]byte(missing)); p.versioned {
		t.Error("a missing protocolVersion decoded as present")
	}
	if p, _ := decodeACPInit([]byte(zero)); !p.versioned {
		t.Error("protocolVersion 0 decoded as missing")
	}

	// A member of the wrong type is named.
	_, err = decodeACPInit([]byte(`{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":"yes"}}}`))
	if msg := paramsError(err); !strings.Contains(msg, "clientCapabilities.fs.readTextFile") {
		t.Errorf("a wrong capability: %v, want a -32602 naming clientCapabilities.fs.readTextFile", err)
	}
}

func TestACPSessionParamsAgainstTheSchema(t *testing.T) {
	schema := shared.LoadACPSchema(t)
	ok := `{"sessionId":"s1","cwd":"/w","mcpServers":[{"name":"fs","command":"/bin/fs","args":["-v"],"env":[{"name":"A","value":"b"}]}]}`
	if err := schema.Validate("LoadSessionRequest", []byte(ok)); err != nil {
		t.Fatal(err)
	}
	var load acpLoadParams
	if err := decodeParams([]byte(ok), &load); err != nil || load.SessionId != "s1" || load.Cwd != "/w" || len(load.McpServers) != 1 {
		t.Fatalf("session/load decoded %+v, %v", load, err)
	}
	var sdk acp.LoadSessionRequest
	if err := json.Unmarshal([]byte(ok), &sdk); err != nil || sdk.SessionId != load.SessionId || sdk.Cwd != load.Cwd ||
		len(sdk.McpServers) != 1 || sdk.McpServers[0].Stdio == nil || sdk.McpServers[0].Stdio.Command != "/bin/fs" {
		t.Fatalf("the SDK decoded %+v, %v", sdk, err)
	}
	newReq := `{"cwd":"/w","mcpServers":[]}`
	if err := schema.Validate("NewSessionRequest", []byte(newReq)); err != nil {
		t.Fatal(err)
	}
	var n acpNewParams
	if err := decodeParams([]byte(newReq), &n); err != nil || n.Cwd != "/w" || n.McpServers == nil {
		t.Fatalf("session/new decoded %+v, %v", n, err)
	}

	// What ours is for: a server the schema refuses, which the SDK's
	// union refuses without naming the server or the member.
	bad := `{"cwd":"/w","mcpServers":[{"name":"fs","command":5,"args":[],"env":[]}]}`
	if schema.Validate("NewSessionRequest", []byte(bad)) == nil {
		t.Fatal("the schema takes a command that is a number")
	}
	var sdkNew acp.NewSessionRequest
	err := decodeParams([]byte(bad), &sdkNew)
	if msg := paramsError(err); err == nil || strings.Contains(msg, "mcpServers[0]") || strings.Contains(msg, "command") {
		t.Fatalf("the SDK's McpServer now names the member at fault (%v): decode the servers with it", err)
	}
	if err := decodeParams([]byte(bad), &n); err != nil {
		t.Fatalf("the servers are not left raw for newSession: %v", err)
	}

	// The SDK's plain ones: a member of the wrong type is named.
	var mode acp.SetSessionModeRequest
	if msg := paramsError(decodeParams([]byte(`{"sessionId":5,"modeId":"plan"}`), &mode)); !strings.Contains(msg, "sessionId") {
		t.Errorf("set_mode with a number sessionId: %q, want it named", msg)
	}
	var closeReq acp.CloseSessionRequest
	if err := schema.Validate("CloseSessionRequest", []byte(`{"sessionId":"s1"}`)); err != nil {
		t.Fatal(err)
	}
	if err := decodeParams([]byte(`{"sessionId":"s1"}`), &closeReq); err != nil || closeReq.SessionId != "s1" {
		t.Errorf("session/close decoded %+v, %v", closeReq, err)
	}
}

func TestSetConfigParamsAgainstTheSchema(t *testing.T) {
	schema := shared.LoadACPSchema(t)
	for _, ok := range []string{
		`{"sessionId":"s1","configId":"mode","value":"plan"}`,
		`{"sessionId":"s1","configId":"x","type":"boolean","value":true}`,
	} {
		if err := schema.Validate("SetSessionConfigOptionRequest", []byte(ok)); err != nil {
			t.Fatal(err)
		}
		var ours setConfigParams
		var sdk acp.SetSessionConfigOptionRequest
		if decodeParams([]byte(ok), &ours) != nil || json.Unmarshal([]byte(ok), &sdk) != nil {
			t.Fatalf("%s does not decode", ok)
		}
		sid, cid := "", ""
		switch {
		case sdk.ValueId != nil:
			sid, cid = string(sdk.ValueId.SessionId), string(sdk.ValueId.ConfigId)
		case sdk.Boolean != nil:
			sid, cid = string(sdk.Boolean.SessionId), string(sdk.Boolean.ConfigId)
		}
		if sid != ours.SessionID || cid != ours.ConfigID {
			t.Errorf("%s: ours %+v, the SDK's %+v", ok, ours, sdk)
		}
	}

	// What ours is for: the SDK's union answers a member of the wrong
	// type without naming it.
	bad := `{"sessionId":5,"configId":"mode","value":"plan"}`
	if schema.Validate("SetSessionConfigOptionRequest", []byte(bad)) == nil {
		t.Fatal("the schema takes a number sessionId")
	}
	var sdk acp.SetSessionConfigOptionRequest
	if msg := paramsError(decodeParams([]byte(bad), &sdk)); strings.Contains(msg, "sessionId") {
		t.Fatalf("the SDK's union now names the member at fault (%q): decode into it", msg)
	}
	var ours setConfigParams
	if msg := paramsError(decodeParams([]byte(bad), &ours)); !strings.Contains(msg, "sessionId") {
		t.Errorf("ours: %q, want a -32602 naming sessionId", msg)
	}
}

// Ours beside an SDK type embed it; a -32602 names the member as it is
// on the wire, not the embedded Go type, and the SDK's named types by
// what they are made of.
func TestEmbeddedSDKTypesNameTheMember(t *testing.T) {
	var n acpNewParams
	if msg := paramsError(decodeParams([]byte(`{"cwd":5,"mcpServers":[]}`), &n)); !strings.Contains(msg, "params: cwd: expected a string, got number") {
		t.Errorf("session/new with a number cwd: %q", msg)
	}
	var l acpLoadParams
	if msg := paramsError(decodeParams([]byte(`{"cwd":"/w","sessionId":5,"mcpServers":[]}`), &l)); !strings.Contains(msg, "params: sessionId: expected a string, got number") {
		t.Errorf("session/load with a number sessionId: %q", msg)
	}
	if _, err := decodeACPInit([]byte(`{"protocolVersion":"1"}`)); !strings.Contains(paramsError(err), "protocolVersion: expected an integer, got string") {
		t.Errorf("initialize with a string protocolVersion: %v", err)
	}
}
