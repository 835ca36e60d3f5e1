package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/proxy/proxytest"
)

// TestTryItOAuth signs in to the agent's oauth2 scheme (authorization code
// with PKCE, against an in-process authorization server) from the Try
// panel, then converses without typing a credential: the token waits in
// memory for that conversation only, for the tester who signed in, and is
// never stored, logged or shown.
func TestTryItOAuth(t *testing.T) {
	as := proxytest.StartAuthServer(t, "registry-console", "console-secret", tryToken)
	tf := newTryFixtureWith(t, Options{Authorizer: headerAuth{}, Principal: callerOf}, map[string]any{
		"login": map[string]any{"type": "oauth2", "flows": map[string]any{"authorizationCode": map[string]any{
			"authorizationUrl": as.AuthorizeURL, "tokenUrl": as.TokenURL, "scopes": map[string]string{"a2a": "talk"}}}},
	})
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(who, target string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, target, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set(testCaller, who)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	const alice = "alice:tester"
	try := "/agents/" + tf.id + "/try"
	rec := tf.get(t, try, map[string]string{testCaller: alice})
	page := rec.Body.String()
	// The sign-in form's answer redirects to the authorization server,
	// which the page's form-action must allow (browsers apply it to
	// redirects).
	asOrigin, _ := url.Parse(as.AuthorizeURL)
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "form-action 'self' http://"+asOrigin.Host+";") {
		t.Errorf("CSP %q does not let the sign-in form reach %s", csp, asOrigin.Host)
	}
	// Where the code and client secret go is shown before anything is typed.
	for _, want := range []string{`action="` + try + `/oauth"`, `value="login"`, OAuthCallbackPath + "</code>", `value="a2a"`,
		"sends the code and the client secret to", "<code>" + asOrigin.Host + "</code>"} {
		if !strings.Contains(page, want) {
			t.Errorf("Try page lacks %q", want)
		}
	}

	// signIn runs the browser's round trip and returns the callback's
	// request URL.
	signIn := func(who string) string {
		t.Helper()
		resp := tf.postAs(t, who, try+"/oauth", map[string]string{csrfField: tf.token, fieldOAuthScheme: "login",
			fieldOAuthClientID: "registry-console", fieldOAuthSecret: "console-secret", fieldOAuthScopes: "a2a"}, false)
		if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), as.AuthorizeURL) {
			t.Fatalf("start: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
		}
		back := get(who, resp.Header.Get("Location"))
		cb := back.Header.Get("Location")
		if !strings.HasPrefix(cb, tf.srv.URL+OAuthCallbackPath+"?") {
			t.Fatalf("the authorization server sent the browser to %q", cb)
		}
		return cb
	}

	// The callback belongs to the tester who started the sign-in.
	if resp := get("bob:tester", signIn(alice)); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("bob finishing alice's sign-in: %d, want 400", resp.StatusCode)
	}
	cb := signIn(alice)
	resp := get(alice, cb)
	loc, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusSeeOther || err != nil || loc.Path != try {
		t.Fatalf("callback: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	conv := loc.Query().Get(fieldConversation)
	if resp := get(alice, cb); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a replayed callback: %d, want 400", resp.StatusCode)
	}
	if as.Exchanged() != 1 {
		t.Errorf("%d codes exchanged, want 1 (bob's and the replay must not reach the token endpoint)", as.Exchanged())
	}
	page = tf.get(t, loc.String(), map[string]string{testCaller: alice}).Body.String()
	if !strings.Contains(page, `name="conversation" value="`+conv+`"`) || !strings.Contains(page, "data-remembered") {
		t.Fatalf("Try page after sign-in lacks the conversation %s", conv)
	}
	// Bob cannot use alice's conversation: his run gets no token.
	if page := tf.get(t, loc.String(), map[string]string{testCaller: "bob:tester"}).Body.String(); strings.Contains(page, conv) {
		t.Errorf("bob's Try page offers alice's conversation")
	}

	// No credential typed: the token the sign-in got is used, on the
	// first turn and on the reply.
	readEvents(t, tf.postAs(t, alice, try, map[string]string{csrfField: tf.token, fieldText: proxytest.SayAsk, fieldConversation: conv}, true).Body, nil)
	run := tf.latestRun(t)
	if run.ID != conv || run.State != string(a2a.TaskStateInputRequired) {
		t.Fatalf("run %s in state %q (error %q), want %s input-required", run.ID, run.State, run.ErrorCode, conv)
	}
	readEvents(t, tf.postAs(t, alice, runURL(tf.id, run.ID)+"/messages", map[string]string{csrfField: tf.token, fieldText: "Paris"}, true).Body, nil)
	after, err := tf.store.Run(t.Context(), catalog.ScopeAll, run.ID)
	if err != nil || after.State != string(a2a.TaskStateCompleted) {
		t.Fatalf("after the reply: %q, %v", after.State, err)
	}
	if strings.Contains(string(after.Transcript), tryToken) || strings.Contains(tf.logs.String(), tryToken) {
		t.Error("the signed-in token reached the transcript or the log")
	}
	if !strings.Contains(tf.logs.String(), "signed in to an agent") {
		t.Error("the sign-in was not logged; the log search proves nothing")
	}
}

