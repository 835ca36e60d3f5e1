package proxy

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/safehttp"
)

// Credentials are what the caller offers for the card's security schemes,
// for one call. At most one kind is set.
type Credentials struct {
	Bearer string
	// APIKey goes where the card's apiKey scheme says: header, query or
	// cookie, under the scheme's name.
	APIKey                  string
	Basic                   *Basic
	OAuth2ClientCredentials *ClientCredentials
}

// Basic is an HTTP Basic user and password (RFC 7617).
type Basic struct {
	Username, Password string
}

// ClientCredentials is an OAuth 2.0 client credentials grant (RFC 6749
// §4.4), exchanged for a token at the card's token URL.
type ClientCredentials struct {
	ClientID, ClientSecret string
	Scopes                 []string
}

// Empty tells whether no credential is set.
func (c Credentials) Empty() bool {
	return c.Bearer == "" && c.APIKey == "" && c.Basic == nil && c.OAuth2ClientCredentials == nil
}

// secrets lists the values a transcript or error must never show.
func (c Credentials) secrets() []string {
	var s []string
	add := func(v string) {
		if len(v) >= 4 {
			s = append(s, v)
		}
	}
	add(c.Bearer)
	add(c.APIKey)
	if c.Basic != nil {
		add(c.Basic.Password)
		add(base64.StdEncoding.EncodeToString([]byte(c.Basic.Username + ":" + c.Basic.Password)))
	}
	if c.OAuth2ClientCredentials != nil {
		add(c.OAuth2ClientCredentials.ClientSecret)
	}
	return s
}

// auth is credentials resolved against the card: what to add to each
// request.
type auth struct {
	// scheme is the card's scheme the credentials satisfy ("" for none).
	scheme  string
	headers http.Header
	query   map[string]string
	secrets []string
	// red redacts secrets; built once they are final (a client
	// credentials token joins them after the grant).
	red *redactor
}

// resolve matches the credentials to a scheme the card declares and, for
// client credentials, fetches the token from the scheme's token URL
// through the safe client. It refuses credentials the card never asks
// for: sending a bearer token to an agent that declares only API keys
// hands a secret to a party that said it had no use for it.
func (p *Proxy) resolve(ctx context.Context, c *card.Card, cr Credentials) (*auth, error) {
	a := &auth{headers: http.Header{}, query: map[string]string{}, secrets: cr.secrets()}
	if cr.Empty() {
		return a, nil
	}
	kinds := 0
	for _, set := range []bool{cr.Bearer != "", cr.APIKey != "", cr.Basic != nil, cr.OAuth2ClientCredentials != nil} {
		if set {
			kinds++
		}
	}
	if kinds > 1 {
		return nil, fmt.Errorf("%w: give one kind of credential", ErrCredentials)
	}
	find := func(ok func(card.SecurityScheme) bool) (card.SecurityScheme, bool) {
		i := slices.IndexFunc(c.SecuritySchemes, ok)
		if i < 0 {
			return card.SecurityScheme{}, false
		}
		return c.SecuritySchemes[i], true
	}
	switch {
	case cr.Bearer != "":
		// RFC 6750 bearer tokens: an http bearer scheme, or the access
		// token of an oauth2 or openIdConnect scheme.
		s, ok := find(func(s card.SecurityScheme) bool {
			return (s.Type == card.SchemeHTTP && strings.EqualFold(s.Scheme, "bearer")) ||
				s.Type == card.SchemeOAuth2 || s.Type == card.SchemeOpenIDConnect
		})
		if !ok {
			return nil, fmt.Errorf("%w: the card declares no bearer, oauth2 or openIdConnect scheme", ErrCredentials)
		}
		a.scheme = s.Name
		a.headers.Set("Authorization", "Bearer "+cr.Bearer)
	case cr.APIKey != "":
		s, ok := find(func(s card.SecurityScheme) bool { return s.Type == card.SchemeAPIKey })
		if !ok {
			return nil, fmt.Errorf("%w: the card declares no apiKey scheme", ErrCredentials)
		}
		if s.ParamName == "" {
			return nil, fmt.Errorf("%w: apiKey scheme %s names no parameter", ErrCredentials, s.Name)
		}
		a.scheme = s.Name
		switch strings.ToLower(s.In) {
		case "header":
			a.headers.Set(s.ParamName, cr.APIKey)
		case "query":
			a.query[s.ParamName] = cr.APIKey
		case "cookie":
			a.headers.Set("Cookie", (&http.Cookie{Name: s.ParamName, Value: cr.APIKey}).String())
		default:
			return nil, fmt.Errorf("%w: apiKey scheme %s sends the key in %q, which is not header, query or cookie", ErrCredentials, s.Name, s.In)
		}
	case cr.Basic != nil:
		s, ok := find(func(s card.SecurityScheme) bool {
			return s.Type == card.SchemeHTTP && strings.EqualFold(s.Scheme, "basic")
		})
		if !ok {
			return nil, fmt.Errorf("%w: the card declares no http basic scheme", ErrCredentials)
		}
		a.scheme = s.Name
		a.headers.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(cr.Basic.Username+":"+cr.Basic.Password)))
	case cr.OAuth2ClientCredentials != nil:
		cc := cr.OAuth2ClientCredentials
		if cc.ClientID == "" || cc.ClientSecret == "" {
			return nil, fmt.Errorf("%w: client_id and client_secret are required", ErrCredentials)
		}
		var tokenURL, name string
		for _, s := range c.SecuritySchemes {
			if s.Type != card.SchemeOAuth2 {
				continue
			}
			for _, f := range s.Flows {
				if f.Name == "clientCredentials" && f.TokenURL != "" && tokenURL == "" {
					tokenURL, name = f.TokenURL, s.Name
				}
			}
		}
		if tokenURL == "" {
			return nil, fmt.Errorf("%w: the card declares no oauth2 clientCredentials flow with a token URL", ErrCredentials)
		}
		tok, err := p.clientCredentialsToken(ctx, tokenURL, cc)
		if err != nil {
			return nil, err
		}
		a.scheme = name
		a.secrets = append(a.secrets, tok)
		a.headers.Set("Authorization", "Bearer "+tok)
	}
	a.red = newRedactor(a.secrets)
	return a, nil
}

