// Package promapi is Prometheus mode: a client for the Prometheus HTTP API (Prometheus, Mimir, Thanos,
// VictoriaMetrics), the discovery of which vLLM names a server holds, and the PromQL that answers every query
// type of direct mode with the same numbers.
package promapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/inferscope/inferscope-vllm/pkg/query"
	"github.com/inferscope/inferscope-vllm/pkg/redact"
)

// Client calls one Prometheus-compatible server's HTTP API.
type Client struct {
	// BaseURL is the server's root, e.g. http://prometheus:9090 or https://mimir/prometheus.
	BaseURL string
	// HTTP carries auth, TLS, custom headers and the timeout; build it with the SDK's httpclient.
	HTTP *http.Client
	// Method is GET or POST for query endpoints; POST (the default) carries long expressions.
	Method string
	// Scrub removes the data source's secrets from server text (errors, warnings) before anyone sees it: a proxy
	// may echo the request's Authorization or tenant header.
	Scrub *redact.Scrubber
}

// MaxServerText bounds each piece of server text (an error, a warning) the plugin passes on.
const MaxServerText = 512

// serverText is how server text is passed on: secrets scrubbed first, then cut to MaxServerText.
func (c *Client) serverText(s string) string {
	if len(s) > 16*MaxServerText {
		s = s[:16*MaxServerText] // scrubbing a multi-megabyte error costs more than it is worth to show
	}
	return query.Truncate(strings.TrimSpace(c.Scrub.Text(s)), MaxServerText)
}

// Error is a failed API call: the server's own errorType and message when it sent Prometheus's JSON error body.
type Error struct {
	Status    int    // HTTP status, 0 when the server was not reached
	ErrorType string // Prometheus's errorType: bad_data, timeout, execution, ...
	Message   string
}

func (e *Error) Error() string {
	switch {
	case e.Status == 0:
		return e.Message
	case e.ErrorType != "":
		return fmt.Sprintf("Prometheus answered %d (%s): %s", e.Status, e.ErrorType, e.Message)
	default:
		return fmt.Sprintf("Prometheus answered %d: %s", e.Status, e.Message)
	}
}

// BadQuery reports whether the server rejected the expression itself (a 400 bad_data), not the request.
func (e *Error) BadQuery() bool {
	return e.Status == http.StatusBadRequest || e.ErrorType == "bad_data"
}

type envelope struct {
	Status    string          `json:"status"`
	Data      json.RawMessage `json:"data"`
	ErrorType string          `json:"errorType"`
	Error     string          `json:"error"`
	Warnings  []string        `json:"warnings"`
	Infos     []string        `json:"infos"`
}

// call sends one API request and returns its data and warnings.
func (c *Client) call(ctx context.Context, path string, params url.Values, method string) (json.RawMessage, []string, error) {
	u := strings.TrimRight(c.BaseURL, "/") + path
	var req *http.Request
	var err error
	if method == http.MethodPost {
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(params.Encode()))
		if err == nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
	} else {
		if len(params) > 0 {
			u += "?" + params.Encode()
		}
		req, err = http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	}
	if err != nil {
		return nil, nil, &Error{Message: "bad Prometheus URL: " + c.serverText(err.Error())}
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, nil, &Error{Message: c.transportMessage(ctx, err)}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, nil, &Error{Status: resp.StatusCode, Message: "reading the answer: " + c.transportMessage(ctx, err)}
	}
	var env envelope
	jsonErr := json.Unmarshal(body, &env)
	for i, w := range env.Warnings {
		env.Warnings[i] = c.serverText(w)
	}
	if jsonErr == nil && env.Status == "success" && resp.StatusCode/100 == 2 {
		return env.Data, env.Warnings, nil
	}
	e := &Error{Status: resp.StatusCode, ErrorType: c.serverText(env.ErrorType), Message: c.serverText(env.Error)}
	if jsonErr != nil || env.Error == "" {
		e.Message = c.serverText(string(body))
		switch resp.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden:
			e.Message = "the server refused the credentials (" + http.StatusText(resp.StatusCode) + "): check basic auth, the bearer token or OAuth forwarding"
			if s := c.serverText(string(body)); s != "" {
				e.Message += ": " + s
			}
		case http.StatusNotFound:
			e.Message = "no Prometheus HTTP API at " + redact.URL(c.BaseURL) + path + " (check the server URL)"
		}
		if e.Message == "" {
			e.Message = http.StatusText(resp.StatusCode)
		}
	}
	return nil, env.Warnings, e
}

