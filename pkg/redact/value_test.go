package redact

import (
	"encoding/base64"
	"strings"
	"testing"
)

// TestValueScrubsEveryString scrubs a decoded answer in place: struct fields, embedded structs, slices, pointers,
// interfaces and map keys and values, in the encodings Add knows; numbers and booleans stay as they were.
func TestValueScrubsEveryString(t *testing.T) {
	const token = "tok-9f8e7d6c5b4a"
	s := NewScrubber(token)
	type inner struct{ Message string }
	type Embedded struct{ Note string }
	type answer struct {
		Embedded
		Path     string
		N        int
		OK       bool
		Problems []inner
		Ptr      *inner
		Any      any
		Exposed  map[string]bool
		Labels   map[string]string
		hidden   string
	}
	b64 := base64.StdEncoding.EncodeToString([]byte(token))
	a := answer{Embedded: Embedded{Note: "Bearer " + token}, Path: "/x?" + token, N: 7, OK: true,
		Problems: []inner{{"Authorization: Basic " + b64}}, Ptr: &inner{"h " + token}, Any: "any " + token,
		Exposed: map[string]bool{"vllm_x": true, token: true}, Labels: map[string]string{"k": token}, hidden: token}
	s.Value(&a)
	if a.hidden != token {
		t.Error("an unexported field was changed")
	}
	a.hidden = ""
	got := strings.Join([]string{a.Note, a.Path, a.Problems[0].Message, a.Ptr.Message, a.Any.(string), a.Labels["k"]}, "\n")
	for k := range a.Exposed {
		got += "\n" + k
	}
	if strings.Contains(got, token) || strings.Contains(got, b64) || !strings.Contains(got, Mask) {
		t.Errorf("left a secret:\n%s", got)
	}
	if a.N != 7 || !a.OK || !a.Exposed["vllm_x"] || !a.Exposed[Mask] {
		t.Errorf("changed other values: %+v", a)
	}
	s.Value(nil)
	s.Value(a) // not a pointer: nothing to change, no panic
	var nilScrubber *Scrubber
	nilScrubber.Value(&a)
}

// TestBase64AtAnyOffset: a secret encoded inside a longer text ("Bearer <token>" whole, at any offset) is masked.
func TestBase64AtAnyOffset(t *testing.T) {
	const token = "e2e-agent-token-9f8e7d6c5b4a"
	s := NewScrubber(token)
	for _, prefix := range []string{"", "B", "Be", "Bearer ", "Authorization: Bearer "} {
		for _, suffix := range []string{"", "x", "\\n", "\\r\\nX-Other: 1"} {
			for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding} {
				text := "echo " + enc.EncodeToString([]byte(prefix+token+suffix)) + " end"
				got := s.Text(text)
				if !strings.Contains(got, Mask) {
					t.Errorf("%q+token+%q encoded: %s", prefix, suffix, got)
				}
			}
		}
	}
	if got := s.Text("ordinary text with no secret in it at all"); got != "ordinary text with no secret in it at all" {
		t.Errorf("ordinary text changed: %s", got)
	}
}
