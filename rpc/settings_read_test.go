package rpc

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/internal/jsonrpcclient"
)

// TestConfigFileReadOncePerStart: the user's config file is read once per
// connection, however many times the settings are resolved after
// (initializationOptions, each didChangeConfiguration, an ACP reset), and
// what it says still fills what the client left unset.
func TestConfigFileReadOncePerStart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a failure guard
	defer cancel()
	cfgDir := t.TempDir()
	os.MkdirAll(filepath.Join(cfgDir, "cline-ls"), 0o755)
	name := filepath.Join(cfgDir, "cline-ls", "config.json")
	os.WriteFile(name, []byte(`{"maxTurns": 9}`), 0o644)
	getenv := func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return cfgDir
		}
		return ""
	}
	var mu sync.Mutex
	reads := 0
	s := NewServer(Options{Getenv: getenv})
	s.cfg = newSettingsStore(getenv, func(n string) ([]byte, error) {
		if n == name {
			mu.Lock()
			reads++
			mu.Unlock()
		}
		return os.ReadFile(n)
	})

	srvEnd, cliEnd := net.Pipe()
	served := make(chan struct{})
	go func() {
		defer close(served)
		s.Serve(context.Background(), srvEnd, srvEnd)
		srvEnd.Close()
	}()
	c := jsonrpcclient.New(cliEnd, cliEnd, jsonrpcclient.Options{})
	defer func() { c.Close(); <-served; <-c.Done() }()
	if err := c.Call(ctx, methodInitialize, map[string]any{"processId": nil, "rootUri": nil, "capabilities": map[string]any{},
		"initializationOptions": map[string]any{"mode": "plan"}}, nil); err != nil {
		t.Fatal(err)
	}
	c.Notify(ctx, methodDidChangeCfg, map[string]any{"settings": map[string]any{"mode": "yolo"}})
	c.Notify(ctx, methodDidChangeCfg, map[string]any{"settings": map[string]any{"mode": "act"}})
	if err := c.Call(ctx, methodShutdown, nil, nil); err != nil { // after the notifications, in wire order
		t.Fatal(err)
	}
	if st := s.CurrentSettings(); st.Mode != "act" || st.MaxTurns != 9 {
		t.Errorf("settings = mode %q, maxTurns %d; want act from the client and 9 from the config file", st.Mode, st.MaxTurns)
	}
	mu.Lock()
	defer mu.Unlock()
	if reads != 1 {
		t.Errorf("the config file was read %d times; want once per start", reads)
	}
}
