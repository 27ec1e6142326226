package tools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Skill is a folder holding a SKILL.md: instructions for a kind of task
// that the model loads with use_skill when it needs them.
type Skill struct {
	Name        string
	Description string
	Path        string // the SKILL.md file
}

// SkillFileName is the file that makes a folder a skill.
const SkillFileName = "SKILL.md"

// maxSkillBytes bounds what use_skill returns.
const maxSkillBytes = 48_000

// SkillDirs returns where skills live, in order of precedence: each
// workspace folder's .cline/skills, then the user's config folder
// ($XDG_CONFIG_HOME/cline-ls/skills, else ~/.config/cline-ls/skills).
func SkillDirs(roots []string, getenv func(string) string) []string {
	var dirs []string
	for _, r := range roots {
		dirs = append(dirs, filepath.Join(r, ".cline", "skills"))
	}
	if cfg := ConfigDir(getenv); cfg != "" {
		dirs = append(dirs, filepath.Join(cfg, "skills"))
	}
	return dirs
}

// ConfigDir returns the user's cline-ls config folder,
// $XDG_CONFIG_HOME/cline-ls, else ~/.config/cline-ls; "" when neither
// variable is set. Settings, skills and the user's own instructions all
// live there.
func ConfigDir(getenv func(string) string) string {
	cfg := getenv("XDG_CONFIG_HOME")
	if cfg == "" {
		home := getenv("HOME")
		if home == "" {
			return ""
		}
		cfg = filepath.Join(home, ".config")
	}
	return filepath.Join(cfg, "cline-ls")
}

// FindSkills lists the skills in dirs (each skill is dir/<name>/SKILL.md),
// sorted by name; a name found in an earlier dir hides later ones.
// Missing dirs are skipped.
func FindSkills(dirs ...string) []Skill {
	seen := map[string]bool{}
	var out []Skill
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if !e.IsDir() || seen[e.Name()] {
				continue
			}
			path := filepath.Join(dir, e.Name(), SkillFileName)
			data, err := os.ReadFile(path)
			if err != nil {
				continue
			}
			seen[e.Name()] = true
			out = append(out, Skill{Name: e.Name(), Description: skillDescription(string(data)), Path: path})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// skillDescription is a SKILL.md's "description:" front-matter field, or
// its first line of prose, shortened for the tool description.
func skillDescription(text string) string {
	lines := strings.Split(text, "\n")
	if len(lines) > 0 && strings.TrimSpace(lines[0]) == "---" {
		for _, l := range lines[1:] {
			if strings.TrimSpace(l) == "---" {
				break
			}
			if v, ok := strings.CutPrefix(strings.TrimSpace(l), "description:"); ok {
				return skillClip(strings.Trim(strings.TrimSpace(v), `"'`))
			}
		}
	}
	for _, l := range lines {
		l = strings.TrimSpace(strings.TrimLeft(l, "# "))
		if l != "" && l != "---" && !strings.Contains(l, ":") {
			return skillClip(l)
		}
	}
	return ""
}

func skillClip(s string) string {
	if r := []rune(s); len(r) > 80 {
		return string(r[:80]) + "…"
	}
	return s
}

// SkillNames renders skills for the use_skill description ({{SKILLS}}).
func SkillNames(skills []Skill) []string {
	out := make([]string, len(skills))
	for i, s := range skills {
		out[i] = s.Name
		if s.Description != "" {
			out[i] += " (" + s.Description + ")"
		}
	}
	return out
}

// UseSkill is the use_skill implementation: find lists the skills at the
// time of the call, so a skill added during a session is found.
func UseSkill(find func() []Skill) BuildFunc {
	return Typed(func(a struct {
		Skill string `json:"skill"`
		Args  string `json:"args"`
	}) (Invocation, error) {
		return skillInvocation{find: find, name: strings.TrimSpace(a.Skill), args: a.Args}, nil
	})
}

type skillInvocation struct {
	find       func() []Skill
	name, args string
}

func (s skillInvocation) Describe(context.Context) Description {
	return Description{Title: "Use skill " + s.name, Kind: KindRead}
}

func (s skillInvocation) Execute(ctx context.Context, _ ExecOptions) (Result, error) {
	skills := s.find()
	for _, sk := range skills {
		if sk.Name != s.name {
			continue
		}
		data, err := os.ReadFile(sk.Path)
		if errors.Is(err, os.ErrNotExist) {
			return Errorf("skill %s was removed; call use_skill with one of the skills listed now", s.name), nil
		}
		if err != nil {
			return Errorf("skill %s could not be read: %v", s.name, err), nil
		}
		text := string(data)
		if len(text) > maxSkillBytes {
			text = text[:maxSkillBytes] + "\n[the skill is cut here: it is longer than 48,000 characters]"
		}
		out := "Skill " + s.name + ":\n\n" + text
		if strings.TrimSpace(s.args) != "" {
			out += "\n\nArguments: " + s.args
		}
		return Result{Content: out}, nil
	}
	names := make([]string, len(skills))
	for i, sk := range skills {
		names[i] = sk.Name
	}
	if len(names) == 0 {
		return Errorf("there is no skill %q: no skills are installed", s.name), nil
	}
	return Errorf("there is no skill %q; the skills are: %s", s.name, strings.Join(names, ", ")), nil
}
