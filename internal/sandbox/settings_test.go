package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestSettingPath(t *testing.T) {
	for in, want := range map[string]string{
		"~/.cache/go-build": "/home/u/.cache/go-build", "~": "/home/u", "/opt/x/../y": "/opt/y", "build/out": "/ws/build/out",
	} {
		if got := settingPath(in, "/home/u", "/ws"); got != filepath.FromSlash(want) {
			t.Errorf("settingPath(%q) = %q, want %q", in, got, want)
		}
	}
	if got := settingPath("~/x", "", "/ws"); got != "" {
		t.Errorf("~ without a home = %q", got)
	}
}

func TestPolicyFor(t *testing.T) {
	dir := t.TempDir()
	ws, cwd := filepath.Join(dir, "ws"), filepath.Join(dir, "elsewhere")
	link := filepath.Join(dir, "link")
	for _, d := range []string{ws, cwd} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(ws, link); err != nil {
		t.Fatal(err)
	}
	real := func(p string) string {
		r, err := filepath.EvalSymlinks(p)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	place := Place{Folders: []string{link, filepath.Join(dir, "gone")}, Home: "/home/u", StateDir: "/state", RuntimeDir: "/run/u"}
	p := PolicyFor(place, nil)
	if !slices.Equal(p.Write, []string{real(ws)}) || p.Home != "/home/u" || p.StateDir != "/state" || p.RuntimeDir != "/run/u" || p.Network {
		t.Errorf("no settings: %+v", p)
	}
	place.CWD = real(cwd)
	p = PolicyFor(place, &Settings{Backend: "bubblewrap", Network: true, AllowWrite: []string{"out", "~/.cache"}, DenyRead: []string{"/etc/x"}})
	want := []string{real(ws), real(cwd), filepath.Join(real(cwd), "out"), "/home/u/.cache"}
	if !slices.Equal(p.Write, want) || !slices.Equal(p.DenyRead, []string{"/etc/x"}) || !p.Network || p.Backend != BackendBwrap {
		t.Errorf("with settings: %+v, want writes %q", p, want)
	}
}
