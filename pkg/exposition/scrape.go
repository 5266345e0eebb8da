package exposition

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/common/expfmt"

	"github.com/inferscope/inferscope-vllm/pkg/redact"
)

// Defaults applied by Fetch when ScrapeOptions leaves a limit at zero.
const (
	DefaultMaxBodyBytes = 8 << 20
	DefaultTimeout      = 10 * time.Second
)

// ErrBodyTooLarge is wrapped by Fetch errors for bodies over the size limit.
var ErrBodyTooLarge = errors.New("body too large")

// ScrapeOptions tunes Fetch.
type ScrapeOptions struct {
	// MaxBodyBytes caps the decompressed body; 0 means DefaultMaxBodyBytes and
	// a negative value means no cap.
	MaxBodyBytes int64
	// Timeout bounds the request and body transfer; 0 means
	// DefaultTimeout and a negative value leaves only ctx's deadline.
	Timeout time.Duration
	// PreferOpenMetrics asks for OpenMetrics before the text format. Text is
	// the default because family names then match the usual dashboards
	// (OpenMetrics names counter families without _total).
	PreferOpenMetrics bool
	// Parse is passed to Parse. Its Format is used only when the response's
	// Content-Type does not name a text format.
	Parse ParseOptions
	// Scrub removes the caller's configured secrets from error text, which
	// quotes the server's answer (a proxy may echo the request's headers).
	Scrub *redact.Scrubber
}

// Result is a successful scrape.
type Result struct {
	Scrape *Scrape
	// Start is when the request was sent.
	Start time.Time
	// Duration is the whole scrape: request, body transfer and parse.
	Duration time.Duration
	// ParseDuration is the part of Duration spent in Parse.
	ParseDuration time.Duration
	// BodyBytes is the decompressed body size, WireBytes what was received.
	BodyBytes, WireBytes int64
	// ContentType is the response's Content-Type header.
	ContentType string
	StatusCode  int
}

// FetchError is returned by Fetch. Its URL and message never contain the
// credentials or query values of the scraped URL, nor a secret of
// ScrapeOptions.Scrub.
type FetchError struct {
	// URL is the scraped URL as redact.URL shows it.
	URL string
	// StatusCode is set when the server answered with a non-2xx status.
	StatusCode int
	Err        error

	scrub *redact.Scrubber
}

// Error implements error.
func (e *FetchError) Error() string {
	return "scrape " + e.URL + ": " + e.scrub.Text(e.Err.Error())
}

// Unwrap returns the underlying error.
func (e *FetchError) Unwrap() error { return e.Err }

type bodyLimitError struct{ limit int64 }

func (e bodyLimitError) Error() string {
	return "body exceeds " + formatBytes(e.limit) + " limit"
}

func (e bodyLimitError) Is(target error) bool { return target == ErrBodyTooLarge }

func formatBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	default:
		return strconv.FormatInt(n, 10) + " bytes"
	}
}

var (
	acceptText = string(expfmt.NewFormat(expfmt.TypeTextPlain)) + ";q=0.9," +
		string(expfmt.FmtOpenMetrics_1_0_0) + ";q=0.5," +
		string(expfmt.FmtOpenMetrics_0_0_1) + ";q=0.4,*/*;q=0.1"
	acceptOpenMetrics = string(expfmt.FmtOpenMetrics_1_0_0) + ";q=0.9," +
		string(expfmt.FmtOpenMetrics_0_0_1) + ";q=0.8," +
		string(expfmt.NewFormat(expfmt.TypeTextPlain)) + ";q=0.5,*/*;q=0.1"
)

// Bodies are copied out by Parse, so read buffers and gzip readers can be
// reused across scrapes.
var (
	bufPool  = sync.Pool{New: func() any { return new(bytes.Buffer) }}
	gzipPool sync.Pool
)

// maxPooledBuffer keeps one huge body from pinning its buffer forever.
const maxPooledBuffer = 16 << 20

