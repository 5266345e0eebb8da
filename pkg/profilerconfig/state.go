package profilerconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// State is what a profiler config file holds now.
type State struct {
	// Exists is false when the file is missing; the profiler then runs with metric collection off.
	Exists bool
	// MetricEnable is metric_enable read as the profiler does: absent means off, 1 or true means on.
	MetricEnable bool
	// Enable is the trace profiling switch, read the same way.
	Enable bool
	// ModTime is the file's last change.
	ModTime time.Time
	// Problem describes a switch value the profiler would not understand (e.g. "metric_enable": 2).
	Problem string
}

// parseState reads both switches from a JSON object; the last occurrence of a repeated key wins, as in Go
// and most JSON readers.
func parseState(doc []byte) (State, error) {
	ms, _, err := scan(doc)
	if err != nil {
		return State{}, err
	}
	s := State{Exists: true}
	var problems []string
	for _, m := range ms {
		var dst *bool
		switch m.key {
		case "metric_enable":
			dst = &s.MetricEnable
		case "enable":
			dst = &s.Enable
		default:
			continue
		}
		on, ok := switchValue(doc[m.start:m.end])
		*dst = on
		if !ok {
			problems = append(problems, fmt.Sprintf("%s is %s; the profiler expects 0, 1, true or false", m.key, doc[m.start:m.end]))
		}
	}
	if len(problems) > 0 {
		s.Problem = problems[len(problems)-1]
	}
	return s, nil
}

// switchValue reads 0, 1, true or false; anything else is off and not ok.
func switchValue(raw []byte) (on, ok bool) {
	switch string(bytes.TrimSpace(raw)) {
	case "1", "true":
		return true, true
	case "0", "false":
		return false, true
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err == nil && (f == 0 || f == 1) {
		return f == 1, true
	}
	return false, false
}

// switchLiteral is the new metric_enable value, in the old value's type: a file that says true/false keeps
// booleans, everything else gets 0/1.
func switchLiteral(old []byte, on bool) []byte {
	isBool := bytes.Equal(old, []byte("true")) || bytes.Equal(old, []byte("false"))
	switch {
	case isBool && on:
		return []byte("true")
	case isBool:
		return []byte("false")
	case on:
		return []byte("1")
	default:
		return []byte("0")
	}
}
