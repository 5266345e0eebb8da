package exposition

import (
	"math"
	"strconv"
)

// Character classes of unquoted names, as in expfmt: label names are
// [a-zA-Z_][a-zA-Z0-9_]*, metric names also allow ':'.
const (
	cLabelStart = 1 << iota
	cLabelCont
	cMetricStart
	cMetricCont
)

var charClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		alpha := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
		digit := c >= '0' && c <= '9'
		if alpha {
			t[c] |= cLabelStart | cMetricStart
		}
		if alpha || digit {
			t[c] |= cLabelCont | cMetricCont
		}
		if c == ':' {
			t[c] |= cMetricStart | cMetricCont
		}
	}
	return t
}()

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

func skipBlank(line []byte, i int) int {
	for i < len(line) && isBlank(line[i]) {
		i++
	}
	return i
}

// tokenEnd returns the index of the first blank at or after i.
func tokenEnd(line []byte, i int) int {
	for i < len(line) && !isBlank(line[i]) {
		i++
	}
	return i
}

// unescape resolves the escapes exposition strings allow (\\, \" and \n)
// from s into buf. ok is false if s holds any other escape or ends in '\'.
func unescape(buf, s []byte) (out []byte, bad int, ok bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			buf = append(buf, c)
			continue
		}
		i++
		if i == len(s) {
			return buf, i - 1, false
		}
		switch s[i] {
		case '\\':
			buf = append(buf, '\\')
		case '"':
			buf = append(buf, '"')
		case 'n':
			buf = append(buf, '\n')
		default:
			return buf, i - 1, false
		}
	}
	return buf, 0, true
}

// quotedEnd finds the closing quote of a string whose opening quote is at
// line[i-1]. It returns the index of the closing quote and whether the string
// contains a backslash, or -1 if the line ends first.
func quotedEnd(line []byte, i int) (end int, escaped bool) {
	for i < len(line) {
		switch line[i] {
		case '"':
			return i, escaped
		case '\\':
			escaped = true
			i += 2
			continue
		}
		i++
	}
	return -1, escaped
}

// pow10 holds the powers of ten that are exact in a float64.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// parseFloat parses a sample value or le/quantile label like expfmt does:
// strconv.ParseFloat syntax minus hex floats and '_' separators.
func parseFloat[T string | []byte](b T) (float64, bool) {
	// Fast path for plain decimals such as "12.0" or "0.25": at most 15
	// digits fit a float64 exactly and so does 10^frac for frac <= 22, so one
	// correctly rounded division gives the correctly rounded result (the same
	// exact case strconv handles first).
	i, neg := 0, false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		i++
	}
	var mant uint64
	digits, frac, dot := 0, 0, false
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case c >= '0' && c <= '9':
			mant = mant*10 + uint64(c-'0')
			digits++
			if dot {
				frac++
			}
		case c == '.' && !dot:
			dot = true
		default:
			return parseFloatSlow(b)
		}
		if digits > 15 {
			return parseFloatSlow(b)
		}
	}
	if digits == 0 {
		return parseFloatSlow(b)
	}
	f := float64(mant) / pow10[frac]
	if neg {
		f = -f
	}
	return f, true
}

func parseFloatSlow[T string | []byte](b T) (float64, bool) {
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c == 'p' || c == 'P' || c == '_' {
			return 0, false
		}
	}
	// strconv does not retain its argument, so this conversion stays on the
	// stack for short tokens.
	f, err := strconv.ParseFloat(string(b), 64)
	return f, err == nil
}

// parseInt parses a base-10 int64 with optional sign, like strconv.ParseInt.
func parseInt(b []byte) (int64, bool) {
	i, neg := 0, false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		i++
	}
	if i == len(b) {
		return 0, false
	}
	var u uint64
	for ; i < len(b); i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if u > (1<<63)/10 {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
		if u > 1<<63 {
			return 0, false
		}
	}
	if neg {
		return -int64(u-1) - 1, true // #nosec G115 -- u is at most 1<<63 here (checked above), so u-1 fits in int64
	}
	if u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}

// parseSecondsMs converts an OpenMetrics timestamp (float seconds) to
// milliseconds, rounding to the nearest millisecond so "1.001" is 1001.
func parseSecondsMs(b []byte) (int64, bool) {
	f, ok := parseFloat(b)
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	ms := math.Round(f * 1000)
	if ms >= math.MaxInt64 || ms < math.MinInt64 {
		return 0, false
	}
	return int64(ms), true
}
