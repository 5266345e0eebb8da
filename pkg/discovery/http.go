package discovery

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// httpSource asks an http_sd URL with the data source's client (its credentials and egress rules).
type httpSource struct {
	url    string
	client *http.Client
}

// httpTimeout bounds one http_sd request, as Prometheus's default refresh does not wait longer.
const httpTimeout = 30 * time.Second

func newHTTP(s Source, client *http.Client) *httpSource {
	return &httpSource{url: s.URL, client: client}
}

func (h *httpSource) Discover(ctx context.Context, max int) ([]Target, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, httpTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.url, nil)
	if err != nil {
		return nil, false, fmt.Errorf("http_sd: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-Prometheus-Refresh-Interval-Seconds", "30")
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, false, fmt.Errorf("http_sd: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, false, fmt.Errorf("http_sd: the server answered %s", resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		return nil, false, fmt.Errorf("http_sd: the answer is %.64s, not application/json", ct)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxBodyBytes+1))
	if err != nil {
		return nil, false, fmt.Errorf("http_sd: reading the answer: %w", err)
	}
	if len(b) > MaxBodyBytes {
		return nil, false, fmt.Errorf("http_sd: the answer is over the %d MB limit", MaxBodyBytes>>20)
	}
	ts, trunc, err := parseGroups(b, false, max, nil)
	if err != nil {
		return nil, false, fmt.Errorf("http_sd: %w", err)
	}
	return ts, trunc, nil
}

func (*httpSource) Close() {}
