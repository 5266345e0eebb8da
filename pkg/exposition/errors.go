package exposition

import (
	"errors"
	"fmt"
	"strconv"
)

// ErrSampleLimit is wrapped by errors for bodies with more samples than
// ParseOptions.MaxSamples.
var ErrSampleLimit = errors.New("sample limit exceeded")

// ParseError reports malformed input with its position.
type ParseError struct {
	// Line is the 1-based line number.
	Line int
	// Msg says what is wrong.
	Msg string
	// Near is a short excerpt of the line around the problem.
	Near string
}

// Error implements error.
func (e *ParseError) Error() string {
	if e.Near == "" {
		return fmt.Sprintf("exposition: line %d: %s", e.Line, e.Msg)
	}
	return fmt.Sprintf("exposition: line %d: %s, near %s", e.Line, e.Msg, strconv.Quote(e.Near))
}

// excerptLen bounds Near so a megabyte-long line cannot bloat logs.
const excerptLen = 48

// excerpt returns up to excerptLen bytes of line around column col, marking
// cut ends with "...".
func excerpt(line []byte, col int) string {
	col = min(max(col, 0), len(line))
	if len(line) <= excerptLen {
		return string(line)
	}
	lo := max(col-excerptLen/3, 0)
	hi := min(lo+excerptLen, len(line))
	lo = max(hi-excerptLen, 0)
	s := string(line[lo:hi])
	if lo > 0 {
		s = "..." + s
	}
	if hi < len(line) {
		s += "..."
	}
	return s
}
