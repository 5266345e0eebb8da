package sim

import (
	"math"
	"strconv"
	"strings"
)

// pyFloat renders v the way Python's prometheus_client does (floatToGoString): Python repr,
// except that large positive numbers switch to Go-style exponents ("1.7682643398898673e+09").
// Real vLLM payloads look like this, and parsers in the wild have been written against it.
func pyFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	s := pyRepr(v)
	dot := strings.IndexByte(s, '.')
	if v > 0 && dot > 6 {
		mantissa := s[:1] + "." + s[1:dot] + s[dot+1:]
		mantissa = strings.TrimRight(mantissa, "0.")
		return mantissa + "e+0" + strconv.Itoa(dot-1)
	}
	return s
}

// pyRepr is Python's repr() of a float: the shortest round-trip digits, fixed notation with a
// trailing ".0" for 1e-4 <= |v| < 1e16, scientific with a two-digit exponent otherwise.
func pyRepr(v float64) string {
	if v == 0 {
		if math.Signbit(v) {
			return "-0.0"
		}
		return "0.0"
	}
	e := strconv.FormatFloat(v, 'e', -1, 64) // e.g. "-1.2345e+09"
	sign := ""
	if e[0] == '-' {
		sign, e = "-", e[1:]
	}
	ePos := strings.IndexByte(e, 'e')
	digits := strings.Replace(e[:ePos], ".", "", 1)
	exp, _ := strconv.Atoi(e[ePos+1:])
	decpt := exp + 1 // value = 0.<digits> * 10^decpt
	var b strings.Builder
	b.WriteString(sign)
	if decpt > -4 && decpt <= 16 {
		switch {
		case decpt <= 0:
			b.WriteString("0.")
			b.WriteString(strings.Repeat("0", -decpt))
			b.WriteString(digits)
		case decpt < len(digits):
			b.WriteString(digits[:decpt])
			b.WriteByte('.')
			b.WriteString(digits[decpt:])
		default:
			b.WriteString(digits)
			b.WriteString(strings.Repeat("0", decpt-len(digits)))
			b.WriteString(".0")
		}
		return b.String()
	}
	b.WriteString(digits[:1])
	if len(digits) > 1 {
		b.WriteByte('.')
		b.WriteString(digits[1:])
	}
	b.WriteByte('e')
	x := decpt - 1
	if x < 0 {
		b.WriteByte('-')
		x = -x
	} else {
		b.WriteByte('+')
	}
	if x < 10 {
		b.WriteByte('0')
	}
	b.WriteString(strconv.Itoa(x))
	return b.String()
}

// rustFloat renders v the way Dynamo's Rust exporter does: integers without a decimal point,
// shortest digits otherwise, never an exponent.
func rustFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

var helpEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`)

var labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
