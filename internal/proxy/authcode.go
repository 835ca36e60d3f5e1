package proxy

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/safehttp"
)

// tokenTimeout bounds a code exchange, which no run's context bounds.
const tokenTimeout = 30 * time.Second

// AuthCode is an OAuth 2.0 authorization-code grant with PKCE (RFC 6749
// §4.1, RFC 7636) against an oauth2 scheme of a card: the tester's
// browser signs in at the scheme's authorizationUrl and comes back to the
// registry with a code, which the registry exchanges at the scheme's
// tokenUrl through the safe client. The card names no client: the tester
// gives the client id (and secret, for a confidential client) the agent's
// owner registered for the registry's redirect URL.
type AuthCode struct {
	// Scheme is the card's scheme name.
	Scheme                 string
	ClientID, ClientSecret string
	Scopes                 []string
	// RedirectURL is the registry's callback, as registered with the
	// authorization server.
	RedirectURL string
}

// AuthCodeSchemes lists the card's oauth2 schemes that declare an
// authorizationCode flow with both URLs, and each one's scopes.
func AuthCodeSchemes(c *card.Card) map[string][]string {
	out := map[string][]string{}
	for _, s := range c.SecuritySchemes {
		if f, ok := authCodeFlow(s); ok {
			scopes := make([]string, 0, len(f.Scopes))
			for sc := range f.Scopes {
				scopes = append(scopes, sc)
			}
			out[s.Name] = scopes
		}
	}
	return out
}

func authCodeFlow(s card.SecurityScheme) (card.OAuthFlow, bool) {
	if s.Type != card.SchemeOAuth2 {
		return card.OAuthFlow{}, false
	}
	for _, f := range s.Flows {
		if f.Name == "authorizationCode" && f.AuthorizationURL != "" && f.TokenURL != "" {
			return f, true
		}
	}
	return card.OAuthFlow{}, false
}

// config is the grant's x/oauth2 configuration, from the card only.
func (ac AuthCode) config(c *card.Card) (*oauth2.Config, error) {
	if ac.ClientID == "" {
		return nil, fmt.Errorf("%w: a client id is required", ErrCredentials)
	}
	for _, s := range c.SecuritySchemes {
		if s.Name != ac.Scheme {
			continue
		}
		f, ok := authCodeFlow(s)
		if !ok {
			break
		}
		var origins []string
		for _, raw := range []string{f.AuthorizationURL, f.TokenURL} {
			u, err := url.Parse(raw)
			if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
				return nil, fmt.Errorf("%w: scheme %s declares %q, which is not an http(s) URL", ErrCredentials, s.Name, raw)
			}
			origins = append(origins, strings.ToLower(u.Scheme+"://"+u.Host))
		}
		// The code (and the client secret) go to the token URL: it must
		// be the server the tester signed in at, or a card could name a
		// real authorization server and a token URL of its own, and
		// collect a code that server issued (the mix-up attacks of RFC
		// 9207 §1). Without issuer metadata, that server is the
		// authorization URL's origin.
		if origins[0] != origins[1] {
			return nil, fmt.Errorf("%w: scheme %s sends the code to %s, not to the server that issues it (%s)", ErrCredentials, s.Name, origins[1], origins[0])
		}
		return &oauth2.Config{
			ClientID: ac.ClientID, ClientSecret: ac.ClientSecret, Scopes: ac.Scopes, RedirectURL: ac.RedirectURL,
			Endpoint: oauth2.Endpoint{AuthURL: f.AuthorizationURL, TokenURL: f.TokenURL},
		}, nil
	}
	return nil, fmt.Errorf("%w: the card declares no oauth2 scheme %q with an authorizationCode flow", ErrCredentials, ac.Scheme)
}

// AuthCodeURL is where to send the tester's browser: the scheme's
// authorization URL with the state and the PKCE challenge (S256) of
// verifier.
func (p *Proxy) AuthCodeURL(c *card.Card, ac AuthCode, state, verifier string) (string, error) {
	cfg, err := ac.config(c)
	if err != nil {
		return "", err
	}
	return cfg.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier)), nil
}

// ExchangeCode trades the code for an access token at the scheme's token
// URL, through the safe client, proving the PKCE verifier. Its errors
// carry the status only: a token endpoint's error body may echo what it
// was sent.
func (p *Proxy) ExchangeCode(ctx context.Context, c *card.Card, ac AuthCode, code, verifier string) (string, error) {
	cfg, err := ac.config(c)
	if err != nil {
		return "", err
	}
	hc := p.client.HTTPClient()
	ctx, cancel := context.WithTimeout(ctx, tokenTimeout)
	defer cancel()
	tok, err := cfg.Exchange(context.WithValue(ctx, oauth2.HTTPClient, hc), code, oauth2.VerifierOption(verifier))
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.Response != nil {
			return "", fmt.Errorf("%w: %s answered HTTP %d", ErrTokenRequest, cfg.Endpoint.TokenURL, re.Response.StatusCode)
		}
		if errors.Is(err, safehttp.ErrSelf) {
			return "", fmt.Errorf("%w: %s: %w", ErrTokenRequest, cfg.Endpoint.TokenURL, ErrSelf)
		}
		return "", fmt.Errorf("%w: %s could not be reached", ErrTokenRequest, cfg.Endpoint.TokenURL)
	}
	if tok.AccessToken == "" || !strings.EqualFold(tok.Type(), "bearer") {
		return "", fmt.Errorf("%w: %s returned no bearer access token", ErrTokenRequest, cfg.Endpoint.TokenURL)
	}
	return tok.AccessToken, nil
}
