// Package promapi is Prometheus mode: a client for the Prometheus HTTP API (Prometheus, Mimir, Thanos,
// VictoriaMetrics), the discovery of which vLLM names a server holds, and the PromQL that answers every query
// type of direct mode with the same numbers.
package promapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
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
	// DenyPartial asks the server to fail a query rather than answer it without a store that failed (Thanos,
	// VictoriaMetrics cluster); otherwise such an answer comes with PartialNotice.
	DenyPartial bool
	// Results keeps range queries' final steps between refreshes (nil: every range query asks for all its steps).
	Results *Results

	// noSplit sends every range query as one request (the tests' reference for split ones).
	noSplit bool
	// victoria is set once an answer came from VictoriaMetrics, whose PromQL differs from Prometheus's.
	victoria atomic.Bool
}

// VictoriaMetrics reports whether the server answered as VictoriaMetrics (its X-Server-Hostname header), whose
// rate() does not extrapolate and whose default -search.latencyOffset hides the newest 30 s.
func (c *Client) VictoriaMetrics() bool { return c.victoria.Load() }

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

// BadQuery reports whether the server rejected the expression itself (Prometheus's 400 bad_data,
// VictoriaMetrics' 422), not the request; Prometheus's and Thanos's 422 execution errors (a store failed, too many
// samples) are not about the expression.
func (e *Error) BadQuery() bool {
	switch e.ErrorType {
	case "bad_data":
		return true
	case "execution", "timeout", "canceled", "internal", "unavailable":
		return false
	}
	return e.Status == http.StatusBadRequest || e.Status == http.StatusUnprocessableEntity
}

// maxBody caps what is read of one answer; a larger answer fails with a message saying so.
const maxBody = 256 << 20

// maxErrorBody caps what is read of a non-2xx answer: only a message is wanted from it.
const maxErrorBody = 64 << 10

// maxWarnings bounds the warnings and infos kept from one answer.
const maxWarnings = 32

// envelope is an answer's fields besides data.
type envelope struct {
	Status    string   `json:"status"`
	ErrorType string   `json:"errorType"`
	Error     string   `json:"error"`
	Warnings  []string `json:"warnings"`
	Infos     []string `json:"infos"`
	// IsPartial is VictoriaMetrics cluster's mark of an answer without some vmstorage nodes.
	IsPartial bool `json:"isPartial"`
}

// maxStatusAnswer caps what is read of a status answer (buildinfo, flags): a few kB from any Prometheus, and whatever
// a server that is not one sends, such as a million-series matrix, was held whole.
const maxStatusAnswer = 1 << 20

// status asks one of the server's status endpoints and returns its data, held whole and so read to at most
// maxStatusAnswer. Everything larger streams (stream).
func (c *Client) status(ctx context.Context, path string) (json.RawMessage, error) {
	var data json.RawMessage
	_, err := c.streamWith(ctx, path, nil, http.MethodGet, maxStatusAnswer, func(br *bufio.Reader, env *envelope) error {
		return decodeEnvelope(json.NewDecoder(br), env, func(dec *json.Decoder) error { return dec.Decode(&data) })
	})
	return data, err
}

// stream sends one API request and decodes the answer as it arrives, never holding the body: onData is called
// with the decoder at the start of the data value and must consume it, or return errStop after a limit, which
// ends the decoding (fields after data, such as warnings, are then not read).
func (c *Client) stream(ctx context.Context, path string, params url.Values, method string, onData func(*json.Decoder) error) ([]string, error) {
	return c.streamWith(ctx, path, params, method, maxBody, func(br *bufio.Reader, env *envelope) error {
		return decodeEnvelope(json.NewDecoder(br), env, onData)
	})
}