// TestAllowSignInRedirects: only plain http(s) origins of authorization
// endpoints widen form-action; nothing a card declares can add a
// directive.
func TestAllowSignInRedirects(t *testing.T) {
	for _, tt := range []struct {
		authURL string
		want    string // the form-action directive
	}{
		{"https://id.example.com/authorize", "form-action 'self' https://id.example.com;"},
		{"http://127.0.0.1:8080/authorize?x=1", "form-action 'self' http://127.0.0.1:8080;"},
		{"https://id.example.com;script-src *", "form-action 'self';"},
		{"https://id.example.com%3Bscript-src/x", "form-action 'self';"},
		{"javascript:alert(1)", "form-action 'self';"},
		{"https://[::1]:9443/a", "form-action 'self' https://[::1]:9443;"},
	} {
		raw := fmt.Sprintf(`{"name": "a", "description": "d", "version": "1", "protocolVersion": "0.3.0", "url": "https://a.example/a2a",
			"capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "skills": [],
			"securitySchemes": {"o": {"type": "oauth2", "flows": {"authorizationCode": {"authorizationUrl": %q, "tokenUrl": "https://id.example.com/token", "scopes": {}}}}}}`, tt.authURL)
		cd, err := card.Parse([]byte(raw), card.DefaultLimits())
		if err != nil {
			t.Fatalf("%s: %v", tt.authURL, err)
		}
		e := echo.New()
		rec := httptest.NewRecorder()
		c := e.NewContext(httptest.NewRequest(http.MethodGet, "/", nil), rec)
		c.Response().Header().Set("Content-Security-Policy", contentSecurityPolicy)
		allowSignInRedirects(c, cd)
		if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, tt.want) {
			t.Errorf("%s: CSP %q, want %q", tt.authURL, csp, tt.want)
		}
	}
}

