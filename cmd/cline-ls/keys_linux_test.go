//go:build linux

package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/internal/jsonrpcclient"
	"github.com/cline-ls/cline-ls/internal/testbin"
)

// The keys the daemon under test holds: two well-known key variables and
// one whose name does not look like a key, named by CLINE_LS_API_KEY_ENV.
var plantedKeys = map[string]string{
	"ANTHROPIC_API_KEY": "sk-ant-planted-parent-0123456789abcdef",
	"OPENAI_API_KEY":    "sk-openai-planted-parent-0123456789abcdef",
	"MY_TOKEN":          "tok-planted-parent-0123456789abcdef",
}

// probeScript is what a command, a background command, git's fsmonitor
// hook, a user's PreToolUse hook and an MCP server run: every way a child has of reading the
// daemon's environment and memory, into files of the workspace ($1 names
// them). The memory is searched for the keys, given
// hex-encoded so that the command's own text does not hold them.
const probeScript = `n=$1; shift
# The daemon is the nearest ancestor named cline-ls (git runs its hook
# through a shell of its own).
p=$PPID
while [ "$p" -gt 1 ] && [ "$(cut -d' ' -f2 /proc/$p/stat)" != "(cline-ls)" ]; do p=$(cut -d' ' -f4 /proc/$p/stat); done
cat /proc/$p/environ > leak-$n-environ 2>&1
od -c /proc/$p/environ > leak-$n-od 2>&1
rev /proc/$p/environ > leak-$n-rev 2>&1
for f in /proc/$p/task/*/environ; do cat "$f"; done > leak-$n-task 2>&1
for f in /proc/$p/fd/*; do case $(readlink "$f") in *memfd*|*.json*|*.jsonl*) timeout 1 cat "$f" </dev/null ;; esac; done > leak-$n-fd 2>&1
# git status gives its hook 2 s; reading memory that is readable takes
# longer (git starts from the thread every child starts from, so its hook
# gets the same limits).
[ $n = git ] || python3 probe_mem.py $p "$@" > leak-$n-mem 2>&1
echo probed > probed-$n
`

const probeMem = `import sys
pid, keys = sys.argv[1], [bytes.fromhex(k) for k in sys.argv[2:]]
try:
    mem = open("/proc/%s/mem" % pid, "rb", 0)
    maps = open("/proc/%s/maps" % pid).read().splitlines()
except OSError as e:
    print("denied:", e); sys.exit(0)
read = 0
for line in maps:
    f = line.split()
    if f[1][0] != "r":
        continue
    lo, hi = (int(x, 16) for x in f[0].split("-"))
    try:
        mem.seek(lo)
        b = mem.read(min(hi - lo, 64 << 20))
    except OSError as e:
        print("region", f[0], e); continue
    read += len(b)
    for i, k in enumerate(keys):
        if k in b:
            print("FOUND key", i, "in", f[0], f[-1])
print("read", read, "bytes")
`

