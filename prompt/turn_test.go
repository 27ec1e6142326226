package prompt

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestTurnContext(t *testing.T) {
	var bufs, status []string
	for i := range MaxOpenBuffers + 3 {
		bufs = append(bufs, fmt.Sprintf("f%d.go", i))
	}
	for i := range MaxStatusLines + 2 {
		status = append(status, fmt.Sprintf(" M s%d.go", i))
	}
	got := TurnContext(Environment{
		Date:        time.Date(2026, 12, 1, 23, 59, 0, 0, time.UTC),
		Git:         &GitState{Branch: "main", StatusKnown: true, Status: status, More: 5},
		OpenBuffers: bufs,
	})
	for _, s := range []string{
		"<environment_details>\nToday's date: Tuesday, 1 December 2026\nGit branch: main\n",
		"Changed files (git status --porcelain):\n M s0.go\n",
		fmt.Sprintf(" M s%d.go\n… and 7 more\n", MaxStatusLines-1),
		fmt.Sprintf("f%d.go and 3 more\n</environment_details>\n\n", MaxOpenBuffers-1),
	} {
		if !strings.Contains(got, s) {
			t.Errorf("context block lacks %q:\n%s", s, got)
		}
	}
	for _, s := range []string{fmt.Sprintf("s%d.go", MaxStatusLines), fmt.Sprintf("f%d.go", MaxOpenBuffers)} {
		if strings.Contains(got, s) {
			t.Errorf("context block names %q past the cap:\n%s", s, got)
		}
	}
	if !IsTurnContext(got) {
		t.Errorf("IsTurnContext does not know the block:\n%s", got)
	}
}

func TestTurnContextGitStates(t *testing.T) {
	tests := []struct {
		name string
		git  *GitState
		want []string
		not  []string
	}{
		{"clean", &GitState{Branch: "dev", StatusKnown: true}, []string{"Git branch: dev\n", "Working tree clean.\n"}, []string{"Changed"}},
		{"status unknown", &GitState{Branch: "detached at 1a2b3c4"}, []string{"Git branch: detached at 1a2b3c4\n"}, []string{"clean", "Changed"}},
		{"repository above the working directory", &GitState{Root: "/src", Branch: "x", StatusKnown: true, Status: []string{"?? new.go"}},
			[]string{"Git branch: x (repository at /src)\n", "?? new.go\n"}, []string{"more"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := TurnContext(Environment{Git: tt.git})
			for _, s := range tt.want {
				if !strings.Contains(got, s) {
					t.Errorf("lacks %q:\n%s", s, got)
				}
			}
			for _, s := range tt.not {
				if strings.Contains(got, s) {
					t.Errorf("has %q:\n%s", s, got)
				}
			}
		})
	}
}

func TestTurnContextEmpty(t *testing.T) {
	if got := TurnContext(Environment{}); got != "" {
		t.Errorf("nothing to say, got %q", got)
	}
	for _, s := range []string{"", "<environment_details>\nhello", "please read <environment_details>\n</environment_details>\n\n"} {
		if IsTurnContext(s) {
			t.Errorf("IsTurnContext(%q) = true", s)
		}
	}
}
