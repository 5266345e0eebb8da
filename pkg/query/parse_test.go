package query

import (
	"encoding/json"
	"fmt"
)

// Parse decodes and validates a query, applying defaults; errors name the offending field.
func Parse(raw []byte) (Query, error) {
	var q Query
	if err := json.Unmarshal(raw, &q); err != nil {
		return Query{}, Invalid(fmt.Errorf("query JSON is invalid: %w", err))
	}
	return q, q.Validate()
}
