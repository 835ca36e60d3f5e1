package proxy

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
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

// Grant is a sign-in bound to one authorization server, decided when it
// starts and kept with it until the callback: the code goes to the token
// URL decided here, whatever the card or the server's metadata say by
// then. Its zero value is no grant.
type Grant struct {
	// URL is where to send the tester's browser: the authorization URL
	// with the state and the PKCE challenge (S256).
	URL string
	// TokenHost is the host that will receive the code and the client
	// secret.
	TokenHost string
	// Basis says why TokenHost may receive the code: BasisMetadata,
	// BasisSameOrigin or BasisAllowList.
	Basis string
	// Issuer is the issuer identifier an authorization response's iss
	// must equal (RFC 9207 §2.4); empty when no metadata names it.
	Issuer string
	// IssRequired: the issuer's metadata promises iss in every
	// authorization response, so one without it is refused.
	IssRequired bool

	cfg *oauth2.Config
	// authOrigin is the authorization URL's origin, which an iss must
	// name when no metadata gives the issuer.
	authOrigin string
}

// Why a token URL may receive a code (Grant.Basis).
const (
	// BasisMetadata: the scheme's oauth2MetadataUrl is its issuer's
	// RFC 8414 metadata, which names both of the card's URLs.
	BasisMetadata = "metadata"
	// BasisSameOrigin: no metadata; the token URL is on the
	// authorization URL's origin.
	BasisSameOrigin = "same-origin"
	// BasisAllowList: no metadata; the token URL's host is one the
	// operator listed (--oauth-token-hosts).
	BasisAllowList = "allow-list"
)

// Callback is what an authorization response brought back (RFC 6749
// §4.1.2, RFC 9207 §2).
type Callback struct {
	Code string
	// Iss is the response's iss; HasIss tells whether it carried one.
	Iss    string
	HasIss bool
}

// CheckIssuer holds the response to RFC 9207 §2.4: an iss must equal the
// issuer the sign-in started with (without metadata, it must at least
// name the authorization URL's origin), and one the issuer promised must
// be there. A response refused here came from, or was meant for, another
// server: its code must go nowhere.
func (g Grant) CheckIssuer(cb Callback) error {
	switch {
	case !cb.HasIss && g.IssRequired:
		return fmt.Errorf("%w: the authorization response lacks the iss its issuer %s promises (RFC 9207 §2.4)", ErrIssuer, g.Issuer)
	case !cb.HasIss:
		return nil
	case g.Issuer != "" && cb.Iss != g.Issuer:
		return fmt.Errorf("%w: the authorization response comes from issuer %q, not %s (RFC 9207 §2.4)", ErrIssuer, cb.Iss, g.Issuer)
	case g.Issuer == "" && originOf(cb.Iss) != g.authOrigin:
		return fmt.Errorf("%w: the authorization response comes from issuer %q, not from %s (RFC 9207 §2.4)", ErrIssuer, cb.Iss, g.authOrigin)
	}
	return nil
}

// originOf is rawURL's scheme://host, lower case; "" when it is not an
// http(s) URL with a host.
func originOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return ""
	}
	return strings.ToLower(u.Scheme + "://" + u.Host)
}

