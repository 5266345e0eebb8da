package promapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// StoresTTL is how long Thanos Query's list of unhealthy stores is reused: a dashboard's panels share one look, and
// a store that came back stops being named within a refresh or two.
const StoresTTL = 10 * time.Second

// maxStores bounds the stores read from one /api/v1/stores answer.
const maxStores = 1000

// DownStores lists the stores Thanos Query reports unhealthy in /api/v1/stores (a lastError), by the address it
// names them by: once its health check fails, the querier leaves such a store out of every answer without a
// warning, so the answer's own warnings do not tell. Servers without the endpoint (all but Thanos Query) have none.
func (c *Client) DownStores(ctx context.Context) ([]string, error) {
	var out []string
	_, err := c.stream(ctx, "/api/v1/stores", nil, http.MethodGet, func(dec *json.Decoder) error {
		// Read store by store, never the whole answer: any server is asked, and one that is not Thanos Query may
		// answer this path with anything, however large; an answer not shaped as Thanos's names no store.
		if err := expectDelim(dec, '{'); err != nil {
			return errStop
		}
		read := 0
		for dec.More() {
			if _, err := dec.Token(); err != nil { // the store type
				return err
			}
			if err := expectDelim(dec, '['); err != nil {
				return errStop
			}
			for dec.More() {
				if read++; read > maxStores {
					return errStop
				}
				var st struct {
					Name      string  `json:"name"`
					LastError *string `json:"lastError"`
				}
				if err := dec.Decode(&st); err != nil {
					return errStop
				}
				if st.LastError != nil && *st.LastError != "" {
					out = append(out, c.serverText(st.Name))
				}
			}
			if _, err := dec.Token(); err != nil { // ]
				return err
			}
		}
		_, err := dec.Token() // }
		return err
	})
	if err != nil {
		var e *Error
		if errors.As(err, &e) && e.Status != 0 && e.Status != http.StatusUnauthorized && e.Status != http.StatusForbidden && e.Status < 500 {
			return nil, nil // not a Thanos querier
		}
		return nil, err
	}
	sort.Strings(out)
	return out, nil
}

// storeCache holds DownStores' last answer for StoresTTL.
type storeCache struct {
	mu      sync.Mutex
	down    []string
	fetched time.Time
}

// get returns the stores Thanos Query reports unhealthy, looking again after StoresTTL; a failed look gives none
// (the query's own answer says whether the server is reachable).
func (sc *storeCache) get(ctx context.Context, c *Client) []string {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.fetched.IsZero() || time.Since(sc.fetched) >= StoresTTL {
		down, err := c.DownStores(ctx)
		if err != nil {
			return nil
		}
		sc.down, sc.fetched = down, time.Now()
	}
	return sc.down
}

// DownStoresError is the error of a query while stores are unhealthy and partial answers are refused (DenyPartial).
func DownStoresError(stores []string) error {
	return &Error{Message: PartialRefusedMessage(stores) + ": Thanos Query lists " + plural(len(stores), "it", "them") + " as unhealthy and leaves " +
		plural(len(stores), "it", "them") + " out of every answer (see its /stores page)"}
}

// plural is one for a single store, many otherwise.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// storeNames is how stores are listed in a message.
func storeNames(stores []string) string { return strings.Join(stores, ", ") }
