//go:build linux

package main

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/internal/testbin"
)

// The keys the daemon under test holds: two well-known key variables and
// one whose name does not look like a key, named by CLINE_LS_API_KEY_ENV.
var plantedKeys = map[string]string{
	"ANTHROPIC_API_KEY": "sk-ant-planted-parent-0123456789abcdef",
	"OPENAI_API_KEY":    "sk-openai-planted-parent-0123456789abcdef",
	"MY_TOKEN":          "tok-planted-parent-0123456789abcdef",
}

// probeScript is what a command and an MCP server run: every way a child
// has of reading its parent's environment and memory, into files of the
// workspace ($1 names them). The memory is searched for the keys, given
// hex-encoded so that the command's own text does not hold them.
const probeScript = `p=$PPID; n=$1; shift
cat /proc/$p/environ > leak-$n-environ 2>&1
od -c /proc/$p/environ > leak-$n-od 2>&1
rev /proc/$p/environ > leak-$n-rev 2>&1
for f in /proc/$p/task/*/environ; do cat "$f"; done > leak-$n-task 2>&1
for f in /proc/$p/fd/*; do case $(readlink "$f") in *memfd*|*pipe*) ;; *) continue ;; esac; timeout 1 cat "$f" </dev/null; done > leak-$n-fd 2>&1
python3 probe_mem.py $p "$@" > leak-$n-mem 2>&1
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
// its environment, as root and as nobody, and has a command and a stdio
// MCP server read the daemon's environment (directly, through od and
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
			mcp, _ := json.Marshal(map[string]any{"mcpServers": []any{map[string]any{
				"name": "probe", "command": "sh", "args": append([]string{filepath.Join(work, "probe.sh"), "mcp"}, hexKeys...)}}})
			write(filepath.Join(config, "config.json"), string(mcp))
			cmdline := "sh probe.sh cmd " + strings.Join(hexKeys, " ")
			tr, _ := json.Marshal(map[string]any{"model": "replay", "replies": []any{
				map[string]any{"events": []any{map[string]any{"tool_call": map[string]any{"id": "c1", "name": "run_commands",
					"args": map[string]any{"commands": []string{cmdline}}}}}},
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
			for _, n := range []string{"cmd", "mcp"} {
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
