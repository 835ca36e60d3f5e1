package safehttp_test

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/a2aregistry/registry/internal/safehttp"
	"github.com/a2aregistry/registry/internal/safehttp/safehttptest"
)

var everywhere = []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("::/0")}

// registryServer stands in for the registry: it counts every request
// that reaches it.
type registryServer struct {
	*httptest.Server
	hits atomic.Int32
	port int
}

func newRegistryServer(t *testing.T, listen string) *registryServer {
	t.Helper()
	r := &registryServer{}
	r.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.hits.Add(1)
		if req.URL.Path == "/redirect-home" {
			http.Redirect(w, req, "/api/v1/agents", http.StatusFound)
			return
		}
		fmt.Fprint(w, `{"ok":true}`)
	}))
	if listen != "" {
		ln, err := net.Listen("tcp", listen)
		if err != nil {
			t.Skipf("cannot listen on %s: %v", listen, err)
		}
		r.Listener.Close()
		r.Listener = ln
	}
	r.Start()
	t.Cleanup(r.Close)
	r.port = r.Listener.Addr().(*net.TCPAddr).Port
	return r
}

func mustSelf(t *testing.T, listen, public string) *safehttp.Self {
	t.Helper()
	s, err := safehttp.NewSelf(listen, public)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// wantSelf fails unless err refuses the registry itself with its own
// cause, and a message that names host and says why.
func wantSelf(t *testing.T, what string, err error, host string) {
	t.Helper()
	if !errors.Is(err, safehttp.ErrSelf) || errors.Is(err, safehttp.ErrBlockedAddress) {
		t.Errorf("%s: err = %v, want ErrSelf (and not a blocked address)", what, err)
		return
	}
	if c := safehttp.Cause(err); c != safehttp.CauseSelf {
		t.Errorf("%s: Cause = %q, want %q", what, c, safehttp.CauseSelf)
	}
	if msg := safehttp.Describe(host, err); !strings.Contains(msg, host) || !strings.Contains(msg, "this registry itself") {
		t.Errorf("%s: Describe = %q, want the host and that it is the registry itself", what, msg)
	}
}

// TestSelfIsRefused: whatever the allowlist opens, no request reaches the
// registry's listen address or public URL — by name before any lookup,
// by address after it (a name that resolves to the registry), on every
// redirect hop — and the refusal has its own cause. Other servers on the
// same host stay reachable.
func TestSelfIsRefused(t *testing.T) {
	reg := newRegistryServer(t, "127.0.0.1:0")
	other := newRegistryServer(t, "127.0.0.1:0")
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	}))
	defer redirector.Close()
	port := fmt.Sprint(reg.port)
	res := safehttptest.NewResolver(t, map[string][]string{
		"rebind.corp.internal":   {"127.0.0.1"},
		"registry.corp.internal": {"127.0.0.1"},
		"shared.corp.internal":   {"127.0.0.1"},
	})

	tests := []struct {
		name    string
		listen  string
		public  string
		url     string
		host    string
		noAsked bool // refused by name: nothing looked up
	}{
		{name: "listen address", listen: reg.Listener.Addr().String(), url: reg.URL + "/api/v1/agents", host: "127.0.0.1:" + port},
		{name: "listen address, IPv4-mapped", listen: reg.Listener.Addr().String(), url: "http://[::ffff:127.0.0.1]:" + port + "/", host: "[::ffff:127.0.0.1]:" + port},
		{name: "listen address as localhost", listen: reg.Listener.Addr().String(), url: "http://localhost:" + port + "/", host: "localhost:" + port},
		{name: "unspecified address reaches the listener", listen: reg.Listener.Addr().String(), url: "http://0.0.0.0:" + port + "/", host: "0.0.0.0:" + port},
		{name: "name resolving to the listen address", listen: reg.Listener.Addr().String(), url: "http://rebind.corp.internal:" + port + "/", host: "rebind.corp.internal:" + port},
		{name: "redirect to the listen address", listen: reg.Listener.Addr().String(), url: redirector.URL + "/?to=" + reg.URL + "/api/v1/agents", host: "127.0.0.1:" + port},
		{name: "public URL by name", listen: "10.9.9.9:8080", public: "http://registry.corp.internal:" + port,
			url: "http://Registry.Corp.Internal.:" + port + "/x", host: "Registry.Corp.Internal.:" + port, noAsked: true},
		{name: "public URL with its default port, by name", listen: "10.9.9.9:8080", public: "https://registry.corp.internal",
			url: "https://registry.corp.internal:443/", host: "registry.corp.internal", noAsked: true},
		{name: "name resolving to the public URL's address", listen: "10.9.9.9:8080", public: "http://registry.corp.internal:" + port,
			url: "http://shared.corp.internal:" + port + "/", host: "shared.corp.internal:" + port},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(res.Asked())
			c := safehttp.New(safehttp.Config{AllowNetworks: everywhere, Resolver: res.Net(), Self: mustSelf(t, tt.listen, tt.public)})
			reg.hits.Store(0)
			resp, err := c.Get(t.Context(), tt.url)
			if resp != nil {
				resp.Body.Close()
			}
			wantSelf(t, tt.url, err, tt.host)
			if n := reg.hits.Load(); n != 0 {
				t.Errorf("the registry got %d requests", n)
			}
			if asked := res.Asked()[before:]; tt.noAsked && len(asked) != 0 {
				t.Errorf("refused by name, yet looked up %v", asked)
			}
			// Another server on the same address, another port: reached.
			resp, err = c.Get(t.Context(), other.URL)
			if err != nil {
				t.Fatalf("another loopback server: %v", err)
			}
			resp.Body.Close()
		})
	}

	t.Run("gRPC dials", func(t *testing.T) {
		c := safehttp.New(safehttp.Config{AllowNetworks: everywhere, Resolver: res.Net(), Self: mustSelf(t, reg.Listener.Addr().String(), "")})
		for _, addr := range []string{reg.Listener.Addr().String(), "rebind.corp.internal:" + port} {
			conn, err := c.DialContext(t.Context(), "tcp", addr)
			if conn != nil {
				conn.Close()
			}
			wantSelf(t, addr, err, addr)
		}
	})
}

