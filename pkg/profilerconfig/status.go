package profilerconfig

import (
	"errors"
	"net/http"
)

// HTTPStatus is the status an API answers a read or write failure of this package with: the file's content is at
// fault (422), the path is refused (403), anything else is the host's (500). The app and the agent answer alike.
func HTTPStatus(err error) int {
	switch {
	case errors.Is(err, ErrMalformed), errors.Is(err, ErrNotRegular):
		return http.StatusUnprocessableEntity
	case errors.Is(err, ErrNotAllowed):
		return http.StatusForbidden
	}
	return http.StatusInternalServerError
}