// streamWith is stream with the answer's decoding given, reading at most limit bytes of it: decode reads the envelope
// into env and its data, from br.
func (c *Client) streamWith(ctx context.Context, path string, params url.Values, method string, limit int64, decode func(br *bufio.Reader, env *envelope) error) ([]string, error) {
	u := strings.TrimRight(c.BaseURL, "/") + path
	if c.DenyPartial && params != nil {
		denyPartial(params)
	}
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
		return nil, &Error{Message: "bad Prometheus URL: " + c.serverText(err.Error())}
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, &Error{Message: c.transportMessage(ctx, err)}
	}
	defer resp.Body.Close()
	if resp.Header.Get("X-Server-Hostname") != "" {
		c.victoria.Store(true)
	}
	if resp.StatusCode/100 != 2 {
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		if err != nil {
			return nil, &Error{Status: resp.StatusCode, Message: "reading the answer: " + c.transportMessage(ctx, err)}
		}
		var env envelope
		jsonErr := json.Unmarshal(body, &env)
		return c.warnings(env), c.apiError(resp.StatusCode, path, env, jsonErr != nil, body)
	}
	body := &limitedReader{r: resp.Body, n: limit}
	br := bufio.NewReader(body)
	// The head is what to show when the answer is not Prometheus's JSON at all (a login page). It is copied: Peek's
	// slice is the reader's buffer, which the decoding overwrites with later parts of the answer.
	peeked, _ := br.Peek(512)
	head := bytes.Clone(peeked)
	var env envelope
	err = decode(br, &env)
	switch {
	case errors.Is(err, errStop):
	case body.hit:
		return nil, &Error{Status: resp.StatusCode, Message: fmt.Sprintf("the answer is larger than %d MB; narrow the query", limit>>20)}
	case err != nil && ctx.Err() != nil || err != nil && isTimeout(err):
		return nil, &Error{Status: resp.StatusCode, Message: "reading the answer: " + c.transportMessage(ctx, err)}
	case err != nil && !bytes.HasPrefix(bytes.TrimSpace(head), []byte("{")):
		return nil, &Error{Status: resp.StatusCode, Message: c.serverText(string(head))}
	case err != nil:
		return nil, &Error{Status: resp.StatusCode, Message: "unexpected answer from " + path + ": " + c.serverText(err.Error())}
	}
	if env.Status != "success" {
		return c.warnings(env), c.apiError(resp.StatusCode, path, env, false, nil)
	}
	return c.warnings(env), nil
}

// errStop ends decoding of an answer early, after a limit was reached.
var errStop = errors.New("stop decoding")

// decodeEnvelope reads {"status":…, "data":…, "warnings":[…], …} field by field, handing data to onData.
func decodeEnvelope(dec *json.Decoder, env *envelope, onData func(*json.Decoder) error) error {
	if err := expectDelim(dec, '{'); err != nil {
		return err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		switch key {
		case "data":
			if err := onData(dec); err != nil {
				return err
			}
		case "warnings":
			if env.Warnings, err = decodeStrings(dec, maxWarnings); err != nil {
				return err
			}
		case "infos":
			if env.Infos, err = decodeStrings(dec, maxWarnings); err != nil {
				return err
			}
		case "isPartial":
			if err := dec.Decode(&env.IsPartial); err != nil {
				return err
			}
		case "status", "errorType", "error":
			var v string
			if err := dec.Decode(&v); err != nil {
				return err
			}
			switch key {
			case "status":
				env.Status = v
			case "errorType":
				env.ErrorType = v
			default:
				env.Error = v
			}
		default:
			if err := skipValue(dec); err != nil {
				return err
			}
		}
	}
	return nil
}

// decodeStrings reads an array of strings, keeping at most limit of them.
func decodeStrings(dec *json.Decoder, limit int) ([]string, error) {
	if err := expectDelim(dec, '['); err != nil {
		return nil, err
	}
	var out []string
	for dec.More() {
		var s string
		if err := dec.Decode(&s); err != nil {
			return nil, err
		}
		if len(out) < limit {
			out = append(out, s)
		}
	}
	_, err := dec.Token()
	return out, err
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("expected %q, found %v", want, tok)
	}
	return nil
}

