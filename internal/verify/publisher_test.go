package verify

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/safehttp"
	"github.com/a2aregistry/registry/internal/safehttp/safehttptest"
)

// hostsServer is one loopback https server answering for several names
// (a certificate naming them all, the names mapped to 127.0.0.1 by the
// test resolver): each host serves the key set keys[host] at every path
// it is asked for, 404 when it has none. It records what was asked.
type hostsServer struct {
	srv    *httptest.Server
	port   string
	client *safehttp.Client

	mu    sync.Mutex
	keys  map[string][]byte
	asked []string
}

func newHostsServer(t *testing.T, names ...string) *hostsServer {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "publisher test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames: names, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	h := &hostsServer{keys: map[string][]byte{}}
	h.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.Host)
		h.mu.Lock()
		h.asked = append(h.asked, "https://"+r.Host+r.URL.Path)
		body, ok := h.keys[host]
		h.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.Write(body)
	}))
	h.srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	h.srv.StartTLS()
	t.Cleanup(h.srv.Close)
	_, h.port, _ = net.SplitHostPort(h.srv.Listener.Addr().String())
	roots := x509.NewCertPool()
	roots.AddCert(cert)
	hosts := map[string][]string{}
	for _, n := range names {
		hosts[n] = []string{"127.0.0.1"}
	}
	h.client = safehttp.New(safehttp.Config{AllowNetworks: loopback, RootCAs: roots,
		Resolver: safehttptest.NewResolver(t, hosts).Net()})
	return h
}

// url is https://host:port+path on the server.
func (h *hostsServer) url(host, path string) string { return "https://" + host + ":" + h.port + path }

func (h *hostsServer) serve(keys map[string][]byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.keys, h.asked = keys, nil
}

func (h *hostsServer) requests() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.asked...)
}

type fakeManifests struct{ domain string }

func (f fakeManifests) VouchedBy(_ context.Context, domain, _ string) (string, bool, error) {
	return "https://" + domain + "/.well-known/ard.json", domain == f.domain, nil
}

