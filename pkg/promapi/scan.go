package promapi

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/prometheus/common/model"

	"github.com/inferscope/inferscope-vllm/pkg/query"
)

// A range query's answer holds a [time, "value"] pair per series and step: at a fleet's scale hundreds of thousands
// of them, which encoding/json's Decoder reads byte by byte through its state machine and then again to unmarshal
// (most of Prometheus mode's CPU in the plugin). scanner reads the answer once, by hand, as it arrives, with the same
// limits: the body's size (the reader's), series and points per query, and nesting depth.

// maxDepth bounds how deeply the values scanner skips may nest, as encoding/json bounds them.
const maxDepth = 10000

// scanBuffer is how much of the answer the scanner holds at a time.
const scanBuffer = 64 << 10

// scanner reads JSON values from a stream through a buffer of its own: its loops index the buffer instead of
// calling a reader per byte.
type scanner struct {
	r        io.Reader
	buf      []byte // buf[pos:] is read and not yet consumed
	pos      int
	readErr  error // the reader's error once it failed or ended (io.EOF)
	scratch  []byte
	numBytes []byte
	// names interns label names and values: every series of an answer repeats the same few.
	names map[string]string
	// points is how many points the last series held: a range answer's series mostly hold as many, so the next
	// one's array starts that large instead of growing to it (and is copied to its size where it held fewer, so
	// an answer of short series after a long one holds no unused room).
	points int
}

func newScanner(r io.Reader) *scanner {
	return &scanner{r: r, buf: make([]byte, 0, scanBuffer), names: map[string]string{}}
}

// errSyntax is a malformed answer; its message says what was expected.
type errSyntax struct{ msg string }

func (e *errSyntax) Error() string { return "invalid JSON: " + e.msg }

func syntaxError(format string, args ...any) error { return &errSyntax{fmt.Sprintf(format, args...)} }

// fill reads more of the answer after what is held, dropping what was consumed; false at its end or error.
func (s *scanner) fill() bool {
	if s.readErr != nil {
		return false
	}
	n := copy(s.buf[:cap(s.buf)], s.buf[s.pos:])
	s.buf, s.pos = s.buf[:n], 0
	for range 100 { // a reader that returns nothing, again and again, is an error too
		m, err := s.r.Read(s.buf[n:cap(s.buf)])
		s.buf = s.buf[:n+m]
		if err != nil {
			s.readErr = err
		}
		if m > 0 || err != nil {
			return m > 0
		}
	}
	s.readErr = io.ErrNoProgress
	return false
}

