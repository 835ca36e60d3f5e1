package safehttp

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

var loopbackOnly = []netip.Prefix{
	netip.MustParsePrefix("127.0.0.0/8"),
	netip.MustParsePrefix("::1/128"),
}

func okHandler(w http.ResponseWriter, _ *http.Request) {
	io.WriteString(w, `{"ok":true}`)
}

// TestRefusedBeforeConnect dials addresses that must never be reached. The
// refusal happens in Control, between socket() and connect(), so these
// requests send no packet; the short elapsed time shows no connect was
// attempted (10.0.0.1 would otherwise wait for the dial timeout).
func TestRefusedBeforeConnect(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(okHandler))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port

	c := New(Config{DialTimeout: 3 * time.Second})
	tests := []struct {
		url    string
		wantIP string
	}{
		{"http://10.0.0.1/", "10.0.0.1"},
		{"http://169.254.169.254/latest/meta-data/", "169.254.169.254"},
		{"http://[fe80::1]/", "fe80::1"},
		{fmt.Sprintf("http://[::ffff:127.0.0.1]:%d/", port), "127.0.0.1"},
		{"http://100.64.0.1/", "100.64.0.1"},
		{"http://[fd00:ec2::254]/", "fd00:ec2::254"},
		{"http://0.0.0.0/", "0.0.0.0"},
		{fmt.Sprintf("http://localhost:%d/", port), "127.0.0.1"},
		{srv.URL, "127.0.0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			start := time.Now()
			resp, err := c.Get(t.Context(), tt.url)
			if resp != nil {
				t.Fatalf("got response %s, want refusal", resp.Status)
			}
			if !errors.Is(err, ErrBlockedAddress) {
				t.Fatalf("err = %v, want ErrBlockedAddress", err)
			}
			var ue *url.Error
			var oe *net.OpError
			var be *BlockedError
			if !errors.As(err, &ue) || !errors.As(err, &oe) || !errors.As(err, &be) {
				t.Fatalf("err %T %v: want *url.Error wrapping *net.OpError wrapping *BlockedError", err, err)
			}
			if be.IP.String() != tt.wantIP {
				t.Errorf("BlockedError.IP = %s, want %s", be.IP, tt.wantIP)
			}
			if be.Reason == "" {
				t.Error("BlockedError.Reason is empty")
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("refusal took %v: a connect was attempted", d)
			}
		})
	}
}

func TestAllowlistOpensLoopback(t *testing.T) {
	var gotUA atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotUA.Store(r.UserAgent())
		okHandler(w, r)
	}))
	defer srv.Close()

	tests := []struct {
		name    string
		allow   []netip.Prefix
		wantErr error
	}{
		{"default denies", nil, ErrBlockedAddress},
		{"other range denies", []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, ErrBlockedAddress},
		{"loopback allowed", loopbackOnly, nil},
		{"single address allowed", []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(Config{AllowNetworks: tt.allow})
			// Both entry points must carry the guard: SDKs use HTTPClient.
			for _, get := range []func() (*http.Response, error){
				func() (*http.Response, error) { return c.Get(t.Context(), srv.URL) },
				func() (*http.Response, error) { return c.HTTPClient().Get(srv.URL) },
			} {
				resp, err := get()
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				if err != nil {
					continue
				}
				body, err := ReadBody(resp, 1024)
				resp.Body.Close()
				if err != nil || string(body) != `{"ok":true}` {
					t.Fatalf("body %q, err %v", body, err)
				}
				if ua, _ := gotUA.Load().(string); ua != DefaultUserAgent {
					t.Errorf("User-Agent = %q, want %q", ua, DefaultUserAgent)
				}
			}
		})
	}
}