// clientCredentialsToken runs the grant against the card's token URL over
// the safe client. Its errors carry the status only: a token endpoint's
// error body (which x/oauth2 puts in its error text) may echo what it was
// sent.
func (p *Proxy) clientCredentialsToken(ctx context.Context, tokenURL string, cc *ClientCredentials) (string, error) {
	hc := p.client.HTTPClient()
	hc.Timeout = 0 // the run's context bounds it
	ctx = context.WithValue(ctx, oauth2.HTTPClient, hc)
	cfg := clientcredentials.Config{ClientID: cc.ClientID, ClientSecret: cc.ClientSecret, TokenURL: tokenURL, Scopes: cc.Scopes}
	tok, err := cfg.Token(ctx)
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.Response != nil {
			return "", fmt.Errorf("%w: %s answered HTTP %d", ErrTokenRequest, tokenURL, re.Response.StatusCode)
		}
		if ctx.Err() != nil {
			return "", fmt.Errorf("%w: %w", ErrTokenRequest, ctx.Err())
		}
		if errors.Is(err, safehttp.ErrSelf) {
			return "", fmt.Errorf("%w: %s: %w", ErrTokenRequest, tokenURL, ErrSelf)
		}
		return "", fmt.Errorf("%w: %s could not be reached", ErrTokenRequest, tokenURL)
	}
	if tok.AccessToken == "" {
		return "", fmt.Errorf("%w: %s returned no access token", ErrTokenRequest, tokenURL)
	}
	return tok.AccessToken, nil
}

// scrub replaces every secret in s, in every form redact.go lists. An
// agent may echo a header back in an error or a message; the transcript
// must not carry it.
func (a *auth) scrub(s string) string {
	if a == nil {
		return s
	}
	return a.red.String(s)
}

// scrubJSON redacts the decoded strings of the JSON value b (redact.go).
func (a *auth) scrubJSON(b []byte) []byte {
	if a == nil {
		return b
	}
	return a.red.JSON(b)
}

// roundTripper adds query-string credentials to HTTP requests; headers go
// as SDK service parameters (see interceptor), which every binding
// carries.
type roundTripper struct {
	base  http.RoundTripper
	query map[string]string
}

func (t *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.query) == 0 {
		return t.base.RoundTrip(req)
	}
	req = req.Clone(req.Context())
	q := req.URL.Query()
	for k, v := range t.query {
		q.Set(k, v)
	}
	req.URL.RawQuery = q.Encode()
	return t.base.RoundTrip(req)
}
