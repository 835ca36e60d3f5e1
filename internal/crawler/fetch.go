package crawler

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/safehttp"
)

// Well-known card paths. agent-card.json is the v0.3+/v1.0 name; agent.json
// is what v0.2.x agents serve (see A2A-NOTES "Card versions").
const (
	WellKnownCardPath   = "/.well-known/agent-card.json"
	LegacyCardPath      = "/.well-known/agent.json"
	MaxInputURLLength   = 2048
	DefaultMaxCardBytes = 1 << 20
)

// Sentinels wrapped by *FetchError.Err.
var (
	ErrInvalidURL = errors.New("invalid card URL")
	ErrNotJSON    = errors.New("response is not a JSON object")
	ErrHTTPStatus = errors.New("unexpected HTTP status")
)

// Failure classes of FetchError.Class. They are stored and shown to users,
// so the strings are stable.
const (
	ClassDNS            = safehttp.CauseDNS
	ClassConnect        = safehttp.CauseConnect
	ClassTLS            = safehttp.CauseTLS
	ClassTimeout        = safehttp.CauseTimeout
	ClassCanceled       = safehttp.CauseCanceled
	ClassHTTP401        = "http_401"
	ClassHTTP403        = "http_403"
	ClassHTTP404        = "http_404"
	ClassHTTP410        = "http_410"
	ClassHTTP429        = "http_429"
	ClassHTTP4xx        = "http_4xx"
	ClassHTTP5xx        = "http_5xx"
	ClassTooLarge       = safehttp.CauseTooLarge
	ClassNotJSON        = "not_json"
	ClassBlockedAddress = safehttp.CauseBlockedAddress
	// ClassReservedName: the card URL's host is in a domain reserved for
	// examples, testing or as invalid (RFC 2606, RFC 6761), such as the
	// shipped example cards name; it is never looked up.
	ClassReservedName = safehttp.CauseReservedName
	// ClassSelf: the card URL leads to the registry itself (its listen
	// address or public URL, by name or by what the name resolves to),
	// which no --allow-networks opens.
	ClassSelf       = safehttp.CauseSelf
	ClassRedirect   = safehttp.CauseRedirect
	ClassInvalidURL = safehttp.CauseInvalidURL
)

// FetchError is a failed card fetch with the class of the failure.
type FetchError struct {
	Class string
	// URL is the URL that failed (for an origin whose two well-known paths
	// both failed, the one whose failure is reported).
	URL string
	// Status is the HTTP status when a response arrived, else 0.
	Status int
	Err    error
}

func (e *FetchError) Error() string {
	if e.URL == "" {
		return fmt.Sprintf("fetching card: %s: %v", e.Class, e.Err)
	}
	return fmt.Sprintf("fetching card %s: %s: %v", e.URL, e.Class, e.Err)
}

func (e *FetchError) Unwrap() error { return e.Err }

// Conditional carries the validators of the stored copy (RFC 9110 §13.1).
type Conditional struct {
	ETag         string
	LastModified string
}

// Result describes one fetch. On success Body holds the card bytes
// verbatim; on 304 NotModified is set and Body is nil.
type Result struct {
	// RequestedURL is the input as given to Fetch.
	RequestedURL string
	// URL is the candidate that answered: the card's identity, stable
	// even when the server redirects elsewhere.
	URL string
	// FinalURL is where the redirects, if any, ended.
	FinalURL string
	// LegacyPath is true when the card came from /.well-known/agent.json
	// after agent-card.json answered 404.
	LegacyPath  bool
	Status      int
	NotModified bool
	Body        []byte

	// Response headers the refresh policy needs. On 304 without an ETag
	// header, ETag and LastModified keep the validators that were sent.
	ETag         string
	LastModified string
	CacheControl string
	Expires      string
	RetryAfter   string
	ContentType  string

	Latency    time.Duration
	ReceivedAt time.Time
}

// Fetcher fetches agent cards through the safe client.
type Fetcher struct {
	client   *safehttp.Client
	maxBytes int64
}

// NewFetcher returns a Fetcher that reads at most maxBytes of a card
// (DefaultMaxCardBytes when maxBytes <= 0). The client's own body cap
// applies as well.
func NewFetcher(c *safehttp.Client, maxBytes int64) *Fetcher {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxCardBytes
	}
	return &Fetcher{client: c, maxBytes: maxBytes}
}

