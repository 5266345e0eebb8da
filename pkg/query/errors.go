package query

import "errors"

// InvalidError is a query the plugin refuses as written: a bad field, a range or a read over the limits. It is the
// user's to fix, so Grafana counts it as a downstream error, not the plugin's.
type InvalidError struct{ Err error }

func (e *InvalidError) Error() string { return e.Err.Error() }
func (e *InvalidError) Unwrap() error { return e.Err }

// Invalid marks err as the query's fault; nil stays nil.
func Invalid(err error) error {
	var ie *InvalidError
	if err == nil || errors.As(err, &ie) {
		return err
	}
	return &InvalidError{Err: err}
}
