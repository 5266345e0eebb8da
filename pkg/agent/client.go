package agent

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/egress"
	"github.com/inferscope/inferscope-vllm/pkg/redact"
)

// ClientTimeout bounds one call to an agent; profile starts and stops get ProfileClientTimeout, trace downloads
// TraceDownloadTimeout.
const ClientTimeout = 10 * time.Second

// ProfileClientTimeout bounds a profile start or stop through the app: longer than the agent's own VLLMCallTimeout,
// so the app never gives up on a stop the agent is still waiting for vLLM to finish.
const ProfileClientTimeout = VLLMCallTimeout + 30*time.Second

// ErrTraceCut is a trace download that ended before the whole file arrived.
var ErrTraceCut = errors.New("the trace download was cut")

// TLS is how the app reaches an agent over HTTPS.
type TLS struct {
	// CACert is the PEM certificate of the CA that signed the agent's certificate; empty trusts the system's roots.
	CACert string
	// ClientCert and ClientKey (PEM) are the app's certificate when the agent requires one (mTLS).
	ClientCert, ClientKey string
}

// Client calls one agent for the app. It never follows a redirect, so the token goes to the agent's origin only.
type Client struct {
	base  *url.URL
	token string
	hc    *http.Client
	where string // the agent as messages name it, credentials and query removed
	// scrub removes the token, the client key and the app's other secrets from everything the agent answers: a
	// proxy or another service at the agent's URL may echo the request's Authorization header.
	scrub *redact.Scrubber
}

// Error is an agent's answer other than 2xx: its status and message.
type Error struct {
	Status  int
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("the agent answered %d: %s", e.Status, e.Message) }

// ErrUnreachable wraps every failure to reach an agent.
var ErrUnreachable = errors.New("the agent is unreachable")

// ParseURL checks an agent's base URL: http(s)://host:port, with neither credentials nor query, so nothing secret is
// part of it and every message may name it.
func ParseURL(rawURL string) (*url.URL, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.RawQuery != "" {
		return nil, errors.New("the agent URL must be http(s)://host:port, without credentials or query")
	}
	return u, nil
}

// NewClient checks the agent's URL and TLS material and builds its client. Every string the agent answers, error
// or not, is scrubbed of the token, the client key and secrets (the app's other secure settings).
func NewClient(rawURL, token string, t TLS, secrets ...string) (*Client, error) {
	u, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	if token == "" {
		return nil, errors.New("the agent has no token (set it in the app's settings)")
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if t.CACert != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(t.CACert)) {
			return nil, errors.New("the agents' CA certificate is not PEM")
		}
		tc.RootCAs = pool
	}
	if t.ClientCert != "" || t.ClientKey != "" {
		pair, err := tls.X509KeyPair([]byte(t.ClientCert), []byte(t.ClientKey))
		if err != nil {
			return nil, errors.New("the app's client certificate and key for agents do not make a pair")
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	tr.TLSClientConfig = tc
	policy := egress.Policy{}
	policy.ConfigureTransport(tr)
	hc := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	scrub := redact.NewScrubber(append([]string{token, t.ClientKey}, secrets...)...)
	return &Client{base: u, token: token, hc: hc, where: redact.URL(rawURL), scrub: scrub}, nil
}

// ProfilerConfig reads metric_enable and enable.
func (c *Client) ProfilerConfig(ctx context.Context) (ProfilerConfig, error) {
	var v ProfilerConfig
	return v, c.do(ctx, http.MethodGet, PathProfilerConfig, "", nil, &v)
}

// SetMetricEnable switches metric_enable for user (a Grafana login, for the agent's audit log).
func (c *Client) SetMetricEnable(ctx context.Context, user string, on bool) (ProfilerConfig, error) {
	var v ProfilerConfig
	value := bit(on)
	return v, c.do(ctx, http.MethodPut, PathMetricEnable, user, SetValue{Value: &value}, &v)
}

// Symbols reads the checked symbols file.
func (c *Client) Symbols(ctx context.Context) (Symbols, error) {
	var v Symbols
	return v, c.do(ctx, http.MethodGet, PathSymbols, "", nil, &v)
}

// Profile reads the torch profiler's state.
func (c *Client) Profile(ctx context.Context) (ProfileStatus, error) {
	var v ProfileStatus
	return v, c.do(ctx, http.MethodGet, PathProfile, "", nil, &v)
}

// StartProfile starts a torch profile of seconds for user.
func (c *Client) StartProfile(ctx context.Context, user string, seconds int) (ProfileStatus, error) {
	var v ProfileStatus
	ctx, cancel := context.WithTimeout(ctx, ProfileClientTimeout)
	defer cancel()
	return v, c.doWithin(ctx, http.MethodPost, PathProfile, user, ProfileStart{Seconds: seconds}, &v)
}

// StopProfile stops the running torch profile for user.
func (c *Client) StopProfile(ctx context.Context, user string) (ProfileStatus, error) {
	var v ProfileStatus
	ctx, cancel := context.WithTimeout(ctx, ProfileClientTimeout)
	defer cancel()
	return v, c.doWithin(ctx, http.MethodPost, PathProfileStop, user, map[string]any{}, &v)
}

// Traces lists the finished trace files.
func (c *Client) Traces(ctx context.Context) (TraceList, error) {
	var v TraceList
	return v, c.do(ctx, http.MethodGet, PathTraces, "", nil, &v)
}

// Trace downloads one trace for user, whole, within TraceDownloadTimeout: a body shorter than its Content-Length
// or cut off is ErrTraceCut, and one over MaxTraceBytes an Error, never a shorter trace.
func (c *Client) Trace(ctx context.Context, user, name string) ([]byte, error) {
	if !ValidTraceName(name) {
		return nil, &Error{Status: http.StatusBadRequest, Message: "not a trace name"}
	}
	ctx, cancel := context.WithTimeout(ctx, TraceDownloadTimeout)
	defer cancel()
	res, err := c.send(ctx, http.MethodGet, PathTraces+"/"+name, user, nil)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, c.answerError(res)
	}
	tooBig := &Error{Status: http.StatusRequestEntityTooLarge, Message: fmt.Sprintf("the trace is over the %d-byte download limit", MaxTraceBytes)}
	if res.ContentLength > MaxTraceBytes {
		return nil, tooBig
	}
	// One buffer of the announced size (at most MaxTraceBytes), not a doubling slice: a download is held whole once.
	buf := bytes.NewBuffer(make([]byte, 0, max(res.ContentLength, 0)+bytes.MinRead))
	_, err = buf.ReadFrom(io.LimitReader(res.Body, MaxTraceBytes+1))
	b := buf.Bytes()
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: %s after %d bytes: %s", ErrTraceCut, name, len(b), c.scrub.Text(unwrapURL(err).Error()))
	case int64(len(b)) > MaxTraceBytes:
		return nil, tooBig
	case res.ContentLength >= 0 && int64(len(b)) != res.ContentLength:
		return nil, fmt.Errorf("%w: %s: %d of the %d bytes announced", ErrTraceCut, name, len(b), res.ContentLength)
	}
	return b, nil
}

