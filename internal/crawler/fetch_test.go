package crawler

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/safehttp"
	"github.com/a2aregistry/registry/internal/safehttp/safehttptest"
)

const testCard = `{"name":"Echo","description":"echoes","version":"1.0.0",
"supportedInterfaces":[{"url":"https://agent.example.com/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
"skills":[{"id":"echo","name":"Echo","description":"echoes","tags":["test"]}]}`

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

func newTestFetcher(maxBytes int64) *Fetcher {
	return NewFetcher(safehttp.New(safehttp.Config{
		AllowNetworks: loopback,
		Timeout:       2 * time.Second,
	}), maxBytes)
}

func TestResolveCardURLs(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"https://agent.example.com", []string{"https://agent.example.com/.well-known/agent-card.json", "https://agent.example.com/.well-known/agent.json"}},
		{"https://agent.example.com/", []string{"https://agent.example.com/.well-known/agent-card.json", "https://agent.example.com/.well-known/agent.json"}},
		{"  HTTPS://Agent.Example.COM:8443/  ", []string{"https://agent.example.com:8443/.well-known/agent-card.json", "https://agent.example.com:8443/.well-known/agent.json"}},
		{"http://10.0.0.5:8080", []string{"http://10.0.0.5:8080/.well-known/agent-card.json", "http://10.0.0.5:8080/.well-known/agent.json"}},
		{"https://agent.example.com/#frag", []string{"https://agent.example.com/.well-known/agent-card.json", "https://agent.example.com/.well-known/agent.json"}},
		{"https://agent.example.com/cards/echo.json", []string{"https://agent.example.com/cards/echo.json"}},
		{"https://agent.example.com/cards/echo.json#x", []string{"https://agent.example.com/cards/echo.json"}},
		{"https://agent.example.com/.well-known/agent.json", []string{"https://agent.example.com/.well-known/agent.json"}},
		{"https://agent.example.com/?tenant=a", []string{"https://agent.example.com/?tenant=a"}},
		{"https://agent.example.com:443/a2a/card.json", []string{"https://agent.example.com/a2a/card.json"}},
		{"http://agent.example.com:80", []string{"http://agent.example.com/.well-known/agent-card.json", "http://agent.example.com/.well-known/agent.json"}},
		{"http://agent.example.com:443/", []string{"http://agent.example.com:443/.well-known/agent-card.json", "http://agent.example.com:443/.well-known/agent.json"}},
		{"https://[::1]:443", []string{"https://[::1]/.well-known/agent-card.json", "https://[::1]/.well-known/agent.json"}},
		{"https://[::1]:9000", []string{"https://[::1]:9000/.well-known/agent-card.json", "https://[::1]:9000/.well-known/agent.json"}},
		// One identity per URL: every spelling below is one agent's card URL.
		{"https://hub.example/agents/a/card.json?", []string{"https://hub.example/agents/a/card.json"}},
		{"https://hub.example//agents/a/card.json", []string{"https://hub.example/agents/a/card.json"}},
		{"https://hub.example/agents/a/%63ard.json", []string{"https://hub.example/agents/a/card.json"}},
		{"https://hub.example/agents/./a/card.json", []string{"https://hub.example/agents/a/card.json"}},
		{"https://hub.example/agents/x/../a/card.json", []string{"https://hub.example/agents/a/card.json"}},
		{"https://hub.example./agents/a/card.json", []string{"https://hub.example/agents/a/card.json"}},
		{"https://bücher.example/card.json", []string{"https://xn--bcher-kva.example/card.json"}},
		{"https://b%C3%BCcher.example/card.json", []string{"https://xn--bcher-kva.example/card.json"}},
		{"http://[::ffff:10.0.0.5]:8080/card.json", []string{"http://10.0.0.5:8080/card.json"}},
		{"https://agent.example.com/./", []string{"https://agent.example.com/.well-known/agent-card.json", "https://agent.example.com/.well-known/agent.json"}},
		{"https://agent.example.com/?", []string{"https://agent.example.com/.well-known/agent-card.json", "https://agent.example.com/.well-known/agent.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ResolveCardURLs(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}

	bad := []string{
		"",
		"   ",
		"agent.example.com",
		"ftp://agent.example.com/card.json",
		"file:///etc/passwd",
		"javascript:alert(1)",
		"mailto:x@example.com",
		"https://user:pass@agent.example.com/",
		"https://user@agent.example.com/",
		"https:///card.json",
		"https://:443/",
		"https://agent.example.com:99999/",
		"https://agent.example.com/\x00",
		"https://agent example.com/",
		"https://agent.example.com/" + strings.Repeat("a", MaxInputURLLength),
	}
	for _, in := range bad {
		name := in
		if len(name) > 60 {
			name = name[:60]
		}
		t.Run("bad/"+name, func(t *testing.T) {
			got, err := ResolveCardURLs(in)
			if !errors.Is(err, ErrInvalidURL) {
				t.Fatalf("ResolveCardURLs(%q) = %q, %v; want ErrInvalidURL", in, got, err)
			}
		})
	}
}

func TestFetch(t *testing.T) {
	card := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(testCard))
	}
	type check func(t *testing.T, base string, res *Result)
	tests := []struct {
		name string
		// handler serves the fake agent.
		handler http.HandlerFunc
		// path is appended to the server URL to make the input.
		path       string
		cond       Conditional
		maxBytes   int64
		wantClass  string // "" for success
		wantStatus int
		// wantURL is the path of Result.URL / FetchError.URL.
		wantURL string
		check   check
	}{
		{
			name: "well-known card with protocol headers",
			handler: func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != WellKnownCardPath || r.Header.Get("A2A-Version") != "1.0" ||
					r.Header.Get("Accept") != "application/json" || r.Header.Get("If-None-Match") != "" {
					http.Error(w, "bad request", http.StatusBadRequest)
					return
				}
				w.Header().Set("ETag", `"v1"`)
				w.Header().Set("Last-Modified", "Mon, 02 Jan 2006 15:04:05 GMT")
				w.Header().Set("Cache-Control", "max-age=300")
				w.Header().Set("Expires", "Mon, 02 Jan 2006 16:04:05 GMT")
				card(w)
			},
			wantStatus: 200, wantURL: WellKnownCardPath,
			check: func(t *testing.T, base string, res *Result) {
				if string(res.Body) != testCard || res.LegacyPath || res.NotModified ||
					res.ETag != `"v1"` || res.CacheControl != "max-age=300" ||
					res.LastModified != "Mon, 02 Jan 2006 15:04:05 GMT" || res.Expires == "" ||
					res.ContentType != "application/json" || res.FinalURL != res.URL ||
					res.RequestedURL != base || res.ReceivedAt.IsZero() || res.Latency <= 0 {
					t.Errorf("result %+v", res)
				}
			},
		},
		{
			name: "404 then legacy path",
			handler: func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == LegacyCardPath {
					card(w)
					return
				}
				http.NotFound(w, r)
			},
			wantStatus: 200, wantURL: LegacyCardPath,
			check: func(t *testing.T, _ string, res *Result) {
				if !res.LegacyPath || string(res.Body) != testCard {
					t.Errorf("LegacyPath %v body %q", res.LegacyPath, res.Body)
				}
			},
		},
		{
			name:      "404 on both paths reports the well-known one",
			handler:   http.NotFound,
			wantClass: ClassHTTP404, wantStatus: 404, wantURL: WellKnownCardPath,
		},
		{
			name: "404 then legacy 500 reports the 500",
			handler: func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == LegacyCardPath {
					http.Error(w, "boom", http.StatusInternalServerError)
					return
				}
				http.NotFound(w, r)
			},
			wantClass: ClassHTTP5xx, wantStatus: 500, wantURL: LegacyCardPath,
		},
		{
			name: "500 on well-known does not try legacy",
			handler: func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == LegacyCardPath {
					card(w)
					return
				}
				http.Error(w, "boom", http.StatusServiceUnavailable)
			},
			wantClass: ClassHTTP5xx, wantStatus: 503, wantURL: WellKnownCardPath,
		},
		{
			name: "explicit card URL gets no fallback",
			handler: func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == LegacyCardPath {
					card(w)
					return
				}
				http.NotFound(w, r)
			},
			path:      "/cards/echo.json",
			wantClass: ClassHTTP404, wantStatus: 404, wantURL: "/cards/echo.json",
		},
		{
			name:      "401",
			handler:   func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusUnauthorized) },
			wantClass: ClassHTTP401, wantStatus: 401, wantURL: WellKnownCardPath,
		},
		{
			name:      "403",
			handler:   func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusForbidden) },
			wantClass: ClassHTTP403, wantStatus: 403, wantURL: WellKnownCardPath,
		},
		{
			name:      "410",
			handler:   func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusGone) },
			wantClass: ClassHTTP410, wantStatus: 410, wantURL: WellKnownCardPath,
		},
		{
			name: "429 with Retry-After",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", "120")
				w.WriteHeader(http.StatusTooManyRequests)
			},
			wantClass: ClassHTTP429, wantStatus: 429, wantURL: WellKnownCardPath,
			check: func(t *testing.T, _ string, res *Result) {
				if res == nil || res.RetryAfter != "120" || res.Status != 429 || res.Body != nil {
					t.Errorf("result %+v, want Retry-After 120 and no body", res)
				}
			},
		},
		{
			name:      "other 4xx",
			handler:   func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) },
			wantClass: ClassHTTP4xx, wantStatus: 418, wantURL: WellKnownCardPath,
		},
		{
			name: "HTML content type",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				w.Write([]byte(testCard))
			},
			wantClass: ClassNotJSON, wantStatus: 200, wantURL: WellKnownCardPath,
		},
		{
			name: "HTML body behind a neutral content type",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/octet-stream")
				w.Write([]byte("\n<!doctype html><title>Login</title>"))
			},
			wantClass: ClassNotJSON, wantStatus: 200, wantURL: WellKnownCardPath,
		},
		{
			name: "JSON array",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(`[` + testCard + `]`))
			},
			wantClass: ClassNotJSON, wantStatus: 200, wantURL: WellKnownCardPath,
		},
		{
			name: "empty body",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
			},
			wantClass: ClassNotJSON, wantStatus: 200, wantURL: WellKnownCardPath,
		},
		{
			name: "byte order mark",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte("\xef\xbb\xbf" + testCard))
			},
			wantClass: ClassNotJSON, wantStatus: 200, wantURL: WellKnownCardPath,
		},
		{
			name: "card served as text/plain with leading whitespace",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/plain")
				w.Write([]byte("\r\n  " + testCard))
			},
			wantStatus: 200, wantURL: WellKnownCardPath,
		},
		{
			name: "304 for matching ETag",
			handler: func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("If-None-Match") == `"v1"` &&
					r.Header.Get("If-Modified-Since") == "Mon, 02 Jan 2006 15:04:05 GMT" {
					w.WriteHeader(http.StatusNotModified)
					return
				}
				card(w)
			},
			path:       WellKnownCardPath,
			cond:       Conditional{ETag: `"v1"`, LastModified: "Mon, 02 Jan 2006 15:04:05 GMT"},
			wantStatus: 304, wantURL: WellKnownCardPath,
			check: func(t *testing.T, _ string, res *Result) {
				if !res.NotModified || res.Body != nil || res.ETag != `"v1"` ||
					res.LastModified != "Mon, 02 Jan 2006 15:04:05 GMT" {
					t.Errorf("result %+v, want not modified keeping validators", res)
				}
			},
		},
		{
			name: "304 with a new ETag header",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("ETag", `"v2"`)
				w.WriteHeader(http.StatusNotModified)
			},
			cond:       Conditional{ETag: `"v1"`},
			wantStatus: 304, wantURL: WellKnownCardPath,
			check: func(t *testing.T, _ string, res *Result) {
				if !res.NotModified || res.ETag != `"v2"` {
					t.Errorf("result %+v", res)
				}
			},
		},
		{
			name: "response headers over the cap",
			handler: func(w http.ResponseWriter, r *http.Request) {
				for i := range 20 {
					w.Header().Set(fmt.Sprintf("X-Pad-%d", i), strings.Repeat("a", 4<<10))
				}
				card(w)
			},
			wantClass: ClassTooLarge, wantURL: WellKnownCardPath,
		},
		{
			name: "redirect to file: is the server's fault",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Location", "file:///etc/passwd")
				w.WriteHeader(http.StatusFound)
			},
			wantClass: ClassRedirect, wantURL: WellKnownCardPath,
		},
		{
			name:      "304 nobody asked for",
			handler:   func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNotModified) },
			wantClass: ClassRedirect, wantStatus: 304, wantURL: WellKnownCardPath,
		},
		{
			name: "redirect within the host keeps the candidate as identity",
			handler: func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/moved/card.json" {
					card(w)
					return
				}
				http.Redirect(w, r, "/moved/card.json", http.StatusMovedPermanently)
			},
			wantStatus: 200, wantURL: WellKnownCardPath,
			check: func(t *testing.T, _ string, res *Result) {
				if !strings.HasSuffix(res.FinalURL, "/moved/card.json") {
					t.Errorf("FinalURL %q", res.FinalURL)
				}
			},
		},
		{
			name: "redirect loop",
			handler: func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, r.URL.Path, http.StatusFound)
			},
			wantClass: ClassRedirect, wantURL: WellKnownCardPath,
		},
		{
			name: "redirect to private address",
			handler: func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "http://10.0.0.1/card.json", http.StatusFound)
			},
			wantClass: ClassBlockedAddress, wantURL: WellKnownCardPath,
		},
		{
			name: "body over the card limit",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.(http.Flusher).Flush() // no Content-Length: the cap must trip while reading
				w.Write([]byte(`{"name":"` + strings.Repeat("x", 4096) + `"}`))
			},
			maxBytes:  1024,
			wantClass: ClassTooLarge, wantStatus: 200, wantURL: WellKnownCardPath,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			input := srv.URL + tt.path
			res, err := newTestFetcher(tt.maxBytes).Fetch(t.Context(), input, tt.cond)
			gotURL := ""
			if tt.wantClass == "" {
				if err != nil {
					t.Fatalf("Fetch: %v", err)
				}
				if res.Status != tt.wantStatus {
					t.Errorf("Status %d, want %d", res.Status, tt.wantStatus)
				}
				gotURL = res.URL
			} else {
				var fe *FetchError
				if !errors.As(err, &fe) {
					t.Fatalf("err = %v (%T), want *FetchError", err, err)
				}
				if fe.Class != tt.wantClass || fe.Status != tt.wantStatus {
					t.Fatalf("class %q status %d (%v), want %q %d", fe.Class, fe.Status, err, tt.wantClass, tt.wantStatus)
				}
				if tt.wantStatus != 0 && (res == nil || res.Status != tt.wantStatus) {
					t.Errorf("a response arrived but Result = %+v", res)
				}
				gotURL = fe.URL
			}
			if gotURL != srv.URL+tt.wantURL {
				t.Errorf("URL %q, want %q", gotURL, srv.URL+tt.wantURL)
			}
			if tt.check != nil {
				tt.check(t, input, res)
			}
		})
	}
}