// ResolveCardURLs turns a card URL or a bare origin into the URLs to try,
// in order, in canonical form (card.CanonicalCardURL). An origin
// ("https://host" or "https://host/") yields the well-known path and then
// the legacy one; any other URL is its canonical self. Errors wrap
// ErrInvalidURL.
func ResolveCardURLs(input string) ([]string, error) {
	input = strings.TrimSpace(input)
	if input == "" {
		return nil, fmt.Errorf("%w: empty", ErrInvalidURL)
	}
	if len(input) > MaxInputURLLength {
		return nil, fmt.Errorf("%w: longer than %d bytes", ErrInvalidURL, MaxInputURLLength)
	}
	u, err := url.Parse(input)
	if err != nil {
		// url.Parse's message quotes the input; ours names the problem.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("%w: %v", ErrInvalidURL, err)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("%w: scheme must be http or https, e.g. https://agent.example.com", ErrInvalidURL)
	case u.Opaque != "":
		return nil, fmt.Errorf("%w: expected scheme://host/path", ErrInvalidURL)
	case u.User != nil:
		// Credentials in a card URL would be stored, shown and sent on
		// every refresh.
		return nil, fmt.Errorf("%w: user info (user:password@) is not allowed", ErrInvalidURL)
	case u.Hostname() == "":
		return nil, fmt.Errorf("%w: missing host", ErrInvalidURL)
	}
	// One identity per card URL (card.CanonicalCardURL): the spellings of
	// one URL (case, default port, IDN, dot segments, escapes…) name one
	// agent, and are fetched as that one URL.
	canon, err := card.CanonicalCardURL(input)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidURL, err)
	}
	if origin, err := card.CanonicalOrigin(canon); err == nil && canon == origin+"/" {
		return []string{origin + WellKnownCardPath, origin + LegacyCardPath}, nil
	}
	return []string{canon}, nil
}

// Fetch fetches the card named by input (see ResolveCardURLs), sending the
// validators in cond when given. For an origin it tries the legacy path
// only when the well-known path answers 404.
//
// Errors are *FetchError. When a response arrived but is not a usable card
// (an error status, HTML, too large…), Fetch returns the Result describing
// that response (Status, Retry-After, Latency…) along with the error, so
// the crawler can honour Retry-After and record health; otherwise the
// Result is nil.
func (f *Fetcher) Fetch(ctx context.Context, input string, cond Conditional) (*Result, error) {
	urls, err := ResolveCardURLs(input)
	if err != nil {
		return nil, &FetchError{Class: ClassInvalidURL, URL: strings.TrimSpace(input), Err: err}
	}
	var first *Result
	var firstErr *FetchError
	for i, u := range urls {
		res, ferr := f.fetchOne(ctx, u, cond, nil)
		if res != nil {
			res.RequestedURL = input
			res.LegacyPath = i > 0
		}
		if ferr == nil {
			return res, nil
		}
		if i == 0 && len(urls) > 1 && ferr.Status == http.StatusNotFound {
			first, firstErr = res, ferr
			continue
		}
		// Both paths missing: report the well-known one, the path agents
		// are told to serve.
		if i > 0 && ferr.Status == http.StatusNotFound {
			return first, firstErr
		}
		return res, ferr
	}
	return first, firstErr
}

// FetchURL fetches the JSON object at u itself, in its canonical form,
// with no well-known paths tried (a manifest, not a card: see
// internal/sources); errors and results as Fetch's.
func (f *Fetcher) FetchURL(ctx context.Context, u string, cond Conditional) (*Result, error) {
	return f.FetchURLWith(ctx, u, cond, nil)
}

// FetchURLWith is FetchURL sending header as well (a peer registry's
// Authorization: see internal/sources). The client drops Authorization on
// a redirect to another host (net/http), so a token reaches only the URL
// it was given for.
func (f *Fetcher) FetchURLWith(ctx context.Context, u string, cond Conditional, header http.Header) (*Result, error) {
	canon, err := card.CanonicalCardURL(strings.TrimSpace(u))
	if err != nil {
		return nil, &FetchError{Class: ClassInvalidURL, URL: strings.TrimSpace(u), Err: fmt.Errorf("%w: %w", ErrInvalidURL, err)}
	}
	res, ferr := f.fetchOne(ctx, canon, cond, header)
	if res != nil {
		res.RequestedURL = u
	}
	if ferr != nil {
		return res, ferr
	}
	return res, nil
}

