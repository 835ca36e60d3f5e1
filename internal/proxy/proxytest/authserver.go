package proxytest

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
)

// AuthServer is an in-process OAuth 2.0 authorization server of the
// authorization-code grant with PKCE (RFC 6749 §4.1, RFC 7636 S256 only),
// for one client. Its authorize endpoint signs the browser in at once (no
// page) and redirects back with a code; its token endpoint gives Token for
// a code whose verifier, client and redirect URI match.
type AuthServer struct {
	AuthorizeURL, TokenURL string
	// Issuer is its issuer identifier (its origin) and MetadataURL where
	// its RFC 8414 metadata is served (naming both endpoints).
	Issuer, MetadataURL string
	// Token is the access token it issues.
	Token string

	clientID, secret string
	mu               sync.Mutex
	codes            map[string]grant
	exchanged        int
	sendIss          bool
	metadataReads    int
}

// SendIss makes the authorization responses carry iss, and the metadata
// promise it (RFC 9207), or not.
func (as *AuthServer) SendIss(on bool) {
	as.mu.Lock()
	defer as.mu.Unlock()
	as.sendIss = on
}

// MetadataReads counts the requests for its metadata.
func (as *AuthServer) MetadataReads() int {
	as.mu.Lock()
	defer as.mu.Unlock()
	return as.metadataReads
}

// Exchanged counts the codes traded for a token.
func (as *AuthServer) Exchanged() int {
	as.mu.Lock()
	defer as.mu.Unlock()
	return as.exchanged
}

type grant struct{ challenge, redirect string }

// StartAuthServer serves an AuthServer for the client id and secret.
func StartAuthServer(t testing.TB, clientID, secret, token string) *AuthServer {
	t.Helper()
	as := &AuthServer{Token: token, clientID: clientID, secret: secret, codes: map[string]grant{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /authorize", as.authorize)
	mux.HandleFunc("POST /token", as.token)
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", as.metadata)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	as.AuthorizeURL, as.TokenURL = srv.URL+"/authorize", srv.URL+"/token"
	as.Issuer, as.MetadataURL = srv.URL, srv.URL+"/.well-known/oauth-authorization-server"
	return as
}

func (as *AuthServer) metadata(w http.ResponseWriter, _ *http.Request) {
	as.mu.Lock()
	as.metadataReads++
	iss := as.sendIss
	as.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"issuer": as.Issuer, "authorization_endpoint": as.AuthorizeURL,
		"token_endpoint": as.TokenURL, "response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"},
		"authorization_response_iss_parameter_supported": iss})
}

func (as *AuthServer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	redirect, err := url.Parse(q.Get("redirect_uri"))
	if err != nil || q.Get("response_type") != "code" || q.Get("client_id") != as.clientID ||
		q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("state") == "" {
		http.Error(w, "bad authorization request", http.StatusBadRequest)
		return
	}
	code := rand.Text()
	as.mu.Lock()
	as.codes[code] = grant{challenge: q.Get("code_challenge"), redirect: redirect.String()}
	iss := as.sendIss
	as.mu.Unlock()
	back := redirect.Query()
	back.Set("code", code)
	back.Set("state", q.Get("state"))
	if iss {
		back.Set("iss", as.Issuer)
	}
	redirect.RawQuery = back.Encode()
	http.Redirect(w, r, redirect.String(), http.StatusFound)
}

func (as *AuthServer) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	code := r.PostForm.Get("code")
	as.mu.Lock()
	g, known := as.codes[code]
	delete(as.codes, code) // a code serves once (RFC 6749 §4.1.2)
	as.mu.Unlock()
	sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
	w.Header().Set("Content-Type", "application/json")
	if r.PostForm.Get("grant_type") != "authorization_code" || id != as.clientID || secret != as.secret || !known ||
		g.redirect != r.PostForm.Get("redirect_uri") || base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant"})
		return
	}
	as.mu.Lock()
	as.exchanged++
	as.mu.Unlock()
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": as.Token, "token_type": "Bearer", "expires_in": 3600})
}