func TestRedirects(t *testing.T) {
	var hits atomic.Int32
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	mux.HandleFunc("/private", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, fmt.Sprintf("http://127.0.0.2:%d/ok", port), http.StatusFound)
	})
	mux.HandleFunc("/same", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/ok", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/ftp", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "ftp://127.0.0.1/card.json", http.StatusFound)
	})
	mux.HandleFunc("/ok", okHandler)

	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, srv.URL+"/ok", http.StatusFound)
	}))
	defer tlsSrv.Close()
	roots := tlsSrv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs

	c := New(Config{
		AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		MaxRedirects:  3,
		RootCAs:       roots,
	})
	tests := []struct {
		name    string
		url     string
		wantErr error
	}{
		{"same host", srv.URL + "/same", nil},
		{"to address outside allowlist", srv.URL + "/private", ErrBlockedAddress},
		{"loop", srv.URL + "/loop", ErrTooManyRedirects},
		{"to ftp", srv.URL + "/ftp", ErrRedirectRefused},
		{"https to http", tlsSrv.URL + "/", ErrRedirectRefused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits.Store(0)
			resp, err := c.Get(t.Context(), tt.url)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				if resp != nil {
					t.Errorf("response %s returned with error", resp.Status)
				}
				return
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("status %d", resp.StatusCode)
			}
		})
	}
	// MaxRedirects 3: the first request plus three followed hops.
	if _, err := c.Get(t.Context(), srv.URL+"/loop"); !errors.Is(err, ErrTooManyRedirects) {
		t.Fatal(err)
	}
	if got := hits.Load(); got != 4 {
		t.Errorf("redirect loop hit the server %d times, want 4", got)
	}
}

func TestNoRedirectsWhenNegative(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	}))
	defer srv.Close()
	c := New(Config{AllowNetworks: loopbackOnly, MaxRedirects: -1})
	if _, err := c.Get(t.Context(), srv.URL); !errors.Is(err, ErrTooManyRedirects) {
		t.Fatalf("err = %v, want ErrTooManyRedirects", err)
	}
}

func TestUnsupportedScheme(t *testing.T) {
	c := New(Config{AllowNetworks: loopbackOnly})
	for _, u := range []string{"ftp://127.0.0.1/x", "file:///etc/passwd", "gopher://127.0.0.1/"} {
		if _, err := c.Get(t.Context(), u); !errors.Is(err, ErrUnsupportedScheme) {
			t.Errorf("Get(%s) err = %v, want ErrUnsupportedScheme", u, err)
		}
	}
}

func TestBodyLimits(t *testing.T) {
	const limit = 64 << 10
	mux := http.NewServeMux()
	mux.HandleFunc("/endless", func(w http.ResponseWriter, r *http.Request) {
		chunk := bytes.Repeat([]byte("a"), 32<<10)
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	mux.HandleFunc("/declared", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(limit+1))
		w.WriteHeader(http.StatusNotFound)
		w.Write(make([]byte, limit+1))
	})
	mux.HandleFunc("/exact", func(w http.ResponseWriter, r *http.Request) {
		w.Write(make([]byte, limit))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	tests := []struct {
		name       string
		path       string
		clientCap  int64
		readCap    int64
		wantStatus int
		wantErr    error
		wantLen    int
	}{
		{"endless via ReadBody", "/endless", -1, limit, 200, ErrBodyTooLarge, 0},
		{"endless via client cap", "/endless", limit, 1 << 30, 200, ErrBodyTooLarge, 0},
		{"declared length over cap keeps status", "/declared", limit, 1 << 30, 404, ErrBodyTooLarge, 0},
		{"declared length over ReadBody cap", "/declared", -1, limit, 404, ErrBodyTooLarge, 0},
		{"exactly at the cap", "/exact", limit, limit, 200, nil, limit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(Config{AllowNetworks: loopbackOnly, MaxBodyBytes: tt.clientCap})
			resp, err := c.Get(t.Context(), srv.URL+tt.path)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.wantStatus)
			}
			body, err := ReadBody(resp, tt.readCap)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if len(body) != tt.wantLen {
				t.Errorf("len(body) = %d, want %d", len(body), tt.wantLen)
			}
		})
	}
}

