package vllm

import (
	"strings"
	"unicode"
)

// MaxVersionLen is the longest release name CleanVersion keeps.
const MaxVersionLen = 64

// CleanVersion keeps a release name as a server may print it on /version (0.11.0rc2+cu124), nothing else: at most
// MaxVersionLen ASCII letters, digits, '.', '+', '-' and '_'; anything else gives "". The data source's scraper
// and the profiler agent both read /version through it, so no server text of another shape reaches a user.
func CleanVersion(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > MaxVersionLen {
		return ""
	}
	for _, c := range s {
		if c > unicode.MaxASCII || !(unicode.IsLetter(c) || unicode.IsDigit(c) || strings.ContainsRune(".+-_", c)) {
			return ""
		}
	}
	return s
}
