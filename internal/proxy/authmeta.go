package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/a2aregistry/registry/internal/safehttp"
)

// Bounds of fetching a scheme's authorization server metadata: it is
// fetched once per sign-in, while the tester waits for the redirect.
const (
	metadataTimeout  = 10 * time.Second
	maxMetadataBytes = 64 << 10
)

// authServerMetadata is the part of RFC 8414 §2 authorization server
// metadata a sign-in relies on.
type authServerMetadata struct {
	Issuer                string `json:"issuer"`
	AuthorizationEndpoint string `json:"authorization_endpoint"`
	TokenEndpoint         string `json:"token_endpoint"`
	// IssParameter is RFC 9207 §3's
	// authorization_response_iss_parameter_supported: every
	// authorization response carries iss.
	IssParameter bool `json:"authorization_response_iss_parameter_supported"`
}

// fetchMetadata reads the authorization server metadata at rawURL
// through the safe client (no redirect followed: RFC 8414 §3.3 binds the
// document to the URL it was read from) and holds it to RFC 8414 §3.3:
// rawURL must be a well-known URL of the issuer the document names, so
// the issuer is the server at rawURL, whoever wrote the card.
func (p *Proxy) fetchMetadata(ctx context.Context, rawURL string) (authServerMetadata, error) {
	var md authServerMetadata
	ctx, cancel := context.WithTimeout(ctx, metadataTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return md, fmt.Errorf("%w: oauth2MetadataUrl %q is not a URL", ErrCredentials, rawURL)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return md, fmt.Errorf("%w: the authorization server metadata at %s did not answer within %s", ErrCredentials, rawURL, metadataTimeout)
		}
		return md, fmt.Errorf("%w: the authorization server metadata could not be read: %s", ErrCredentials, safehttp.Describe(hostOf(rawURL), err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return md, fmt.Errorf("%w: the authorization server metadata at %s answered HTTP %d", ErrCredentials, rawURL, resp.StatusCode)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" {
		return md, fmt.Errorf("%w: the authorization server metadata at %s is not application/json", ErrCredentials, rawURL)
	}
	body, err := safehttp.ReadBody(resp, maxMetadataBytes)
	if err != nil {
		return md, fmt.Errorf("%w: the authorization server metadata at %s could not be read (at most %d bytes)", ErrCredentials, rawURL, maxMetadataBytes)
	}
	if err := json.Unmarshal(body, &md); err != nil {
		return md, fmt.Errorf("%w: the authorization server metadata at %s is not a JSON object of RFC 8414 metadata", ErrCredentials, rawURL)
	}
	if !issuerIdentifier(md.Issuer) {
		return md, fmt.Errorf("%w: the authorization server metadata at %s names no valid issuer (RFC 8414 §2)", ErrCredentials, rawURL)
	}
	if !wellKnownOf(md.Issuer, rawURL) {
		return md, fmt.Errorf("%w: the authorization server metadata at %s names issuer %s, which does not publish it there (RFC 8414 §3.3)", ErrCredentials, rawURL, md.Issuer)
	}
	return md, nil
}

// issuerIdentifier tells whether s is an issuer identifier: an http(s)
// URL with a host and no query or fragment (RFC 8414 §2; https is the
// card lint's to demand, as for every other URL of a scheme).
func issuerIdentifier(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" && u.User == nil &&
		u.RawQuery == "" && !u.ForceQuery && u.Fragment == "" && !strings.Contains(s, "#")
}

// wellKnownOf tells whether metadataURL is where issuer publishes its
// metadata: the RFC 8414 §3.1 well-known URI inserted between host and
// path (oauth-authorization-server, or openid-configuration as §5
// allows), or OpenID Connect Discovery 1.0 §4's path appended after the
// issuer's.
func wellKnownOf(issuer, metadataURL string) bool {
	u, err := url.Parse(issuer)
	if err != nil {
		return false
	}
	origin, path := u.Scheme+"://"+u.Host, strings.TrimSuffix(u.EscapedPath(), "/")
	for _, want := range []string{
		origin + "/.well-known/oauth-authorization-server" + path,
		origin + "/.well-known/openid-configuration" + path,
		origin + path + "/.well-known/openid-configuration",
	} {
		if metadataURL == want {
			return true
		}
	}
	return false
}