// Fetch scrapes one /metrics endpoint with client (http.DefaultClient if nil)
// and parses the body. It negotiates text 0.0.4 or OpenMetrics 1.0, accepts
// gzip, enforces the body cap and timeout, and fails on non-2xx statuses.
// Errors are *FetchError.
func Fetch(ctx context.Context, client *http.Client, rawURL string, opts ScrapeOptions) (*Result, error) {
	start := time.Now()
	if client == nil {
		client = http.DefaultClient
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Parse errors quote the whole URL, credentials included.
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return nil, &FetchError{URL: "<invalid URL>", Err: fmt.Errorf("invalid URL: %w", err)}
	}
	scrub := opts.Scrub.WithURL(rawURL) // an unsaved URL (the config editor's test) has secrets of its own
	fe := &FetchError{URL: redact.URL(rawURL), scrub: scrub}
	fail := func(err error) (*Result, error) {
		fe.Err = err
		return nil, fe
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fail(fmt.Errorf("unsupported URL scheme %q", u.Scheme))
	}
	timeout := cmp.Or(opts.Timeout, DefaultTimeout)
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	limit := cmp.Or(opts.MaxBodyBytes, DefaultMaxBodyBytes)

	req, err := scrapeRequest(ctx, rawURL, opts.PreferOpenMetrics, timeout)
	if err != nil {
		return fail(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return fail(contextError(ctx, timeout, unwrapURLError(err)))
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		fe.StatusCode = resp.StatusCode
	}
	wire := &countingReader{r: resp.Body}
	body, release, err := decodedBody(ctx, resp, wire, limit, timeout)
	if err != nil {
		return fail(err)
	}
	defer release()
	if fe.StatusCode != 0 {
		// Scrub before cutting: a cut through a secret would leave a part that no longer matches it.
		excerpt, _ := io.ReadAll(io.LimitReader(body, 4096))
		return fail(statusError(resp, []byte(scrub.Text(string(excerpt)))))
	}

	buf := bufPool.Get().(*bytes.Buffer)
	buf.Reset()
	defer func() {
		if buf.Cap() <= maxPooledBuffer {
			bufPool.Put(buf)
		}
	}()
	if err := readBody(ctx, buf, body, limit, timeout); err != nil {
		return fail(err)
	}

	ct := resp.Header.Get("Content-Type")
	popts := opts.Parse
	format, err := formatOf(ct)
	if err != nil {
		return fail(err)
	}
	if format != FormatAuto {
		popts.Format = format
	}
	parseStart := time.Now()
	s, err := Parse(buf.Bytes(), popts)
	if err != nil {
		return fail(err)
	}
	end := time.Now()
	return &Result{
		Scrape:        s,
		Start:         start,
		Duration:      end.Sub(start),
		ParseDuration: end.Sub(parseStart),
		BodyBytes:     int64(buf.Len()),
		WireBytes:     wire.n,
		ContentType:   ct,
		StatusCode:    resp.StatusCode,
	}, nil
}

// scrapeRequest is the GET of one scrape, asking for the text format (or OpenMetrics) and gzip, and telling the
// server the timeout as Prometheus does.
func scrapeRequest(ctx context.Context, rawURL string, openMetrics bool, timeout time.Duration) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, errors.New("cannot build request")
	}
	accept := acceptText
	if openMetrics {
		accept = acceptOpenMetrics
	}
	req.Header.Set("Accept", accept)
	// Setting this ourselves turns off the transport's transparent gzip, so the size cap applies to decompressed
	// bytes.
	req.Header.Set("Accept-Encoding", "gzip")
	if timeout > 0 {
		req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", strconv.FormatFloat(timeout.Seconds(), 'f', -1, 64))
	}
	return req, nil
}

// decodedBody is the answer's body after its Content-Encoding; an identity body announced larger than limit is
// refused before it is read. release returns a gzip reader to its pool.
func decodedBody(ctx context.Context, resp *http.Response, wire io.Reader, limit int64, timeout time.Duration) (body io.Reader, release func(), err error) {
	switch enc := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
		if limit > 0 && resp.ContentLength > limit {
			return nil, nil, bodyLimitError{limit}
		}
		return wire, func() {}, nil
	case "gzip", "x-gzip":
		gz, err := getGzipReader(wire)
		if err != nil {
			if resp.StatusCode/100 != 2 {
				return nil, nil, statusError(resp, nil)
			}
			return nil, nil, contextError(ctx, timeout, fmt.Errorf("invalid gzip body: %w", err))
		}
		return gz, func() { gzipPool.Put(gz) }, nil
	default:
		return nil, nil, fmt.Errorf("unsupported Content-Encoding %q", enc)
	}
}

// readBody reads the body into buf, failing once it passes limit (0: no limit).
func readBody(ctx context.Context, buf *bytes.Buffer, body io.Reader, limit int64, timeout time.Duration) error {
	if limit > 0 {
		body = io.LimitReader(body, limit+1)
	}
	if _, err := buf.ReadFrom(body); err != nil {
		return contextError(ctx, timeout, fmt.Errorf("reading body: %w", err))
	}
	if limit > 0 && int64(buf.Len()) > limit {
		return bodyLimitError{limit}
	}
	return nil
}

// formatOf maps a Content-Type to a Format; FormatAuto means "not a text
// format we know, let Parse detect".
func formatOf(ct string) (Format, error) {
	if ct == "" {
		return FormatAuto, nil
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return FormatAuto, nil
	}
	switch mt {
	case expfmt.OpenMetricsType:
		switch v := params["version"]; v {
		case "", expfmt.OpenMetricsVersion_0_0_1, expfmt.OpenMetricsVersion_1_0_0:
			return FormatOpenMetrics, nil
		default:
			return 0, fmt.Errorf("unsupported OpenMetrics version %q", v)
		}
	case "text/plain":
		return FormatText, nil
	case expfmt.ProtoType:
		return 0, errors.New("unsupported protobuf response (not requested)")
	}
	return FormatAuto, nil
}

func statusError(resp *http.Response, excerpt []byte) error {
	msg := "server returned HTTP status " + resp.Status
	if s := strings.TrimSpace(string(excerpt)); s != "" {
		if len(s) > 200 {
			cut := 200
			for cut > 0 && !utf8.RuneStart(s[cut]) {
				cut--
			}
			s = s[:cut] + "..."
		}
		msg += ": " + strconv.Quote(s)
	}
	return errors.New(msg)
}

// contextError explains a failure caused by the scrape's own deadline or
// the caller's cancellation, keeping the context error wrapped.
func contextError(ctx context.Context, timeout time.Duration, err error) error {
	cerr := ctx.Err()
	switch {
	case cerr == nil:
		return err
	case errors.Is(cerr, context.DeadlineExceeded) && timeout > 0:
		return fmt.Errorf("timed out after %s: %w", timeout, cerr)
	default:
		return fmt.Errorf("aborted: %w", cerr)
	}
}

// unwrapURLError drops *url.Error, whose message repeats the request URL.
func unwrapURLError(err error) error {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return uerr.Err
	}
	return err
}

func getGzipReader(r io.Reader) (*gzip.Reader, error) {
	if gz, ok := gzipPool.Get().(*gzip.Reader); ok {
		if err := gz.Reset(r); err != nil {
			gzipPool.Put(gz)
			return nil, err
		}
		return gz, nil
	}
	return gzip.NewReader(r)
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