func (f *Fetcher) fetchOne(ctx context.Context, u string, cond Conditional, header http.Header) (*Result, *FetchError) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, &FetchError{Class: ClassInvalidURL, URL: u, Err: fmt.Errorf("%w: %v", ErrInvalidURL, err)}
	}
	for k, v := range header {
		req.Header[k] = v
	}
	// Without A2A-Version a v1.0 server with its v0.3 compatibility layer
	// on serves the v0.3-shaped card; we want the newest shape it has.
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Accept", "application/json")
	if cond.ETag != "" {
		req.Header.Set("If-None-Match", cond.ETag)
	}
	if cond.LastModified != "" {
		req.Header.Set("If-Modified-Since", cond.LastModified)
	}

	start := time.Now()
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, classify(u, 0, err)
	}
	defer resp.Body.Close()

	res := &Result{
		URL:          u,
		FinalURL:     resp.Request.URL.String(),
		Status:       resp.StatusCode,
		ETag:         resp.Header.Get("ETag"),
		LastModified: resp.Header.Get("Last-Modified"),
		CacheControl: resp.Header.Get("Cache-Control"),
		Expires:      resp.Header.Get("Expires"),
		RetryAfter:   resp.Header.Get("Retry-After"),
		ContentType:  resp.Header.Get("Content-Type"),
	}
	finish := func() {
		res.ReceivedAt = time.Now()
		res.Latency = res.ReceivedAt.Sub(start)
	}

	conditional := cond.ETag != "" || cond.LastModified != ""
	switch code := resp.StatusCode; {
	case code == http.StatusNotModified && conditional:
		finish()
		res.NotModified = true
		if res.ETag == "" {
			res.ETag = cond.ETag
		}
		if res.LastModified == "" {
			res.LastModified = cond.LastModified
		}
		return res, nil
	case code >= 200 && code < 300:
	default:
		// Read a little so the connection can be reused; the body of an
		// error page is of no use to us.
		io.CopyN(io.Discard, resp.Body, 4<<10)
		finish()
		return res, statusError(u, resp)
	}

	if mt := mediaType(res.ContentType); isClearlyNotJSON(mt) {
		finish()
		return res, &FetchError{Class: ClassNotJSON, URL: u, Status: resp.StatusCode,
			Err: fmt.Errorf("%w: Content-Type %s", ErrNotJSON, mt)}
	}
	body, err := safehttp.ReadBody(resp, f.maxBytes)
	finish()
	if err != nil {
		return res, classify(u, resp.StatusCode, err)
	}
	if err := looksLikeJSONObject(body); err != nil {
		return res, &FetchError{Class: ClassNotJSON, URL: u, Status: resp.StatusCode, Err: err}
	}
	res.Body = body
	return res, nil
}

func statusError(u string, resp *http.Response) *FetchError {
	class := ClassHTTP4xx
	switch code := resp.StatusCode; {
	case code == http.StatusUnauthorized:
		class = ClassHTTP401
	case code == http.StatusForbidden:
		class = ClassHTTP403
	case code == http.StatusNotFound:
		class = ClassHTTP404
	case code == http.StatusGone:
		class = ClassHTTP410
	case code == http.StatusTooManyRequests:
		class = ClassHTTP429
	case code >= 500:
		class = ClassHTTP5xx
	case code < 400:
		// A 3xx the client did not follow: no Location, 300 Multiple
		// Choices, or a 304 we did not ask for.
		class = ClassRedirect
	}
	return &FetchError{Class: class, URL: u, Status: resp.StatusCode,
		Err: fmt.Errorf("%w: server answered %s", ErrHTTPStatus, resp.Status)}
}

func mediaType(contentType string) string {
	if contentType == "" {
		return ""
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return strings.ToLower(strings.TrimSpace(contentType))
	}
	return mt
}

// isClearlyNotJSON rejects media types no card is served as. Cards are
// commonly served as text/plain or application/octet-stream by static
// hosts, so only types that are certainly something else are refused; the
// body check catches the rest.
func isClearlyNotJSON(mt string) bool {
	switch mt {
	case "text/html", "application/xhtml+xml", "text/xml", "application/xml", "text/css", "text/javascript", "application/javascript":
		return true
	}
	for _, p := range []string{"image/", "audio/", "video/", "font/", "multipart/"} {
		if strings.HasPrefix(mt, p) {
			return true
		}
	}
	return false
}

// looksLikeJSONObject is a cheap pre-check before the parser runs: a card
// is a JSON object, so its first non-whitespace byte (RFC 8259 §2) is '{'.
func looksLikeJSONObject(body []byte) error {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	switch {
	case len(trimmed) == 0:
		return fmt.Errorf("%w: empty body", ErrNotJSON)
	case bytes.HasPrefix(trimmed, []byte("\xef\xbb\xbf")):
		return fmt.Errorf("%w: body starts with a UTF-8 byte order mark (RFC 8259 §8.1 forbids it)", ErrNotJSON)
	case trimmed[0] == '<':
		return fmt.Errorf("%w: body looks like HTML or XML", ErrNotJSON)
	case trimmed[0] != '{':
		return fmt.Errorf("%w: body starts with %q", ErrNotJSON, trimmed[0])
	}
	return nil
}

// classify maps a transport error to a failure class (safehttp.Cause,
// whose strings the Class constants share).
func classify(u string, status int, err error) *FetchError {
	return &FetchError{URL: u, Status: status, Err: err, Class: safehttp.Cause(err)}
}