// TestSelfWildcardListen: a registry listening on 0.0.0.0 is every local
// IPv4 address on its port, one on [::] every local address; other ports
// and other hosts stay reachable.
func TestSelfWildcardListen(t *testing.T) {
	local := localNonLoopback(t)
	hasIPv6 := false
	if ln, err := net.Listen("tcp6", "[::1]:0"); err == nil {
		hasIPv6 = true
		ln.Close()
	}
	for _, tt := range []struct {
		name, listen string
		self         []string
		notV6        bool
	}{
		{name: "IPv4 wildcard", listen: "0.0.0.0:%d", self: []string{"127.0.0.1", "127.0.0.2", "0.0.0.0"}, notV6: true},
		{name: "IPv6 wildcard", listen: "[::]:%d", self: []string{"127.0.0.1", "127.0.0.2", "0.0.0.0", "::1", "::"}},
		{name: "no host", listen: ":%d", self: []string{"127.0.0.1", "::1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			reg := newRegistryServer(t, fmt.Sprintf(tt.listen, 0))
			c := safehttp.New(safehttp.Config{AllowNetworks: everywhere, Self: mustSelf(t, fmt.Sprintf(tt.listen, reg.port), "")})
			self := tt.self
			for _, ip := range local {
				if ip.Is4() || !tt.notV6 {
					self = append(self, ip.String())
				}
			}
			for _, ip := range self {
				if netip.MustParseAddr(ip).Is6() && !hasIPv6 {
					// No IPv6 socket can be opened to be refused.
					continue
				}
				addr := net.JoinHostPort(ip, fmt.Sprint(reg.port))
				conn, err := c.DialContext(t.Context(), "tcp", addr)
				if conn != nil {
					conn.Close()
				}
				wantSelf(t, addr, err, addr)
			}
			if tt.notV6 && hasIPv6 {
				// An IPv4-only listener is not at ::1; nothing listens
				// there, so the dial fails for that reason alone.
				_, err := c.DialContext(t.Context(), "tcp", net.JoinHostPort("::1", fmt.Sprint(reg.port)))
				if errors.Is(err, safehttp.ErrSelf) {
					t.Errorf("[::1] refused as the registry although it listens on IPv4 only")
				}
			}
			other := newRegistryServer(t, "127.0.0.1:0")
			if resp, err := c.Get(t.Context(), other.URL); err != nil {
				t.Errorf("another port: %v", err)
			} else {
				resp.Body.Close()
			}
		})
	}
}