// eof is the error for an answer that ended (or failed) inside a value.
func (s *scanner) eof() error {
	if s.readErr == nil || errors.Is(s.readErr, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return s.readErr
}

// next skips whitespace and returns the next byte without consuming it.
func (s *scanner) next() (byte, error) {
	for {
		for s.pos < len(s.buf) {
			switch c := s.buf[s.pos]; c {
			case ' ', '\t', '\n', '\r':
				s.pos++
			default:
				return c, nil
			}
		}
		if !s.fill() {
			return 0, s.eof()
		}
	}
}

// expect consumes c after any whitespace.
func (s *scanner) expect(c byte) error {
	got, err := s.next()
	if err != nil {
		return err
	}
	if got != c {
		return syntaxError("expected %q, found %q", c, got)
	}
	s.pos++
	return nil
}

// elements calls each for every element of an array (each must consume one value).
func (s *scanner) elements(each func() error) error {
	for more, err := s.open('[', ']'); more || err != nil; more, err = s.more(']', "an array") {
		if err != nil {
			return err
		}
		if err := each(); err != nil {
			return err
		}
	}
	return nil
}

// members calls each with every key of an object (each must consume the key's value).
func (s *scanner) members(each func(key []byte) error) error {
	for more, err := s.open('{', '}'); more || err != nil; more, err = s.more('}', "an object") {
		if err != nil {
			return err
		}
		key, err := s.bytes()
		if err != nil {
			return err
		}
		// The key is in scratch, which the value's strings overwrite: each reads it before them.
		if err := s.expect(':'); err != nil {
			return err
		}
		if err := each(key); err != nil {
			return err
		}
	}
	return nil
}

// open consumes a container's opener and reports whether an element follows (false, closer consumed, when empty).
func (s *scanner) open(opener, closer byte) (bool, error) {
	if err := s.expect(opener); err != nil {
		return false, err
	}
	c, err := s.next()
	if err != nil {
		return false, err
	}
	if c == closer {
		s.pos++
		return false, nil
	}
	return true, nil
}

// more consumes the ',' or the closer after a container's element and reports whether another element follows.
func (s *scanner) more(closer byte, in string) (bool, error) {
	c, err := s.next()
	if err != nil {
		return false, err
	}
	s.pos++
	switch c {
	case ',':
		return true, nil
	case closer:
		return false, nil
	}
	return false, syntaxError("expected ',' or %q in %s, found %q", closer, in, c)
}

// bytes reads a string into scratch, escapes resolved and invalid UTF-8 replaced as encoding/json does; the slice
// lives until the next string.
func (s *scanner) bytes() ([]byte, error) {
	if err := s.expect('"'); err != nil {
		return nil, err
	}
	out := s.scratch[:0]
	defer func() { s.scratch = out[:0] }()
	high := false // a byte past ASCII, which may start an invalid UTF-8 sequence
	for {
		// The plain run up to a quote, an escape or a control character is copied at once.
		i := s.pos
		for i < len(s.buf) {
			c := s.buf[i]
			if c == '"' || c == '\\' || c < 0x20 {
				break
			}
			high = high || c >= utf8.RuneSelf
			i++
		}
		out = append(out, s.buf[s.pos:i]...)
		s.pos = i
		if i == len(s.buf) {
			if !s.fill() {
				return nil, s.eof()
			}
			continue
		}
		c := s.buf[i]
		s.pos++
		switch {
		case c == '"':
			if high && !utf8.Valid(out) {
				out = validUTF8(out)
			}
			return out, nil
		case c < 0x20:
			return nil, syntaxError("control character %#x in a string", c)
		}
		e, err := s.byte()
		if err != nil {
			return nil, err
		}
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, err := s.hex4()
			if err != nil {
				return nil, err
			}
			if utf16.IsSurrogate(r) {
				// A low surrogate must follow for a pair; otherwise the lone surrogate is U+FFFD, as in encoding/json.
				if s.ahead("\\u") {
					s.pos += 2
					r2, err := s.hex4()
					if err != nil {
						return nil, err
					}
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						out = utf8.AppendRune(out, dec)
						continue
					}
					out = utf8.AppendRune(out, utf8.RuneError)
					r = r2
					if utf16.IsSurrogate(r) {
						r = utf8.RuneError
					}
				} else {
					r = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return nil, syntaxError("invalid escape \\%c in a string", e)
		}
	}
}

// byte consumes one byte.
func (s *scanner) byte() (byte, error) {
	if s.pos == len(s.buf) && !s.fill() {
		return 0, s.eof()
	}
	s.pos++
	return s.buf[s.pos-1], nil
}

// ahead reports whether the next bytes are word (not consumed).
func (s *scanner) ahead(word string) bool {
	for len(s.buf)-s.pos < len(word) {
		if !s.fill() {
			return false
		}
	}
	return string(s.buf[s.pos:s.pos+len(word)]) == word
}

// validUTF8 is b with each byte that starts no valid UTF-8 sequence made U+FFFD, as encoding/json reads it.
func validUTF8(b []byte) []byte {
	out := make([]byte, 0, len(b)+8)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		out = utf8.AppendRune(out, r) // RuneError for an invalid byte
		b = b[size:]
	}
	return out
}

// hex4 reads the four hex digits of a \\u escape.
func (s *scanner) hex4() (rune, error) {
	var r rune
	for range 4 {
		c, err := s.byte()
		if err != nil {
			return 0, err
		}
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, syntaxError("invalid \\u escape")
		}
		r = r<<4 | rune(c)
	}
	return r, nil
}

