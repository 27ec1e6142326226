package tools

import (
	"slices"
	"testing"
)

func TestBuiltinNamesMatchSpecs(t *testing.T) {
	var want []string
	for _, s := range BuiltinSpecs() {
		want = append(want, s.Name)
	}
	if got := BuiltinNames(); !slices.Equal(got, want) {
		t.Errorf("BuiltinNames() = %v, want the names of BuiltinSpecs() %v", got, want)
	}
}