// bind decides which server the scheme's code may go to (docs/security.md
// states the order). The code, and the client secret with it, go to the
// token URL: unless that is the server the tester signed in at, a card
// could name a real authorization server and a token URL of its own, and
// collect a code that server issued (the mix-up attacks of RFC 9207 §1).
//  1. The scheme names oauth2MetadataUrl: that issuer's RFC 8414
//     metadata decides, and nothing else can overrule it. Both of the
//     card's URLs must be the endpoints it names, and the authorization
//     endpoint must be on the issuer's origin unless the issuer sends iss
//     (then the callback proves who issued the code).
//  2. Else the token URL on the authorization URL's origin.
//  3. Else a token URL on a host the operator listed.
func (p *Proxy) bind(ctx context.Context, s card.SecurityScheme, f card.OAuthFlow) (Grant, error) {
	for _, raw := range []string{f.AuthorizationURL, f.TokenURL} {
		if originOf(raw) == "" {
			return Grant{}, fmt.Errorf("%w: scheme %s declares %q, which is not an http(s) URL", ErrCredentials, s.Name, raw)
		}
	}
	authOrigin, tokenOrigin := originOf(f.AuthorizationURL), originOf(f.TokenURL)
	g := Grant{authOrigin: authOrigin}
	tu, _ := url.Parse(f.TokenURL)
	g.TokenHost = tu.Host
	switch {
	case s.OAuth2MetadataURL != "":
		md, err := p.fetchMetadata(ctx, s.OAuth2MetadataURL)
		if err != nil {
			return Grant{}, fmt.Errorf("scheme %s: %w", s.Name, err)
		}
		if md.AuthorizationEndpoint != f.AuthorizationURL || md.TokenEndpoint != f.TokenURL {
			return Grant{}, fmt.Errorf("%w: scheme %s declares authorizationUrl %s and tokenUrl %s, but its issuer %s names %q and %q",
				ErrCredentials, s.Name, f.AuthorizationURL, f.TokenURL, md.Issuer, md.AuthorizationEndpoint, md.TokenEndpoint)
		}
		if authOrigin != originOf(md.Issuer) && !md.IssParameter {
			return Grant{}, fmt.Errorf("%w: scheme %s signs in at %s, not at its issuer %s, which does not send iss to prove it issued the code (RFC 9207)",
				ErrCredentials, s.Name, authOrigin, md.Issuer)
		}
		g.Basis, g.Issuer, g.IssRequired = BasisMetadata, md.Issuer, md.IssParameter
	case authOrigin == tokenOrigin:
		g.Basis = BasisSameOrigin
	case slices.Contains(p.opts.TokenHosts, strings.ToLower(tu.Host)):
		g.Basis = BasisAllowList
	default:
		return Grant{}, fmt.Errorf("%w: scheme %s sends the code to %s, not to the server that issues it (%s); no oauth2MetadataUrl vouches for it and the operator did not list it in --oauth-token-hosts",
			ErrCredentials, s.Name, tokenOrigin, authOrigin)
	}
	return g, nil
}

// StartAuthCode begins the grant of ac against the card: it decides
// where the code may go (fetching the scheme's metadata when it names
// one) and returns the grant to keep until the callback.
func (p *Proxy) StartAuthCode(ctx context.Context, c *card.Card, ac AuthCode, state, verifier string) (Grant, error) {
	if ac.ClientID == "" {
		return Grant{}, fmt.Errorf("%w: a client id is required", ErrCredentials)
	}
	for _, s := range c.SecuritySchemes {
		if s.Name != ac.Scheme {
			continue
		}
		f, ok := authCodeFlow(s)
		if !ok {
			break
		}
		g, err := p.bind(ctx, s, f)
		if err != nil {
			return Grant{}, err
		}
		g.cfg = &oauth2.Config{
			ClientID: ac.ClientID, ClientSecret: ac.ClientSecret, Scopes: ac.Scopes, RedirectURL: ac.RedirectURL,
			Endpoint: oauth2.Endpoint{AuthURL: f.AuthorizationURL, TokenURL: f.TokenURL},
		}
		g.URL = g.cfg.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier))
		return g, nil
	}
	return Grant{}, fmt.Errorf("%w: the card declares no oauth2 scheme %q with an authorizationCode flow", ErrCredentials, ac.Scheme)
}

// ExchangeCode trades the callback's code for an access token at the
// grant's token URL, through the safe client, proving the PKCE verifier,
// once the callback passed CheckIssuer. Its errors carry the status only:
// a token endpoint's error body may echo what it was sent.
func (p *Proxy) ExchangeCode(ctx context.Context, g Grant, cb Callback, verifier string) (string, error) {
	if g.cfg == nil {
		return "", fmt.Errorf("%w: no sign-in was started", ErrCredentials)
	}
	if err := g.CheckIssuer(cb); err != nil {
		return "", err
	}
	cfg := g.cfg
	hc := p.client.HTTPClient()
	ctx, cancel := context.WithTimeout(ctx, tokenTimeout)
	defer cancel()
	tok, err := cfg.Exchange(context.WithValue(ctx, oauth2.HTTPClient, hc), cb.Code, oauth2.VerifierOption(verifier))
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