// string reads a string, interned: label names and values repeat across an answer's series.
func (s *scanner) string() (string, error) {
	b, err := s.bytes()
	if err != nil {
		return "", err
	}
	return s.intern(b), nil
}

// intern is b (in scratch) as a string, the same string for the same bytes within one answer. The table is
// bounded: an answer of distinct values gains nothing from it.
func (s *scanner) intern(b []byte) string {
	if v, ok := s.names[string(b)]; ok {
		return v
	}
	v := string(b)
	if len(s.names) < 1<<16 {
		s.names[v] = v
	}
	return v
}

// number reads a JSON number.
func (s *scanner) number() (float64, error) {
	b, err := s.numberBytes()
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return 0, syntaxError("%q is not a number", b)
	}
	return v, nil
}

// numberBytes reads a number's bytes into numBytes, valid until the next number.
func (s *scanner) numberBytes() ([]byte, error) {
	if _, err := s.next(); err != nil {
		return nil, err
	}
	out := s.numBytes[:0]
	for {
		i := s.pos
		for i < len(s.buf) {
			c := s.buf[i]
			if !('0' <= c && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E') {
				break
			}
			i++
		}
		out = append(out, s.buf[s.pos:i]...)
		s.pos = i
		if len(out) > 64 {
			return nil, syntaxError("number too long")
		}
		if i < len(s.buf) || !s.fill() {
			break
		}
	}
	s.numBytes = out[:0]
	if len(out) == 0 || out[0] == '+' {
		return nil, syntaxError("expected a number")
	}
	return out, nil
}

// millis is a sample time in seconds, as Prometheus writes it (1700000000 or 1700000000.123), in milliseconds,
// read without a float; false for any other form (an exponent, more decimals), which a float then reads.
func millis(b []byte) (int64, bool) {
	var n int64
	i := 0
	for ; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
		if i >= 12 {
			return 0, false
		}
		n = n*10 + int64(b[i]-'0')
	}
	if i == 0 {
		return 0, false
	}
	frac, digits := int64(0), 0
	if i < len(b) && b[i] == '.' {
		for i++; i < len(b) && '0' <= b[i] && b[i] <= '9' && digits < 3; i++ {
			frac = frac*10 + int64(b[i]-'0')
			digits++
		}
		if digits == 0 {
			return 0, false
		}
	}
	if i != len(b) {
		return 0, false
	}
	for ; digits < 3; digits++ {
		frac *= 10
	}
	return n*1000 + frac, true
}

// literal reads true, false or null.
func (s *scanner) literal() (any, error) {
	c, err := s.next()
	if err != nil {
		return nil, err
	}
	word, v := "null", any(nil)
	switch c {
	case 't':
		word, v = "true", true
	case 'f':
		word, v = "false", false
	}
	if !s.ahead(word) {
		return nil, syntaxError("expected %s", word)
	}
	s.pos += len(word)
	return v, nil
}

// skip consumes one value of any kind.
func (s *scanner) skip() error { return s.skipAt(0) }

func (s *scanner) skipAt(depth int) error {
	if depth > maxDepth {
		return syntaxError("values nested deeper than %d", maxDepth)
	}
	c, err := s.next()
	if err != nil {
		return err
	}
	switch {
	case c == '{':
		return s.members(func([]byte) error { return s.skipAt(depth + 1) })
	case c == '[':
		return s.elements(func() error { return s.skipAt(depth + 1) })
	case c == '"':
		_, err := s.bytes()
		return err
	case c == '-' || '0' <= c && c <= '9':
		_, err := s.number()
		return err
	}
	_, err = s.literal()
	return err
}

// strings reads an array of strings, keeping at most limit of them.
func (s *scanner) strings(limit int) ([]string, error) {
	var out []string
	err := s.elements(func() error {
		b, err := s.bytes()
		if err == nil && len(out) < limit {
			out = append(out, string(b))
		}
		return err
	})
	return out, err
}