// localNonLoopback returns this host's interface addresses that are not
// loopback or link-local (a registry on a wildcard address is at each).
func localNonLoopback(t *testing.T) []netip.Addr {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	var out []netip.Addr
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		ip, ok := netip.AddrFromSlice(n.IP)
		if ok && !ip.Unmap().IsLoopback() && !ip.IsLinkLocalUnicast() {
			out = append(out, ip.Unmap())
		}
	}
	return out
}

// TestSelfBind: a listen port of 0 is learned from the bound listener.
func TestSelfBind(t *testing.T) {
	reg := newRegistryServer(t, "127.0.0.1:0")
	self := mustSelf(t, "127.0.0.1:0", "")
	c := safehttp.New(safehttp.Config{AllowNetworks: everywhere, Self: self})
	resp, err := c.Get(t.Context(), reg.URL)
	if err != nil {
		t.Fatalf("before Bind, port 0 is no port: %v", err)
	}
	resp.Body.Close()
	if err := self.Bind(reg.Listener.Addr()); err != nil {
		t.Fatal(err)
	}
	// A new connection: the one above may be pooled.
	c.CloseIdleConnections()
	_, err = c.Get(t.Context(), reg.URL)
	wantSelf(t, reg.URL, err, "127.0.0.1")
}

// TestSelfExempt: the one exception reaches exactly the URLs given, with
// no credential of any kind; another path, another query, a redirect, a
// credential, a gRPC dial or a connection left over from an exempt
// request are all refused.
func TestSelfExempt(t *testing.T) {
	reg := newRegistryServer(t, "127.0.0.1:0")
	self := mustSelf(t, reg.Listener.Addr().String(), "http://registry.corp.internal:"+fmt.Sprint(reg.port))
	cardURL := reg.URL + "/.well-known/agent-card.json"
	a2aURL := "http://registry.corp.internal:" + fmt.Sprint(reg.port) + "/a2a/v1"
	if err := self.Exempt(cardURL, a2aURL, reg.URL+"/redirect-home"); err != nil {
		t.Fatal(err)
	}
	res := safehttptest.NewResolver(t, map[string][]string{"registry.corp.internal": {"127.0.0.1"}})
	c := safehttp.New(safehttp.Config{AllowNetworks: everywhere, Resolver: res.Net(), Self: self})

	send := func(method, u string, header http.Header) error {
		req, err := http.NewRequestWithContext(t.Context(), method, u, strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range header {
			req.Header[k] = v
		}
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}
	allowed := []struct {
		method, url string
		header      http.Header
	}{
		{http.MethodGet, cardURL, http.Header{"Accept": {"application/json"}, "A2A-Version": {"1.0"}, "If-None-Match": {`"v1"`}}},
		{http.MethodPost, a2aURL, http.Header{"Content-Type": {"application/json"}, "A2A-Extensions": {"https://example.com/ext"}}},
		{http.MethodPost, strings.Replace(a2aURL, "registry.corp.internal", "REGISTRY.corp.internal.", 1), nil},
	}
	for _, a := range allowed {
		reg.hits.Store(0)
		if err := send(a.method, a.url, a.header); err != nil || reg.hits.Load() != 1 {
			t.Errorf("%s %s: %v (%d requests arrived), want it reached", a.method, a.url, err, reg.hits.Load())
		}
	}

	refused := []struct {
		name, method, url string
		header            http.Header
		credential        bool
	}{
		{name: "another path", method: http.MethodGet, url: reg.URL + "/api/v1/agents"},
		{name: "a path under an interface URL", method: http.MethodPost, url: a2aURL + "/message:send"},
		{name: "another query", method: http.MethodGet, url: cardURL + "?api_key=k"},
		{name: "redirect from an exempt URL", method: http.MethodGet, url: reg.URL + "/redirect-home"},
		{name: "bearer token", method: http.MethodPost, url: a2aURL, header: http.Header{"Authorization": {"Bearer t"}}, credential: true},
		{name: "API key header", method: http.MethodPost, url: a2aURL, header: http.Header{"X-Api-Key": {"k"}}, credential: true},
		{name: "cookie", method: http.MethodGet, url: cardURL, header: http.Header{"Cookie": {"registry_session=s"}}, credential: true},
		{name: "user info", method: http.MethodGet, url: strings.Replace(cardURL, "http://", "http://user:pass@", 1), credential: true},
	}
	for _, r := range refused {
		reg.hits.Store(0)
		err := send(r.method, r.url, r.header)
		var se *safehttp.SelfError
		if !errors.As(err, &se) || se.Credential != r.credential {
			t.Errorf("%s: err = %v, want a self refusal with Credential %v", r.name, err, r.credential)
		}
		// The redirect's first hop is exempt and arrives; its target not.
		want := int32(0)
		if r.name == "redirect from an exempt URL" {
			want = 1
		}
		if n := reg.hits.Load(); n != want {
			t.Errorf("%s: the registry got %d requests, want %d", r.name, n, want)
		}
		if r.credential && !strings.Contains(safehttp.Describe("registry", err), "credentials") {
			t.Errorf("%s: message %q does not say why", r.name, safehttp.Describe("registry", err))
		}
	}

	conn, err := c.DialContext(t.Context(), "tcp", reg.Listener.Addr().String())
	if conn != nil {
		conn.Close()
	}
	if !errors.Is(err, safehttp.ErrSelf) {
		t.Errorf("gRPC dial to the registry: %v, want ErrSelf (never exempt)", err)
	}

	for _, u := range []string{"http://10.9.9.9:8080/card", "http://127.0.0.1:1/", "https://registry.corp.internal/a2a/v1", "ftp://registry.corp.internal/"} {
		if err := self.Exempt(u); !errors.Is(err, safehttp.ErrNotSelf) {
			t.Errorf("Exempt(%s) = %v, want ErrNotSelf", u, err)
		}
	}
	if err := self.Exempt(); err != nil {
		t.Fatal(err)
	}
	err = send(http.MethodGet, cardURL, nil)
	wantSelf(t, "after the exemption is withdrawn", err, "127.0.0.1")
}

// TestSelfLooksUpNothingForReservedNames: a reserved name is refused
// before the registry's own public name is looked up, so a card copied
// from the examples still makes the registry ask no resolver.
func TestSelfLooksUpNothingForReservedNames(t *testing.T) {
	res := safehttptest.NewResolver(t, map[string][]string{"registry.corp.internal": {"127.0.0.1"}})
	c := safehttp.New(safehttp.Config{Resolver: res.Net(), Self: mustSelf(t, "127.0.0.1:8080", "https://registry.corp.internal")})
	_, err := c.Get(t.Context(), "https://support.shop.example/.well-known/agent-card.json")
	if !errors.Is(err, safehttp.ErrReservedName) {
		t.Errorf("err = %v, want a reserved name", err)
	}
	if asked := res.Asked(); len(asked) != 0 {
		t.Errorf("looked up %v", asked)
	}
}
