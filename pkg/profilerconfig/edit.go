package profilerconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// ErrMalformed is returned for a file that is not a single JSON object; such a file is never written.
var ErrMalformed = errors.New("malformed profiler config")

// member is one top-level key of the object and the byte range of its value.
type member struct {
	key        string
	keyStart   int
	start, end int
}

// scan validates doc as one JSON object and returns its top-level members with byte offsets, and the offset
// of the closing brace.
func scan(doc []byte) ([]member, int, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(doc, &obj); err != nil {
		return nil, 0, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if obj == nil { // "null" unmarshals without error
		return nil, 0, fmt.Errorf("%w: not a JSON object", ErrMalformed)
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	if _, err := dec.Token(); err != nil {
		return nil, 0, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	var ms []member
	for dec.More() {
		prev := int(dec.InputOffset())
		tok, err := dec.Token()
		if err != nil {
			return nil, 0, fmt.Errorf("%w: %v", ErrMalformed, err)
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, 0, fmt.Errorf("%w: %v", ErrMalformed, err)
		}
		end := int(dec.InputOffset())
		ks := prev + bytes.IndexByte(doc[prev:], '"')
		ms = append(ms, member{key: key, keyStart: ks, start: end - len(raw), end: end})
	}
	if _, err := dec.Token(); err != nil {
		return nil, 0, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return ms, int(dec.InputOffset()) - 1, nil
}

// setKey returns doc with every top-level occurrence of key set to value, or value appended as the last
// member. All other bytes — other keys, their values, order, whitespace — stay exactly as they were.
func setKey(doc []byte, key string, value func(old []byte) []byte) ([]byte, error) {
	ms, closing, err := scan(doc)
	if err != nil {
		return nil, err
	}
	out := bytes.Clone(doc)
	found := false
	for i := len(ms) - 1; i >= 0; i-- {
		m := ms[i]
		if m.key != key {
			continue
		}
		found = true
		out = concat(out[:m.start], value(doc[m.start:m.end]), out[m.end:])
	}
	if found {
		return out, nil
	}
	k, _ := json.Marshal(key)
	entry := append(append(k, ": "...), value(nil)...)
	if len(ms) == 0 {
		return concat(doc[:closing], entry, doc[closing:]), nil
	}
	last := ms[len(ms)-1]
	sep := []byte(", ")
	if indent, ok := lineIndent(doc, last.keyStart); ok {
		sep = append([]byte(",\n"), indent...)
	}
	return concat(doc[:last.end], sep, entry, doc[last.end:]), nil
}

// lineIndent returns the whitespace before pos on its line when pos starts the line's content, so an added
// member is indented like the last one.
func lineIndent(doc []byte, pos int) ([]byte, bool) {
	nl := bytes.LastIndexByte(doc[:pos], '\n')
	if nl < 0 {
		return nil, false
	}
	ind := doc[nl+1 : pos]
	if len(bytes.Trim(ind, " \t")) != 0 {
		return nil, false
	}
	return ind, true
}

func concat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}