// envelope reads {"status":…, "data":…, "warnings":[…], …} field by field, handing data to onData, which must
// consume it or return errStop, which ends the reading as decodeEnvelope's does.
func (s *scanner) envelope(env *envelope, onData func() error) error {
	return s.members(func(key []byte) error {
		var err error
		switch string(key) {
		case "data":
			return onData()
		case "warnings":
			env.Warnings, err = s.strings(maxWarnings)
		case "infos":
			env.Infos, err = s.strings(maxWarnings)
		case "isPartial":
			var v any
			if v, err = s.literal(); err == nil {
				env.IsPartial = v == true // null leaves it false, as encoding/json does
			}
		case "status", "errorType", "error":
			k := string(key) // before bytes overwrites it
			var b []byte
			if b, err = s.bytes(); err == nil {
				switch k {
				case "status":
					env.Status = string(b)
				case "errorType":
					env.ErrorType = string(b)
				default:
					env.Error = string(b)
				}
			}
		default:
			err = s.skip()
		}
		return err
	})
}

// matrix reads {"resultType":"matrix","result":[…]} series by series, stopping (with errStop and truncated set)
// once query.MaxSeriesPerQuery series are held or budget has no room for a series' points (stream then reports
// what it holds).
func (s *scanner) matrix(budget *pointBudget) (m model.Matrix, truncated bool, err error) {
	resultType := ""
	err = s.members(func(key []byte) error {
		switch string(key) {
		case "resultType":
			b, err := s.bytes()
			if err != nil {
				return err
			}
			if resultType = string(b); resultType != "matrix" {
				return fmt.Errorf("result type %s is not a matrix", resultType)
			}
			return nil
		case "result":
			return s.elements(func() error {
				if len(m) >= query.MaxSeriesPerQuery {
					truncated = true
					return errStop
				}
				ss, err := s.series()
				if err != nil {
					return err
				}
				if !budget.take(len(ss.Values)) {
					truncated = true
					return errStop
				}
				m = append(m, ss)
				return nil
			})
		}
		return s.skip()
	})
	return m, truncated, err
}

// series reads one {"metric":{…},"values":[[t,"v"],…]} (other members, such as native histograms, skipped).
func (s *scanner) series() (*model.SampleStream, error) {
	ss := &model.SampleStream{Metric: model.Metric{}}
	err := s.members(func(key []byte) error {
		switch string(key) {
		case "metric":
			return s.members(func(name []byte) error {
				n := s.intern(name)
				v, err := s.string()
				if err != nil {
					return err
				}
				ss.Metric[model.LabelName(n)] = model.LabelValue(v)
				return nil
			})
		case "values":
			ss.Values = make([]model.SamplePair, 0, s.points)
			err := s.elements(func() error {
				p, err := s.pair()
				ss.Values = append(ss.Values, p)
				return err
			})
			if n := len(ss.Values); cap(ss.Values) > n+n/4+16 {
				ss.Values = slices.Clone(ss.Values)
			}
			s.points = len(ss.Values)
			return err
		}
		return s.skip()
	})
	return ss, err
}

// pair reads [1700000000.123,"1.5"].
func (s *scanner) pair() (model.SamplePair, error) {
	var p model.SamplePair
	if err := s.expect('['); err != nil {
		return p, err
	}
	tb, err := s.numberBytes()
	if err != nil {
		return p, fmt.Errorf("sample time: %w", err)
	}
	t, ok := millis(tb)
	if !ok {
		ts, err := strconv.ParseFloat(string(tb), 64)
		if err != nil || math.IsNaN(ts) || math.IsInf(ts, 0) || math.Abs(ts) > 1e15 {
			return p, syntaxError("sample time %q is not a time", tb)
		}
		t = int64(math.Round(ts * 1000))
	}
	if err := s.expect(','); err != nil {
		return p, err
	}
	b, err := s.bytes()
	if err != nil {
		return p, fmt.Errorf("sample value: %w", err)
	}
	v, err := parseValue(b)
	if err != nil {
		return p, fmt.Errorf("sample value: %w", err)
	}
	if err := s.expect(']'); err != nil {
		return p, err
	}
	p.Timestamp, p.Value = model.Time(t), model.SampleValue(v)
	return p, nil
}
