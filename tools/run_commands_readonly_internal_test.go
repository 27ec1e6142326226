package tools

import (
	"math/rand"
	"os/exec"
	"strings"
	"testing"
)

// TestSedScanAgreesWithGNUSed: GNU sed's --sandbox refuses the commands
// that write or run (and r, R, which read): every script the scan calls
// harmless, built from pieces without r and R, must pass it.
func TestSedScanAgreesWithGNUSed(t *testing.T) {
	if out, err := exec.Command("sed", "--sandbox", "-n", "p", "/dev/null").CombinedOutput(); err != nil {
		t.Skipf("no GNU sed with --sandbox here: %v %s", err, out)
	}
	pieces := []string{"s/x/y/", "s|a|b|", "/x/", "y/a/b/", `\%x%`, "s/a/b/g", "a foo", `i\`, "c x", `s/a/\//`,
		"s/[/]/x/", "[^]/]", "[[:alpha:]/]", "s", "/", "a", "w", "e", "x", ";", "\n", `\`, "{", "}", "p", "y",
		"W", " ", "1", "$", "!", ",", "g", "I", "M", ":", "b", "t", "#", "|", "i", "c", "q", "=", "l", "0", "~",
		"+", "F", "z", "n", "d", "m", "T", "v", "Q", "D", "N", "P", "G", "H", "h", "[", "]", "^",
		"b x ", "t ", ":a ", "T y", " w x", " e", "W y"}
	r := rand.New(rand.NewSource(1))
	for range 1500 {
		var b strings.Builder
		for k := r.Intn(10) + 1; k > 0; k-- {
			b.WriteString(pieces[r.Intn(len(pieces))])
		}
		script := b.String()
		if roSedWrites(script) {
			continue
		}
		out, _ := exec.Command("sed", "--sandbox", "-n", "-e", script, "/dev/null").CombinedOutput()
		if strings.Contains(string(out), "sandbox") {
			t.Errorf("the scan calls %q harmless; GNU sed: %s", script, out)
		}
	}
}
