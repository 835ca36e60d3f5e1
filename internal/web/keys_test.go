package web

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"
	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/catalog"
)

var _ KeyStore = (*catalog.Store)(nil)

func testJWK(t *testing.T, kid string) string {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	b, err := jose.JSONWebKey{Key: &priv.PublicKey, KeyID: kid, Algorithm: "ES256", Use: "sig"}.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestKeysPage(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	f.console = New(Options{Searcher: f.store, Agents: f.store, Keys: f.store, Logger: quietLog})
	f.e = echo.New()
	f.console.Mount(f.e)
	tok := f.console.processCSRF
	jwk := testJWK(t, "k-<1>")

	if body := f.get(t, "/keys", nil).Body.String(); !strings.Contains(body, "No key is pinned") {
		t.Fatal("the empty trust store is not said so")
	}
	tests := []struct {
		name       string
		form       url.Values
		wantStatus int
		want       string
	}{
		{name: "add", form: url.Values{"jwk": {jwk}, "origins": {"https://agent.example\n"}, "not_after": {"2099-01-01T00:00:00Z"}},
			wantStatus: http.StatusSeeOther},
		{name: "the same key again", form: url.Values{"jwk": {jwk}, "origins": {"https://agent.example"}},
			wantStatus: http.StatusConflict, want: "pinned already"},
		{name: "not a key", form: url.Values{"jwk": {`{"kty":"oct","k":"c2VjcmV0"}`}, "origins": {"*"}},
			// The form comes back filled in, to correct.
			wantStatus: http.StatusBadRequest, want: "c2VjcmV0"},
		{name: "no origin", form: url.Values{"jwk": {jwk}, "origins": {" "}},
			wantStatus: http.StatusBadRequest, want: "at least one origin"},
		{name: "bad expiry", form: url.Values{"jwk": {jwk}, "origins": {"*"}, "not_after": {"next year"}},
			wantStatus: http.StatusBadRequest, want: "RFC 3339"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.form.Set(csrfField, tok)
			rec := f.post(t, "/keys", tt.form, nil)
			if rec.Code != tt.wantStatus {
				t.Fatalf("status = %d, want %d\n%s", rec.Code, tt.wantStatus, rec.Body)
			}
			if !strings.Contains(rec.Body.String(), tt.want) {
				t.Errorf("body lacks %q", tt.want)
			}
		})
	}

	keys, err := f.store.TrustedKeys(context.Background())
	if err != nil || len(keys) != 1 {
		t.Fatalf("keys = %v, %v; want the one added", keys, err)
	}
	body := f.get(t, "/keys", nil).Body.String()
	for _, problem := range inlineCode(body) {
		t.Errorf("keys page: %s", problem)
	}
	for _, want := range []string{"k-&lt;1&gt;", "https://agent.example", ">active<", "until 2099-01-01", `action="/keys/` + keys[0].ID + `/revoke"`} {
		if !strings.Contains(body, want) {
			t.Errorf("keys page lacks %q", want)
		}
	}

	if rec := f.post(t, "/keys/"+keys[0].ID+"/revoke", url.Values{}, nil); rec.Code != http.StatusForbidden {
		t.Errorf("revoke without a token = %d, want 403", rec.Code)
	}
	if rec := f.post(t, "/keys/nope/revoke", url.Values{csrfField: {tok}}, nil); rec.Code != http.StatusNotFound {
		t.Errorf("revoke of an unknown key = %d, want 404", rec.Code)
	}
	if rec := f.post(t, "/keys/"+keys[0].ID+"/revoke", url.Values{csrfField: {tok}}, nil); rec.Code != http.StatusSeeOther {
		t.Fatalf("revoke = %d, want 303", rec.Code)
	}
	body = f.get(t, "/keys", nil).Body.String()
	if !strings.Contains(body, ">revoked<") || strings.Contains(body, "/revoke\"") {
		t.Error("a revoked key is not shown revoked, or can be revoked again")
	}
}

// TestKeysNeedAdmin: an editor sees no link to the keys page; with sign-in
// on the routes go through the admin check.
func TestKeysNeedAdmin(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	editor := func(echo.Context) (Principal, bool) { return Principal{Name: "e", Role: auth.Editor}, true }
	f.console = New(Options{Searcher: f.store, Agents: f.store, Keys: f.store, Principal: editor})
	f.e = echo.New()
	f.console.Mount(f.e)
	if strings.Contains(f.get(t, "/", nil).Body.String(), `href="/keys"`) {
		t.Error("an editor is shown the keys link")
	}

	g := newFixture(t, fixtureOptions{})
	g.console = New(Options{Searcher: g.store, Agents: g.store, Keys: g.store, Authorizer: denyAll{}})
	g.e = echo.New()
	g.console.Mount(g.e)
	if rec := g.get(t, "/keys", nil); rec.Code != http.StatusUnauthorized {
		t.Errorf("GET /keys = %d, want 401", rec.Code)
	}
	form := url.Values{"jwk": {testJWK(t, "k")}, "origins": {"*"}, csrfField: {g.console.processCSRF}}
	if rec := g.post(t, "/keys", form, nil); rec.Code != http.StatusUnauthorized {
		t.Errorf("POST /keys = %d, want 401", rec.Code)
	}
}