// warnings are the answer's warnings and infos (Prometheus 3's annotations), as the plugin shows them.
func (c *Client) warnings(env envelope) []string {
	var out []string
	for _, w := range append(env.Warnings, env.Infos...) {
		out = append(out, c.serverText(w))
	}
	if env.IsPartial {
		out = append(out, VictoriaPartialWarning)
	}
	return out
}

// NoTenantMessage is the error for a multi-tenant store's 401 "no org id": the request named no tenant.
const NoTenantMessage = `the server wants a tenant (Cortex/Mimir answered 401 "no org id"): add the custom HTTP header X-Scope-OrgID ` +
	`with the tenant's name in the data source's settings (and /prometheus at the end of the URL)`

// apiError turns a failed answer into an Error carrying the server's own message, or a hint when it has none.
func (c *Client) apiError(status int, path string, env envelope, notJSON bool, body []byte) *Error {
	e := &Error{Status: status, ErrorType: c.serverText(env.ErrorType), Message: c.serverText(env.Error)}
	if stores, ok := FailedStores(env.Error); ok {
		e.Message = PartialRefusedMessage(stores) + ": " + e.Message
	}
	if notJSON || env.Error == "" {
		e.Message = c.serverText(string(body))
		switch {
		case status == http.StatusUnauthorized && strings.Contains(strings.ToLower(string(body)), "no org id"):
			e.Message = NoTenantMessage
		case status == http.StatusUnauthorized || status == http.StatusForbidden:
			e.Message = "the server refused the credentials (" + http.StatusText(status) + "): check basic auth, the bearer token or OAuth forwarding"
			if s := c.serverText(string(body)); s != "" {
				e.Message += ": " + s
			}
		case status == http.StatusNotFound:
			e.Message = "no Prometheus HTTP API at " + redact.URL(c.BaseURL) + path + " (check the server URL)"
		}
		if e.Message == "" {
			e.Message = http.StatusText(status)
		}
	}
	return e
}

// limitedReader reads at most n bytes and records whether the answer went beyond.
type limitedReader struct {
	r   io.Reader
	n   int64
	hit bool
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		l.hit = true
		return 0, io.ErrUnexpectedEOF
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
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
	if isTimeout(err) {
		return "Prometheus did not answer in time (timeout): " + c.serverText(err.Error())
	}
	return "Prometheus is unreachable: " + c.serverText(err.Error())
}

// isTimeout reports whether err is a timeout, such as the HTTP client's while an answer's body is still arriving.
func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

func (c *Client) method() string {
	if strings.EqualFold(c.Method, http.MethodGet) {
		return http.MethodGet
	}
	return http.MethodPost
}

// QueryRange evaluates expr at start, start+step, … ≤ end: the steps c.Results holds from earlier answers, the
// others asked of the server, a range longer than query.SplitInterval as several requests (splitRange), all joined
// into the same answer.
func (c *Client) QueryRange(ctx context.Context, expr string, start, end time.Time, step time.Duration) (model.Matrix, []string, error) {
	fetch := func(ctx context.Context, start, end time.Time) (model.Matrix, []string, error) {
		if spans := splitRange(start, end, step); len(spans) > 1 && !c.noSplit && splittable(expr) {
			return c.queryRangeSplit(ctx, expr, spans, step)
		}
		return c.queryRange(ctx, expr, start, end, step, new(pointBudget))
	}
	if c.Results == nil || !cacheable(expr) {
		return fetch(ctx, start, end)
	}
	return c.Results.queryRange(ctx, expr, start, end, step, fetch)
}