// TestPublisherVerification holds the one rule of a verified publisher:
// the key that verified the card's signature is served at the publisher's
// own /.well-known/jwks.json (on the registrable domain or a host on it),
// or came from an https jku on that domain, or was pinned for an origin on
// it; a key on another domain, or one that verified nothing, proves
// nothing.
func TestPublisherVerification(t *testing.T) {
	h := newHostsServer(t, "agents.acme.co.uk", "acme.co.uk", "keys.acme.co.uk", "keys.other.dev", "other.dev")
	cardURL := h.url("agents.acme.co.uk", "/.well-known/agent-card.json")
	k1 := jwksJSON(t, testJWK("k1"))
	otherKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k1Other := jwksJSON(t, jose.JSONWebKey{Key: &otherKey.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"})
	anyOrigin := StaticKeys{{KID: "k1", Key: testJWK("k1"), Origins: []string{"*"}, Source: KeySourcePinned}}
	bound := StaticKeys{{KID: "k1", Key: testJWK("k1"), Origins: []string{h.url("agents.acme.co.uk", "")}, Source: KeySourcePinned}}
	boundElsewhere := StaticKeys{{KID: "k1", Key: testJWK("k1"), Origins: []string{h.url("agents.acme.co.uk", ""), h.url("other.dev", "")}, Source: KeySourcePinned}}
	kidOnly := signJCS(t, baseCard, map[string]any{"kid": "k1"})
	unknownKID := signJCS(t, baseCard, map[string]any{"kid": "nobody"})
	jkuOn := func(host string) []byte {
		return signJCS(t, baseCard, map[string]any{"kid": "k1", "jku": h.url(host, "/keys.json")})
	}

	tests := []struct {
		name      string
		raw       []byte
		cardURL   string
		opts      Options
		serve     map[string][]byte
		wantProof Proof
		wantURL   string
	}{
		{name: "signing key at the registrable domain's well-known JWKS", raw: kidOnly, opts: Options{Keys: anyOrigin},
			serve: map[string][]byte{"acme.co.uk": k1}, wantProof: ProofWellKnownJWKS, wantURL: h.url("acme.co.uk", WellKnownJWKSPath)},
		{name: "signing key at the card host's well-known JWKS", raw: kidOnly, opts: Options{Keys: anyOrigin},
			serve: map[string][]byte{"agents.acme.co.uk": k1}, wantProof: ProofWellKnownJWKS, wantURL: h.url("agents.acme.co.uk", WellKnownJWKSPath)},
		{name: "signing key served only on another domain", raw: kidOnly, opts: Options{Keys: anyOrigin},
			serve: map[string][]byte{"other.dev": k1, "keys.other.dev": k1}},
		{name: "the domain serves another key under the kid", raw: kidOnly, opts: Options{Keys: anyOrigin},
			serve: map[string][]byte{"acme.co.uk": k1Other}},
		{name: "jku over https on the same registrable domain", raw: jkuOn("keys.acme.co.uk"),
			opts:  Options{TrustedJWKSOrigins: []string{h.url("keys.acme.co.uk", "")}},
			serve: map[string][]byte{"keys.acme.co.uk": k1}, wantProof: ProofJKU, wantURL: h.url("keys.acme.co.uk", "/keys.json")},
		{name: "jku on another domain", raw: jkuOn("keys.other.dev"),
			opts:  Options{TrustedJWKSOrigins: []string{h.url("keys.other.dev", "")}},
			serve: map[string][]byte{"keys.other.dev": k1}},
		{name: "key pinned for the card's origin", raw: kidOnly, opts: Options{Keys: bound}, wantProof: ProofPinnedKey},
		{name: "key pinned for origins on two domains still names this one", raw: kidOnly, opts: Options{Keys: boundElsewhere}, wantProof: ProofPinnedKey},
		{name: "a key that verified nothing proves nothing", raw: unknownKID, opts: Options{Keys: anyOrigin},
			serve: map[string][]byte{"acme.co.uk": k1, "agents.acme.co.uk": k1}},
		{name: "unsigned card", raw: []byte(baseCard), serve: map[string][]byte{"acme.co.uk": k1}},
		{name: "an IP address is its own publisher", raw: kidOnly, cardURL: h.url("127.0.0.1", "/card.json"), opts: Options{Keys: anyOrigin},
			serve: map[string][]byte{"127.0.0.1": k1}, wantProof: ProofWellKnownJWKS, wantURL: h.url("127.0.0.1", WellKnownJWKSPath)},
		{name: "an ARD manifest on the domain vouches", raw: []byte(baseCard), opts: Options{Manifests: fakeManifests{"acme.co.uk"}},
			wantProof: ProofManifest, wantURL: "https://acme.co.uk/.well-known/ard.json"},
		{name: "an ARD manifest on another domain does not", raw: []byte(baseCard), opts: Options{Manifests: fakeManifests{"other.dev"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h.serve(tt.serve)
			opts := tt.opts
			opts.Client = h.client
			u := cardURL
			if tt.cardURL != "" {
				u = tt.cardURL
			}
			c, err := card.Parse(tt.raw, card.DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			rep := New(opts).Verify(t.Context(), c, u)
			p := rep.Publisher
			wantDomain, _ := card.PublisherOfCard(u)
			if p == nil || p.Domain != wantDomain {
				t.Fatalf("publisher = %+v, want domain %s", p, wantDomain)
			}
			if p.Verified != (tt.wantProof != "") || p.Proof != tt.wantProof || p.ProofURL != tt.wantURL {
				t.Errorf("publisher = %+v (signatures %s), want verified by %q at %q", p, rep.Signatures.Status, tt.wantProof, tt.wantURL)
			}
			if rep.Signatures.Status != StatusVerified {
				for _, r := range h.requests() {
					if strings.HasSuffix(r, WellKnownJWKSPath) {
						t.Errorf("fetched %s for a card whose signature did not verify", r)
					}
				}
			}
		})
	}
}

// TestPublisherOfFile: a card read from a file has no publisher.
func TestPublisherOfFile(t *testing.T) {
	c, err := card.Parse([]byte(baseCard), card.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if p := New(Options{}).Verify(t.Context(), c, "").Publisher; p != nil {
		t.Errorf("publisher of a file = %+v, want none", p)
	}
}