// TestChildrenCannotReadTheDaemonsKeys runs the real daemon with keys in
// its environment, as root and as nobody, and has a command, a background
// command, git's fsmonitor hook and a stdio MCP server read the daemon's environment (directly, through od and
// rev, per thread), its open files and its memory: no key may be in what
// they read, in the files they write or in what the daemon prints.
func TestChildrenCannotReadTheDaemonsKeys(t *testing.T) {
	bin := testbin.CLI(t)
	users := []string{"self"}
	if os.Geteuid() == 0 {
		users = append(users, "nobody")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is needed to read the daemon's memory")
	}
	for _, user := range users {
		t.Run(user, func(t *testing.T) {
			base := t.TempDir()
			for _, d := range []string{filepath.Dir(base), base} {
				os.Chmod(d, 0o777)
			}
			mk := func(parts ...string) string {
				p := filepath.Join(append([]string{base}, parts...)...)
				if err := os.MkdirAll(p, 0o777); err != nil {
					t.Fatal(err)
				}
				os.Chmod(p, 0o777)
				return p
			}
			work, state, config := mk("work"), mk("state"), mk("config", "cline-ls")
			write := func(path, text string) {
				if err := os.WriteFile(path, []byte(text), 0o666); err != nil {
					t.Fatal(err)
				}
				os.Chmod(path, 0o666)
			}
			var hexKeys []string
			for _, k := range plantedKeys {
				hexKeys = append(hexKeys, hex.EncodeToString([]byte(k)))
			}
			write(filepath.Join(work, "probe.sh"), probeScript)
			write(filepath.Join(work, "probe_mem.py"), probeMem)
			// A user-level hook (the config file's hooks always run) probes
			// as well, before each command.
			hook := "sh " + filepath.Join(work, "probe.sh") + " hook " + strings.Join(hexKeys, " ")
			mcp, _ := json.Marshal(map[string]any{"mcpServers": []any{map[string]any{
				"name": "probe", "command": "sh", "args": append([]string{filepath.Join(work, "probe.sh"), "mcp"}, hexKeys...)}},
				"hooks": map[string]any{"PreToolUse": []any{map[string]any{"matcher": "Bash", "hooks": []any{map[string]any{"type": "command", "command": hook}}}}}})
			write(filepath.Join(config, "config.json"), string(mcp))
			probe := func(n string) string { return "sh probe.sh " + n + " " + strings.Join(hexKeys, " ") }
			// The turn's context runs git status, which runs the
			// repository's fsmonitor hook.
			if out, err := exec.Command("git", "init", "-q", work).CombinedOutput(); err != nil {
				t.Fatalf("git init: %v\n%s", err, out)
			}
			if out, err := exec.Command("git", "-C", work, "config", "core.fsmonitor", probe("git")).CombinedOutput(); err != nil {
				t.Fatalf("git config: %v\n%s", err, out)
			}
			// The foreground command waits for the background one's probe
			// (a guard of 10 s): the background command dies with the
			// daemon.
			wait := probe("cmd") + "; i=0; while [ ! -e probed-bg ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done"
			tr, _ := json.Marshal(map[string]any{"model": "replay", "replies": []any{
				map[string]any{"events": []any{map[string]any{"tool_call": map[string]any{"id": "c1", "name": "run_commands",
					"args": map[string]any{"commands": []string{probe("bg")}, "background": true}}}}},
				map[string]any{"events": []any{map[string]any{"tool_call": map[string]any{"id": "c2", "name": "run_commands",
					"args": map[string]any{"commands": []string{wait}}}}}},
				map[string]any{"events": []any{map[string]any{"text": "Done."}}},
			}})
			tpath := filepath.Join(base, "transcript.json")
			write(tpath, string(tr))
			ownBin := filepath.Join(base, "cline-ls")
			data, err := os.ReadFile(bin)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(ownBin, data, 0o755); err != nil {
				t.Fatal(err)
			}
			daemon := exec.Command(ownBin, "exec", "--provider", "replay", "--transcript", tpath, "--approve", "allow", "probe")
			daemon.Dir = work
			daemon.Env = append(os.Environ(), "XDG_STATE_HOME="+state, "XDG_CONFIG_HOME="+filepath.Dir(config),
				"HOME="+base, "CLINE_LS_API_KEY_ENV=MY_TOKEN")
			for k, v := range plantedKeys {
				daemon.Env = append(daemon.Env, k+"="+v)
			}
			if user == "nobody" {
				// git works only in a repository of its user's.
				filepath.WalkDir(work, func(p string, _ os.DirEntry, _ error) error { return os.Lchown(p, 65534, 65534) })
				daemon.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
			}
			done := make(chan struct{})
			var out []byte
			go func() {
				defer close(done)
				out, err = daemon.CombinedOutput()
			}()
			select {
			case <-done:
			case <-time.After(60 * time.Second): // a failure guard
				daemon.Process.Kill()
				<-done
				t.Fatalf("the daemon did not finish its turn:\n%s", out)
			}
			if err != nil {
				t.Fatalf("exec: %v\n%s", err, out)
			}
			for _, n := range []string{"cmd", "bg", "git", "mcp", "hook"} {
				if _, err := os.Stat(filepath.Join(work, "probed-"+n)); err != nil {
					t.Errorf("the %s probe did not run: %v\n%s", n, err, out)
				}
			}
			leaks := func(what string, b []byte) {
				for name, k := range plantedKeys {
					rev := []rune(k)
					for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
						rev[i], rev[j] = rev[j], rev[i]
					}
					// od -c prints a character per column.
					od := strings.Join(strings.Split(k[:8], ""), "   ")
					for _, form := range []string{k, string(rev), od} {
						if strings.Contains(string(b), form) {
							t.Errorf("%s holds %s (%q):\n%s", what, name, form, b)
						}
					}
				}
				if strings.Contains(string(b), "FOUND") {
					t.Errorf("%s: the daemon's memory was read and holds a key:\n%s", what, b)
				}
			}
			leaks("the daemon's output", out)
			filepath.WalkDir(work, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() && !strings.HasPrefix(d.Name(), "probe") {
					b, _ := os.ReadFile(p)
					leaks(p, b)
				}
				return nil
			})
			if b, _ := os.ReadFile(filepath.Join(work, "leak-cmd-mem")); testing.Verbose() {
				t.Logf("the memory probe said: %s", b)
			}
		})
	}
}

