package vllm

import (
	"strings"
	"testing"
)

func TestCleanVersion(t *testing.T) {
	for in, want := range map[string]string{
		"0.11.0":                             "0.11.0",
		" 0.11.0rc2+cu124 \n":                "0.11.0rc2+cu124",
		"0.9.2.dev1_ascend-1":                "0.9.2.dev1_ascend-1",
		"":                                   "",
		"0.11.0\x1b[2J":                      "",
		"0.11.0\r\nforged":                   "",
		"0.11.0 (build)":                     "",
		"0.11.０":                             "",
		strings.Repeat("1", MaxVersionLen):   strings.Repeat("1", MaxVersionLen),
		strings.Repeat("1", MaxVersionLen+1): "",
		"0.11.0" + strings.Repeat("A", 2994): "",
	} {
		if got := CleanVersion(in); got != want {
			t.Errorf("CleanVersion(%.40q) = %q, want %q", in, got, want)
		}
	}
}

// TestNextPatch: the simulated main's /version is a development build of the release after the newest one read.
func TestNextPatch(t *testing.T) {
	for in, want := range map[string]string{"0.25.1": "0.25.2", "0.9.0": "0.9.1", Main: Main} {
		if got := NextPatch(in); got != want {
			t.Errorf("NextPatch(%q) = %q, want %q", in, got, want)
		}
	}
}