// queryRange is one range-query request, its points counted against budget.
func (c *Client) queryRange(ctx context.Context, expr string, start, end time.Time, step time.Duration, budget *pointBudget) (model.Matrix, []string, error) {
	var m model.Matrix
	var truncated bool
	warns, err := c.streamWith(ctx, "/api/v1/query_range", url.Values{
		"query": {expr}, "start": {formatTime(start)}, "end": {formatTime(end)},
		"step": {strconv.FormatFloat(step.Seconds(), 'f', -1, 64)},
	}, c.method(), maxBody, func(br *bufio.Reader, env *envelope) error {
		s := newScanner(br)
		return s.envelope(env, func() (err error) {
			m, truncated, err = s.matrix(budget)
			return err
		})
	})
	if err != nil {
		return nil, warns, err
	}
	if truncated {
		warns = append(warns, TruncatedWarning)
	}
	return m, warns, nil
}

// TruncatedWarning is among a query's warnings when its answer was cut at query.MaxSeriesPerQuery series or
// query.MaxPointsPerQuery points; Eval turns it into query.TruncatedNotice.
const TruncatedWarning = "inferscope: answer truncated"

// Query evaluates an instant query; scalars come back as a one-element vector.
func (c *Client) Query(ctx context.Context, expr string, at time.Time) (model.Vector, []string, error) {
	var v model.Vector
	var truncated bool
	warns, err := c.stream(ctx, "/api/v1/query", url.Values{"query": {expr}, "time": {formatTime(at)}}, c.method(),
		func(dec *json.Decoder) (err error) {
			v, truncated, err = decodeVectorStream(dec)
			return err
		})
	if err != nil {
		return nil, warns, err
	}
	if truncated {
		warns = append(warns, TruncatedWarning)
	}
	return v, warns, nil
}

// LabelValues lists a label's values on series matching any of the selectors (all series when none).
func (c *Client) LabelValues(ctx context.Context, label string, match []string, start, end time.Time) ([]string, []string, error) {
	return c.labels(ctx, "/api/v1/label/"+url.PathEscape(label)+"/values", "label values", match, start, end, math.MaxInt)
}

// labels asks one of the APIs that answer a list of strings (label names, a label's values) over matching series,
// decoding the list as it arrives and keeping at most limit strings.
func (c *Client) labels(ctx context.Context, path, what string, match []string, start, end time.Time, limit int) ([]string, []string, error) {
	params := url.Values{"match[]": match}
	if !start.IsZero() {
		params.Set("start", formatTime(start))
		params.Set("end", formatTime(end))
	}
	var out []string
	warns, err := c.stream(ctx, path, params, http.MethodGet, func(dec *json.Decoder) (err error) {
		out, err = decodeStrings(dec, limit)
		if err != nil {
			err = fmt.Errorf("unexpected %s answer: %w", what, err)
		}
		return err
	})
	if err != nil {
		return nil, warns, err
	}
	return out, warns, nil
}

// EachSeries calls each with the label set of every series matching any of the selectors, one at a time as the
// answer arrives, so that what is kept of it is the caller's choice; each returns errStop to end the answer early.
func (c *Client) EachSeries(ctx context.Context, match []string, start, end time.Time, each func(model.Metric) error) ([]string, error) {
	params := url.Values{"match[]": match}
	if !start.IsZero() {
		params.Set("start", formatTime(start))
		params.Set("end", formatTime(end))
	}
	return c.stream(ctx, "/api/v1/series", params, c.method(), func(dec *json.Decoder) error {
		if err := expectDelim(dec, '['); err != nil {
			return err
		}
		for dec.More() {
			var m model.Metric
			if err := dec.Decode(&m); err != nil {
				return err
			}
			if err := each(m); err != nil {
				return err
			}
		}
		_, err := dec.Token() // ]
		return err
	})
}

// BuildInfo is the server's /api/v1/status/buildinfo; ok is false for servers without that endpoint.
func (c *Client) BuildInfo(ctx context.Context) (version string, ok bool, err error) {
	data, err := c.status(ctx, "/api/v1/status/buildinfo")
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