// TestKeyNamedLaterByTheClientHiddenToo: a variable that only the
// client's settings name as the key (provider.apiKeyEnv in
// initializationOptions), with a name that does not look like a key, is
// hidden from the daemon's environment block from then on: a command
// run through cline/callTool reads no key from /proc/$PPID/environ,
// which a root command could read from a process that is not dumpable.
func TestKeyNamedLaterByTheClientHiddenToo(t *testing.T) {
	const key = "late-planted-0123456789abcdef"
	bin := testbin.CLI(t)
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	os.Mkdir(ws, 0o755)
	daemon := exec.Command(bin, "serve")
	daemon.Env = append(os.Environ(), "XDG_STATE_HOME="+filepath.Join(dir, "state"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"),
		"LATE_TOKEN="+key)
	stdin, _ := daemon.StdinPipe()
	stdout, _ := daemon.StdoutPipe()
	daemon.Stderr = os.Stderr
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { daemon.Process.Kill(); daemon.Wait() })
	c := jsonrpcclient.New(stdout, stdin, jsonrpcclient.Options{Discard: true})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a failure guard
	defer cancel()
	init := map[string]any{"processId": nil, "rootUri": "file://" + ws, "capabilities": map[string]any{},
		"initializationOptions": map[string]any{
			"provider":  map[string]any{"name": "openai-compatible", "model": "m", "baseUrl": "http://127.0.0.1:9/v1", "apiKeyEnv": "LATE_TOKEN"},
			"approvals": map[string]any{"execute": "allow"}}}
	if err := c.Call(ctx, "initialize", init, nil); err != nil {
		t.Fatal(err)
	}
	var res struct {
		Content string
		IsError bool
	}
	script := `cat /proc/$PPID/environ > leak-environ; od -c /proc/$PPID/environ > leak-od; echo probed`
	if err := c.Call(ctx, "cline/callTool", map[string]any{"name": "run_commands", "arguments": map[string]any{
		"commands": []string{script}}}, &res); err != nil {
		t.Fatal(err)
	}
	if res.IsError || !strings.Contains(res.Content, "probed") {
		t.Fatalf("the probe did not run: %+v", res)
	}
	od := strings.Join(strings.Split(key[:8], ""), "   ")
	for _, f := range []string{"leak-environ", "leak-od"} {
		b, err := os.ReadFile(filepath.Join(ws, f))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), key) || strings.Contains(string(b), od) {
			t.Errorf("%s holds the key the client named:\n%s", f, b)
		}
	}
}
