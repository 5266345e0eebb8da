// Package redact is the plugin's one rule for showing a URL or upstream text: userinfo and query values of URLs
// are masked, and every configured secret (tokens, passwords, header values and their encoded forms) is removed
// from text that came from a server, before it reaches a response, frame, notice, log line or error.
package redact

import (
	"encoding/base64"
	"net/url"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// Mask replaces what is hidden.
const Mask = "xxxxx"

// MinSecretLen is the shortest value treated as a secret: masking "a" or "12" everywhere would garble messages
// without hiding anything a guess could not find.
const MinSecretLen = 4

// URL shows raw without secrets: userinfo becomes Mask, every query value becomes Mask (names stay, they help),
// and the fragment is dropped. Text that does not parse as a URL is cut before its query and its userinfo.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return redactUnparsed(raw)
	}
	u.Fragment, u.RawFragment = "", ""
	if u.User != nil {
		u.User = url.User(Mask)
	}
	if u.RawQuery != "" {
		u.RawQuery = maskQuery(u.RawQuery)
	}
	return u.String()
}

// maskQuery keeps each parameter's name and masks its value; the order is kept, and names are not decoded so
// that what is shown is what was configured.
func maskQuery(q string) string {
	parts := strings.Split(q, "&")
	for i, p := range parts {
		name, _, hasValue := strings.Cut(p, "=")
		if hasValue {
			parts[i] = name + "=" + Mask
		} else if p != "" {
			parts[i] = Mask // a bare token such as ?abcdef
		}
	}
	return strings.Join(parts, "&")
}

func redactUnparsed(raw string) string {
	if i := strings.IndexAny(raw, "?#"); i >= 0 {
		raw = raw[:i] + "?" + Mask
	}
	if i := strings.Index(raw, "://"); i >= 0 {
		rest := raw[i+3:]
		end := strings.IndexAny(rest, "/?")
		if end < 0 {
			end = len(rest)
		}
		if at := strings.LastIndex(rest[:end], "@"); at >= 0 {
			raw = raw[:i+3] + Mask + "@" + rest[at+1:]
		}
	}
	return raw
}

// urlInText finds URLs inside free text (error messages quote them).
var urlInText = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"'<>]+`)

// Scrubber removes a data source's or app's configured secrets from text. The zero value and nil scrub URLs only.
type Scrubber struct {
	mu      sync.RWMutex
	secrets []string // longest first, so a secret containing another is replaced whole
}

// NewScrubber returns a Scrubber for the given secret values (see Add).
func NewScrubber(values ...string) *Scrubber {
	s := &Scrubber{}
	s.Add(values...)
	return s
}

// Add registers secret values, each with the encodings it may appear in upstream text: as is, base64 (standard
// and URL alphabets, padded or not: HTTP basic auth and JWT-style echoes) and URL-escaped (query strings).
// Values shorter than MinSecretLen are ignored.
func (s *Scrubber) Add(values ...string) {
	if s == nil {
		return
	}
	var forms []string
	for _, v := range values {
		if len(v) < MinSecretLen {
			continue
		}
		forms = append(forms, v, url.QueryEscape(v), url.PathEscape(v))
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
			forms = append(forms, enc.EncodeToString([]byte(v)))
		}
		forms = append(forms, base64Cores(v)...)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[string]bool{}
	for _, f := range s.secrets {
		seen[f] = true
	}
	for _, f := range forms {
		if !seen[f] && len(f) >= MinSecretLen {
			seen[f] = true
			s.secrets = append(s.secrets, f)
		}
	}
	sort.Slice(s.secrets, func(i, j int) bool { return len(s.secrets[i]) > len(s.secrets[j]) })
}

// minCoreLen is the shortest base64 core registered: shorter runs of base64 would match ordinary text.
const minCoreLen = 8