// TestGzipBomb serves 100 MiB of zeros gzip-compressed (about 100 KB on the
// wire). The cap must count decompressed bytes, stop early and allocate
// little, also when the caller asked for gzip itself.
func TestGzipBomb(t *testing.T) {
	// One gzip member of 1 MiB of zeros, repeated: gzip readers decode
	// concatenated members as one stream (RFC 1952 §2.2), and building the
	// bomb this way costs one megabyte of deflate instead of a hundred.
	var member bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
	zw.Write(make([]byte, 1<<20))
	zw.Close()
	bomb := bytes.Repeat(member.Bytes(), 100)

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(bomb)
	}))
	defer srv.Close()

	for _, callerAsksGzip := range []bool{false, true} {
		t.Run(fmt.Sprintf("caller_accept_encoding=%v", callerAsksGzip), func(t *testing.T) {
			c := New(Config{AllowNetworks: loopbackOnly, MaxBodyBytes: 1 << 20})
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL, nil)
			if callerAsksGzip {
				req.Header.Set("Accept-Encoding", "gzip")
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			n, err := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			elapsed := time.Since(start)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrBodyTooLarge) {
				t.Fatalf("read %d bytes, err = %v, want ErrBodyTooLarge", n, err)
			}
			if n > 1<<20 {
				t.Errorf("read %d bytes past the 1 MiB cap", n)
			}
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("gzip bomb (%d bytes compressed): stopped after %d bytes in %v, %d KiB allocated", len(bomb), n, elapsed, alloc>>10)
			if alloc > 16<<20 {
				t.Errorf("allocated %d MiB reading a capped body", alloc>>20)
			}
			if elapsed > 2*time.Second {
				t.Errorf("took %v", elapsed)
			}
		})
	}
}

func TestTimeouts(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	mux := http.NewServeMux()
	mux.HandleFunc("/slow-headers", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/slow-body", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("{"))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	c := New(Config{AllowNetworks: loopbackOnly, Timeout: 200 * time.Millisecond})
	for _, path := range []string{"/slow-headers", "/slow-body"} {
		t.Run(path, func(t *testing.T) {
			start := time.Now()
			resp, err := c.Get(context.Background(), srv.URL+path)
			if err == nil {
				_, err = ReadBody(resp, 1024)
				resp.Body.Close()
			}
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				t.Fatalf("err = %v, want a timeout", err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("timeout took %v", d)
			}
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	c := New(Config{})
	got := c.Config()
	want := DefaultConfig()
	if got.Timeout != want.Timeout || got.MaxBodyBytes != want.MaxBodyBytes ||
		got.MaxRedirects != want.MaxRedirects || got.UserAgent != want.UserAgent ||
		got.MaxResponseHeaderBytes != want.MaxResponseHeaderBytes {
		t.Errorf("New(Config{}).Config() = %+v, want defaults %+v", got, want)
	}
	if !strings.HasPrefix(got.UserAgent, "a2a-registry/") {
		t.Errorf("UserAgent %q", got.UserAgent)
	}
	// Environment proxies would connect on our behalf and bypass the dial
	// check, so the transport must never consult them.
	if c.transport.base.Proxy != nil {
		t.Error("transport uses a proxy function")
	}
}

func TestResponseHeaderCap(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Big", strings.Repeat("a", 8<<10))
		okHandler(w, r)
	}))
	defer srv.Close()
	c := New(Config{AllowNetworks: loopbackOnly, MaxResponseHeaderBytes: 4 << 10})
	resp, err := c.Get(t.Context(), srv.URL)
	if err == nil {
		resp.Body.Close()
		t.Fatal("8 KiB header accepted with a 4 KiB cap")
	}
	if !errors.Is(err, ErrHeadersTooLarge) {
		t.Errorf("error %v does not wrap ErrHeadersTooLarge", err)
	}
}
