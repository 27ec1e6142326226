package tools_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/tools"
)

func writeSkill(t *testing.T, dir, name, text string) {
	t.Helper()
	p := filepath.Join(dir, name, tools.SkillFileName)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFindSkillsAndUseSkill(t *testing.T) {
	root, cfg := t.TempDir(), t.TempDir()
	dirs := tools.SkillDirs([]string{root}, func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return cfg
		}
		return ""
	})
	ws, user := dirs[0], dirs[1]
	writeSkill(t, ws, "release", "---\nname: release\ndescription: Cut a release of this repo\n---\n# Release\n1. Tag.\n")
	writeSkill(t, user, "release", "the user's release skill, hidden by the workspace's\n")
	writeSkill(t, user, "review", "# Code review\nRead the diff first.\n")
	os.MkdirAll(filepath.Join(ws, "empty"), 0o755) // no SKILL.md: not a skill

	skills := tools.FindSkills(dirs...)
	if len(skills) != 2 || skills[0].Name != "release" || skills[1].Name != "review" || !strings.HasPrefix(skills[0].Path, ws) {
		t.Fatalf("skills = %+v", skills)
	}
	if got := strings.Join(tools.SkillNames(skills), "; "); got != "release (Cut a release of this repo); review (Code review)" {
		t.Fatalf("names = %q", got)
	}
	tool, err := tools.Builtin(tools.NameUseSkill, tools.UseSkill(func() []tools.Skill { return tools.FindSkills(dirs...) }))
	if err != nil {
		t.Fatal(err)
	}
	run := func(args string) tools.Result {
		inv, err := tool.Build([]byte(args))
		if err != nil {
			t.Fatal(err)
		}
		r, err := inv.Execute(context.Background(), tools.ExecOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := run(`{"skill":"release","args":"v1.2"}`); r.IsError || !strings.Contains(r.Content, "1. Tag.") || !strings.Contains(r.Content, "Arguments: v1.2") {
		t.Fatalf("release = %+v", r)
	}
	if r := run(`{"skill":"deploy"}`); !r.IsError || !strings.Contains(r.Content, "release, review") {
		t.Fatalf("unknown skill = %+v", r)
	}
	// The description lists the skills through {{SKILLS}}.
	ctx := tools.Context{Skills: tools.SkillNames(skills)}
	if d := tools.Expand(tool.Spec().Description, ctx); !strings.Contains(d, "review (Code review)") {
		t.Fatalf("description = %q", d)
	}
}