// transportMessage says why a request got no answer, without the URL's credentials.
func (c *Client) transportMessage(ctx context.Context, err error) string {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded), errors.Is(err, context.DeadlineExceeded):
		return "Prometheus did not answer in time (timeout): " + c.serverText(err.Error())
	case errors.Is(ctx.Err(), context.Canceled):
		return "query cancelled"
	}
	var ue *url.Error
	if errors.As(err, &ue) && ue.Timeout() {
		return "Prometheus did not answer in time (timeout): " + c.serverText(ue.Err.Error())
	}
	return "Prometheus is unreachable: " + c.serverText(err.Error())
}

func (c *Client) method() string {
	if strings.EqualFold(c.Method, http.MethodGet) {
		return http.MethodGet
	}
	return http.MethodPost
}

// QueryRange evaluates expr at start, start+step, … ≤ end.
func (c *Client) QueryRange(ctx context.Context, expr string, start, end time.Time, step time.Duration) (model.Matrix, []string, error) {
	data, warns, err := c.call(ctx, "/api/v1/query_range", url.Values{
		"query": {expr}, "start": {formatTime(start)}, "end": {formatTime(end)},
		"step": {strconv.FormatFloat(step.Seconds(), 'f', -1, 64)},
	}, c.method())
	if err != nil {
		return nil, warns, err
	}
	m, err := decodeMatrix(data)
	if err != nil {
		return nil, warns, &Error{Status: http.StatusOK, Message: "unexpected query_range answer: " + err.Error()}
	}
	return m, warns, nil
}

// Query evaluates an instant query; scalars come back as a one-element vector.
func (c *Client) Query(ctx context.Context, expr string, at time.Time) (model.Vector, []string, error) {
	data, warns, err := c.call(ctx, "/api/v1/query", url.Values{"query": {expr}, "time": {formatTime(at)}}, c.method())
	if err != nil {
		return nil, warns, err
	}
	var r struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, warns, &Error{Status: http.StatusOK, Message: "unexpected query answer: " + err.Error()}
	}
	switch r.ResultType {
	case "vector":
		var v model.Vector
		err = json.Unmarshal(r.Result, &v)
		return v, warns, err
	case "scalar":
		var s model.Scalar
		err = json.Unmarshal(r.Result, &s)
		return model.Vector{{Metric: model.Metric{}, Value: s.Value, Timestamp: s.Timestamp}}, warns, err
	}
	return nil, warns, &Error{Status: http.StatusOK, Message: "query result type " + r.ResultType + " is not a vector"}
}

// LabelValues lists a label's values on series matching any of the selectors (all series when none).
func (c *Client) LabelValues(ctx context.Context, label string, match []string, start, end time.Time) ([]string, []string, error) {
	params := url.Values{"match[]": match}
	if !start.IsZero() {
		params.Set("start", formatTime(start))
		params.Set("end", formatTime(end))
	}
	data, warns, err := c.call(ctx, "/api/v1/label/"+url.PathEscape(label)+"/values", params, http.MethodGet)
	if err != nil {
		return nil, warns, err
	}
	var out []string
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, warns, &Error{Status: http.StatusOK, Message: "unexpected label values answer: " + err.Error()}
	}
	return out, warns, nil
}

// Series lists the label sets of series matching any of the selectors.
func (c *Client) Series(ctx context.Context, match []string, start, end time.Time) ([]model.Metric, []string, error) {
	params := url.Values{"match[]": match}
	if !start.IsZero() {
		params.Set("start", formatTime(start))
		params.Set("end", formatTime(end))
	}
	data, warns, err := c.call(ctx, "/api/v1/series", params, c.method())
	if err != nil {
		return nil, warns, err
	}
	var out []model.Metric
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, warns, &Error{Status: http.StatusOK, Message: "unexpected series answer: " + err.Error()}
	}
	return out, warns, nil
}

// BuildInfo is the server's /api/v1/status/buildinfo; ok is false for servers without that endpoint.
func (c *Client) BuildInfo(ctx context.Context) (version string, ok bool, err error) {
	data, _, err := c.call(ctx, "/api/v1/status/buildinfo", nil, http.MethodGet)
	if err != nil {
		var e *Error
		if errors.As(err, &e) && e.Status != 0 && e.Status != http.StatusUnauthorized && e.Status != http.StatusForbidden && e.Status < 500 {
			return "", false, nil // Thanos, VictoriaMetrics and older servers lack it; the query API still works
		}
		return "", false, err
	}
	var bi struct {
		Version string `json:"version"`
	}
	_ = json.Unmarshal(data, &bi)
	return bi.Version, true, nil
}

func formatTime(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64)
}
