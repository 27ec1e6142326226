package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestDoctorSaysWhichSandbox: doctor names the sandbox the settings
// choose (CLINE_LS_SANDBOX forcing one), and says why there is none when
// the forced one is missing.
func TestDoctorSaysWhichSandbox(t *testing.T) {
	noBwrap := t.TempDir()
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"CLINE_LS_SANDBOX": "bwrap", "PATH": noBwrap}, "sandbox: none (bubblewrap (bwrap) is not installed)"},
		{map[string]string{"CLINE_LS_SANDBOX": "docker"}, `sandbox: none (unknown sandbox backend "docker"`},
	} {
		var out, errOut bytes.Buffer
		// The daemon's own PATH is where bubblewrap is looked for.
		t.Setenv("PATH", c.env["PATH"]+":"+noBwrap)
		code := doctor(nil, &out, &errOut, func(k string) string { return c.env[k] })
		if code != 0 || !strings.Contains(out.String(), c.want) {
			t.Errorf("doctor with %v: %d %q %q, want %q", c.env, code, out.String(), errOut.String(), c.want)
		}
		if !strings.Contains(out.String(), "  landlock: ") || !strings.Contains(out.String(), "  bwrap: ") {
			t.Errorf("doctor does not report each backend: %q", out.String())
		}
	}
}