// do sends one JSON call within ClientTimeout and decodes the answer into out.
func (c *Client) do(ctx context.Context, method, path, user string, in, out any) error {
	ctx, cancel := context.WithTimeout(ctx, ClientTimeout)
	defer cancel()
	return c.doWithin(ctx, method, path, user, in, out)
}

// doWithin sends one JSON call within ctx's deadline and decodes the answer into out, every string of it scrubbed.
func (c *Client) doWithin(ctx context.Context, method, path, user string, in, out any) error {
	res, err := c.send(ctx, method, path, user, in)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode/100 != 2 {
		return c.answerError(res)
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, 4<<20)).Decode(out); err != nil {
		return fmt.Errorf("the agent at %s answered something other than its API: %s", c.where, c.scrub.Text(err.Error()))
	}
	c.scrub.Value(out)
	return nil
}

func (c *Client) send(ctx context.Context, method, path, user string, in any) (*http.Response, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(b)
	}
	// path is one of the API's constant routes, or the trace route with a name ValidTraceName accepted.
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.base.String(), "/")+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if user != "" {
		req.Header.Set(HeaderUser, user)
	}
	res, err := c.hc.Do(req)
	if err != nil {
		// url.Error quotes the URL, which holds no secret (NewClient refuses credentials and queries); the cause
		// (refused, timed out, certificate) is what the operator needs.
		return nil, fmt.Errorf("%w: %s: %s", ErrUnreachable, c.where, c.scrub.Text(unwrapURL(err).Error()))
	}
	return res, nil
}

// maxErrorMessage bounds an agent's error message as the app shows it.
const maxErrorMessage = 1024

// answerError reads an agent's {"error": "..."}, scrubbed: whatever answers at the agent's URL may echo the token.
func (c *Client) answerError(res *http.Response) error {
	var b ErrorBody
	raw, _ := io.ReadAll(io.LimitReader(res.Body, 8<<10))
	if json.Unmarshal(raw, &b) != nil || b.Error == "" {
		b.Error = strings.TrimSpace(http.StatusText(res.StatusCode))
	}
	msg := c.scrub.Text(b.Error)
	if len(msg) > maxErrorMessage {
		msg = strings.ToValidUTF8(msg[:maxErrorMessage], "") + "…"
	}
	return &Error{Status: res.StatusCode, Message: msg}
}