// base64Cores are the runs of base64 that v becomes inside any longer encoded text ("Bearer <token>" or
// "user:<password>" encoded whole, say): for each of the three offsets v can start at, the characters that depend
// on v's bytes only, in both alphabets. Masking them leaves at most two bytes of v at either end.
func base64Cores(v string) []string {
	var out []string
	for k := range 3 {
		b := append(make([]byte, k), v...)
		groups := len(b) / 3
		from := 0
		if k > 0 {
			from = 4 // the first group mixes the text before v with v's first bytes
		}
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			if e := enc.EncodeToString(b); 4*groups-from >= minCoreLen {
				out = append(out, e[from:4*groups]) // the last, partial group depends on the text after v
			}
		}
	}
	return out
}

// AddBasicAuth registers a basic-auth password and the Authorization header value made from user and password.
func (s *Scrubber) AddBasicAuth(user, password string) {
	if password == "" {
		return
	}
	s.Add(password, user+":"+password)
}

// AddURL registers the secrets a configured URL carries: its userinfo (user and password) and its query values.
func (s *Scrubber) AddURL(raw string) {
	u, err := url.Parse(raw)
	if err != nil {
		return
	}
	if u.User != nil {
		p, _ := u.User.Password()
		s.Add(u.User.Username(), p, u.User.String())
	}
	for _, vs := range u.Query() {
		s.Add(vs...)
	}
	if u.RawQuery != "" {
		s.Add(u.RawQuery)
	}
}

// WithURL returns a new Scrubber holding s's secrets and those of raw (see AddURL), for one request to a URL that
// is not part of the configuration s was built from.
func (s *Scrubber) WithURL(raw string) *Scrubber {
	out := &Scrubber{}
	if s != nil {
		s.mu.RLock()
		out.secrets = append([]string(nil), s.secrets...)
		s.mu.RUnlock()
	}
	out.AddURL(raw)
	return out
}

// Text returns text with every registered secret replaced by Mask and every URL in it shown as URL shows it.
func (s *Scrubber) Text(text string) string {
	text = urlInText.ReplaceAllStringFunc(text, func(u string) string {
		trail := strings.TrimRight(u, ".,;:)]}")
		return URL(trail) + u[len(trail):]
	})
	if s == nil {
		return text
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, secret := range s.secrets {
		if strings.Contains(text, secret) {
			text = strings.ReplaceAll(text, secret, Mask)
		}
	}
	return text
}

// Error is Text of err's message, or "" for nil.
func (s *Scrubber) Error(err error) string {
	if err == nil {
		return ""
	}
	return s.Text(err.Error())
}

// maxValueDepth bounds how deep Value walks, so a self-referencing value cannot loop.
const maxValueDepth = 32

// Value scrubs, in place, every string reachable from v (a pointer): struct fields, slice and array elements, map
// keys and values, and strings held in interfaces, each as Text shows it. It is how a decoded answer from another
// server (every string field of it, not only its error) is cleaned before it is shown or logged.
func (s *Scrubber) Value(v any) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return
	}
	s.walk(rv.Elem(), 0)
}

// walk scrubs the settable value v and what it holds.
func (s *Scrubber) walk(v reflect.Value, depth int) {
	if depth > maxValueDepth || !v.IsValid() {
		return
	}
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			if t := s.Text(v.String()); t != v.String() {
				v.SetString(t)
			}
		}
	case reflect.Pointer:
		if !v.IsNil() {
			s.walk(v.Elem(), depth+1)
		}
	case reflect.Interface:
		if v.IsNil() || !v.CanSet() {
			return
		}
		c := reflect.New(v.Elem().Type()).Elem()
		c.Set(v.Elem())
		s.walk(c, depth+1)
		v.Set(c)
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				s.walk(f, depth+1)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			s.walk(v.Index(i), depth+1)
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		for _, k := range v.MapKeys() {
			nk := reflect.New(k.Type()).Elem()
			nk.Set(k)
			s.walk(nk, depth+1)
			nv := reflect.New(v.Type().Elem()).Elem()
			nv.Set(v.MapIndex(k))
			s.walk(nv, depth+1)
			v.SetMapIndex(k, reflect.Value{})
			v.SetMapIndex(nk, nv)
		}
	}
}