// TestFetchTransportFailures covers failures below HTTP. All of them stay
// on loopback or fail before a packet leaves: the address refusal happens
// in the dial Control hook, and Go's resolver fails a name with a label
// over 63 octets (RFC 1035 §2.3.4) or a .onion name (RFC 7686 §2) without
// sending a query.
func TestFetchTransportFailures(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	// arrived tells a caller waiting on it that the slow server has the
	// request.
	arrived := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case arrived <- struct{}{}:
		case <-r.Context().Done():
			return
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(testCard))
	}))
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is the point
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(testCard))
	}))
	defer plain.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := ln.Addr().String()
	ln.Close()

	tests := []struct {
		name  string
		input string
		ctx   func() (context.Context, context.CancelFunc)
		// timeout is the client's; by default long enough that only a
		// hang reaches it, even on a loaded machine.
		timeout   time.Duration
		allow     []netip.Prefix
		wantClass string
		wantIs    error
	}{
		{name: "invalid URL", input: "ftp://127.0.0.1/card.json", wantClass: ClassInvalidURL, wantIs: ErrInvalidURL},
		{name: "dns no such host", input: "https://agent.corp.internal/", wantClass: ClassDNS},
		{name: "dns name too long", input: "https://" + strings.Repeat("a", 64) + ".corp.internal/", wantClass: ClassDNS},
		{name: "reserved name", input: "https://support.shop.example/", wantClass: ClassReservedName, wantIs: safehttp.ErrReservedName},
		{name: "invalid name", input: "https://agent.invalid/", wantClass: ClassReservedName, wantIs: safehttp.ErrReservedName},
		{name: "dns no address", input: "https://nonexistent.onion/", wantClass: ClassDNS},
		{name: "connection refused", input: "http://" + closedAddr + "/card.json", wantClass: ClassConnect},
		{name: "untrusted certificate", input: tlsSrv.URL + "/card.json", wantClass: ClassTLS},
		{name: "TLS to a plain HTTP server", input: "https://" + plain.Listener.Addr().String() + "/card.json", wantClass: ClassTLS},
		{name: "client timeout", input: slow.URL + "/card.json", timeout: 300 * time.Millisecond, wantClass: ClassTimeout},
		{
			name: "caller deadline", input: slow.URL + "/card.json", wantClass: ClassTimeout,
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 100*time.Millisecond)
			},
		},
		{
			// Cancelled once the request is in, not after a fixed time
			// that a loaded machine could make later than the client's
			// timeout.
			name: "caller cancel", input: slow.URL + "/card.json", wantClass: ClassCanceled,
			ctx: func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				go func() {
					select {
					case <-arrived:
						cancel()
					case <-ctx.Done():
					}
				}()
				return ctx, cancel
			},
		},
		{name: "loopback refused by default", input: plain.URL + "/card.json", allow: []netip.Prefix{}, wantClass: ClassBlockedAddress, wantIs: safehttp.ErrBlockedAddress},
		{name: "private address", input: "http://10.0.0.1/card.json", wantClass: ClassBlockedAddress, wantIs: safehttp.ErrBlockedAddress},
		{name: "metadata address", input: "http://169.254.169.254/", wantClass: ClassBlockedAddress, wantIs: safehttp.ErrBlockedAddress},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			allow := loopback
			if tt.allow != nil {
				allow = tt.allow
			}
			// The resolver answers NXDOMAIN in process, and fails the test
			// if asked for a reserved name.
			resolver := safehttptest.NewResolver(t, nil).Net()
			timeout := 10 * time.Second
			if tt.timeout != 0 {
				timeout = tt.timeout
			}
			f := NewFetcher(safehttp.New(safehttp.Config{AllowNetworks: allow, Timeout: timeout, Resolver: resolver}), 0)
			ctx, cancel := context.Background(), context.CancelFunc(func() {})
			if tt.ctx != nil {
				ctx, cancel = tt.ctx()
			}
			defer cancel()
			start := time.Now()
			res, err := f.Fetch(ctx, tt.input, Conditional{})
			var fe *FetchError
			if !errors.As(err, &fe) {
				t.Fatalf("err = %v (%T), want *FetchError", err, err)
			}
			if fe.Class != tt.wantClass {
				t.Errorf("class %q (%v), want %q", fe.Class, err, tt.wantClass)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.wantIs)
			}
			if res != nil {
				t.Errorf("Result %+v with a transport failure", res)
			}
			// A bound below the 5 s a real resolver waits per try: no case
			// may wait for one. 2 s was overrun by the TLS handshake of the
			// untrusted-certificate case on a machine at load 30.
			if d := time.Since(start); d > 4*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}