// TestTryItOAuthPinsTheCard: the token URL that gets the code is the one
// the card declared when the sign-in started; a card refreshed before the
// callback (here to a consistent pair of URLs elsewhere) cannot redirect
// the code or the client secret.
func TestTryItOAuthPinsTheCard(t *testing.T) {
	as := proxytest.StartAuthServer(t, "registry-console", "console-secret", tryToken)
	var collected int
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		collected++
		http.Error(w, "no", http.StatusBadRequest)
	}))
	t.Cleanup(collector.Close)
	scheme := func(authURL, tokenURL string) map[string]any {
		return map[string]any{"login": map[string]any{"type": "oauth2", "flows": map[string]any{"authorizationCode": map[string]any{
			"authorizationUrl": authURL, "tokenUrl": tokenURL, "scopes": map[string]string{"a2a": "talk"}}}}}
	}
	tf := newTryFixtureWith(t, Options{Authorizer: headerAuth{}, Principal: callerOf}, scheme(as.AuthorizeURL, as.TokenURL))
	const alice = "alice:tester"
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(target string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, target, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set(testCaller, alice)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	try := "/agents/" + tf.id + "/try"
	resp := tf.postAs(t, alice, try+"/oauth", map[string]string{csrfField: tf.token, fieldOAuthScheme: "login",
		fieldOAuthClientID: "registry-console", fieldOAuthSecret: "console-secret", fieldOAuthScopes: "a2a"}, false)
	cb := get(resp.Header.Get("Location")).Header.Get("Location")

	// The card changes before the browser comes back.
	declared := map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer"}}
	for k, v := range scheme(collector.URL+"/authorize", collector.URL+"/token") {
		declared[k] = v
	}
	raw, err := json.Marshal(map[string]any{
		"name": "Peer", "description": "in-process agent, refreshed", "url": tf.peer.Interface.URL, "version": "2",
		"protocolVersion": "0.3.0", "preferredTransport": "JSONRPC", "capabilities": map[string]any{"streaming": true},
		"defaultInputModes": []string{"text/plain"}, "defaultOutputModes": []string{"text/plain"},
		"skills":          []any{map[string]any{"id": "echo", "name": "Echo", "description": "echoes", "tags": []string{"t"}}},
		"securitySchemes": declared, "security": []any{map[string]any{"bearer": []string{}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	tf.upsert(t, "https://peer.example/.well-known/agent-card.json", raw, t0.Add(time.Minute))

	if resp := get(cb); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("callback: %d, want the sign-in to finish at the server it started with", resp.StatusCode)
	}
	if collected != 0 || as.Exchanged() != 1 {
		t.Errorf("the refreshed card's token URL got %d requests, the original %d exchanges; want 0 and 1", collected, as.Exchanged())
	}
}

// TestTryItOAuthIssuer: a scheme naming its issuer's RFC 8414 metadata,
// which promises iss (RFC 9207): a callback whose iss is another issuer's,
// or that lacks one, is refused before its code goes anywhere; the honest
// one signs in. The metadata is read once per sign-in, as it starts.
func TestTryItOAuthIssuer(t *testing.T) {
	as := proxytest.StartAuthServer(t, "registry-console", "console-secret", tryToken)
	as.SendIss(true)
	tf := newTryFixtureWith(t, Options{Authorizer: headerAuth{}, Principal: callerOf}, map[string]any{
		"login": map[string]any{"type": "oauth2", "oauth2MetadataUrl": as.MetadataURL, "flows": map[string]any{"authorizationCode": map[string]any{
			"authorizationUrl": as.AuthorizeURL, "tokenUrl": as.TokenURL, "scopes": map[string]string{"a2a": "talk"}}}},
	})
	const alice = "alice:tester"
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(target string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, target, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set(testCaller, alice)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	try := "/agents/" + tf.id + "/try"
	signIn := func() *url.URL {
		t.Helper()
		resp := tf.postAs(t, alice, try+"/oauth", map[string]string{csrfField: tf.token, fieldOAuthScheme: "login",
			fieldOAuthClientID: "registry-console", fieldOAuthSecret: "console-secret", fieldOAuthScopes: "a2a"}, false)
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("start: %d", resp.StatusCode)
		}
		cb, err := url.Parse(get(resp.Header.Get("Location")).Header.Get("Location"))
		if err != nil || cb.Query().Get("iss") != as.Issuer {
			t.Fatalf("callback %v without the issuer's iss (%v)", cb, err)
		}
		return cb
	}
	for _, tamper := range []func(q url.Values){
		func(q url.Values) { q.Set("iss", "https://attacker.example") },
		func(q url.Values) { q.Del("iss") },
	} {
		cb := signIn()
		q := cb.Query()
		tamper(q)
		cb.RawQuery = q.Encode()
		if resp := get(cb.String()); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("callback %s: %d, want 400", cb.RawQuery, resp.StatusCode)
		}
	}
	if as.Exchanged() != 0 {
		t.Fatalf("%d codes exchanged after refused callbacks", as.Exchanged())
	}
	if resp := get(signIn().String()); resp.StatusCode != http.StatusSeeOther || as.Exchanged() != 1 {
		t.Errorf("honest callback: %d, %d exchanges; want 303 and 1", resp.StatusCode, as.Exchanged())
	}
	if n := as.MetadataReads(); n != 3 {
		t.Errorf("metadata read %d times for 3 sign-ins, want 3 (once each, as it starts)", n)
	}
}
