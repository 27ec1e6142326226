// Package shared locates the project's shared folder (../shared beside the
// repository), which holds the third-party conformance data the tests run.
// The data is kept out of the repository on purpose, so tests that need it
// skip, saying why, when it is absent.
package shared

import (
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Find returns the absolute path of ../shared/conformance beside the
// repository root (the folder holding go.mod above the working directory).
func Find() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory, so ../shared cannot be located")
		}
		dir = parent
	}
	c := filepath.Join(filepath.Dir(dir), "shared", "conformance")
	if _, err := os.Stat(c); err != nil {
		return "", err
	}
	return c, nil
}

// Conformance returns Find's path, or skips t, saying why, when the data
// is absent.
func Conformance(t testing.TB) string {
	t.Helper()
	c, err := Find()
	if err != nil {
		t.Skipf("../shared/conformance is absent beside the repository (%v): conformance data skipped", err)
	}
	return c
}

// PatchCase is one Codex apply_patch scenario from
// codex-apply-patch/codex_scenarios.json, with cline-ls's one deliberate
// difference applied: a failing patch changes nothing (all or nothing),
// so scenario 015 ends with its input tree, and its error must name
// MustMention.
type PatchCase struct {
	Name        string            `json:"name"`
	Input       map[string]string `json:"input"`
	Patch       string            `json:"patch"`
	Expected    map[string]string `json:"expected"`
	ExpectError bool              `json:"expect_error"`
	MustMention string            `json:"-"`
}

// CodexScenarios loads the 25 Codex scenarios, or skips t without the data.
func CodexScenarios(t testing.TB) []PatchCase {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(Conformance(t), "codex-apply-patch", "codex_scenarios.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Cases []PatchCase }
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("codex_scenarios.json: %v", err)
	}
	if len(doc.Cases) != 25 {
		t.Fatalf("%d scenarios in codex_scenarios.json, want 25", len(doc.Cases))
	}
	for i := range doc.Cases {
		c := &doc.Cases[i]
		if strings.HasPrefix(c.Name, "015_") {
			c.Expected = maps.Clone(c.Input)
			c.MustMention = "missing.txt"
		}
	}
	return doc.Cases
}

// CodexScenarioDirs loads the 23 scenario folders (input/, patch.txt,
// expected/) of codex-apply-patch/scenarios, bytes as stored, with the
// same all-or-nothing difference as CodexScenarios. The folders carry no
// error flag; the scenario names do.
func CodexScenarioDirs(t testing.TB) []PatchCase {
	t.Helper()
	root := filepath.Join(Conformance(t), "codex-apply-patch", "scenarios")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var out []PatchCase
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, e.Name())
		patch, err := os.ReadFile(filepath.Join(dir, "patch.txt"))
		if err != nil {
			t.Fatal(err)
		}
		c := PatchCase{
			Name:     e.Name(),
			Input:    ReadTree(t, filepath.Join(dir, "input")),
			Patch:    string(patch),
			Expected: ReadTree(t, filepath.Join(dir, "expected")),
		}
		c.ExpectError = strings.Contains(c.Name, "_rejects_") || strings.Contains(c.Name, "_fails") ||
			strings.Contains(c.Name, "_requires_") || strings.HasPrefix(c.Name, "015_")
		if strings.HasPrefix(c.Name, "015_") {
			c.Expected = maps.Clone(c.Input)
			c.MustMention = "missing.txt"
		}
		out = append(out, c)
	}
	if len(out) != 23 {
		t.Fatalf("%d scenario folders, want 23", len(out))
	}
	return out
}

// ReadTree reads every file below root into a map keyed by slash-separated
// relative path; a missing root is an empty tree.
func ReadTree(t testing.TB, root string) map[string]string {
	t.Helper()
	tree := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == root {
				return filepath.SkipDir
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		tree[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// ReadJSON decodes the conformance file at rel (slash-separated, below
// conformance/) into v, or skips t without the data.
func ReadJSON(t testing.TB, rel string, v any) {
	t.Helper()
	file := filepath.Join(Conformance(t), filepath.FromSlash(rel))
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}
