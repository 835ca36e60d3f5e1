package verify

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/safehttp"
)

// Stable security-audit finding codes. Never rename one.
const (
	// FindingNoSecurity: no security scheme and no requirement; anyone
	// who reaches the endpoint may call the agent. Warning.
	FindingNoSecurity = "no_security"
	// FindingInvalidScheme: a scheme lacks what its type needs (card lint
	// invalid_scheme). Error.
	FindingInvalidScheme = "invalid_scheme"
	// FindingUndeclaredScheme: a card or skill requirement names a scheme
	// securitySchemes does not declare. Error.
	FindingUndeclaredScheme = "undeclared_scheme"
	// FindingAPIKeyInQuery: an API key travels in the query string, where
	// proxies, server logs and Referer headers keep it. Warning.
	FindingAPIKeyInQuery = "api_key_in_query"
	// FindingBasicOverHTTP: HTTP Basic credentials (RFC 7617 §4: no
	// confidentiality) with a plain-http interface. Error.
	FindingBasicOverHTTP = "basic_over_http"
	// FindingCredentialsOverHTTP: a scheme other than Basic with a
	// plain-http interface, so tokens or keys cross the network in clear.
	// Warning.
	FindingCredentialsOverHTTP = "credentials_over_http"
	// FindingPlainHTTPInterface: an interface the card declares is plain
	// http (not https), whatever its security schemes: calls and answers
	// cross the network in clear and can be altered on the way. Reported
	// once per card, naming the first such interface; the fleet report's
	// plain-http count is this code's. Warning.
	FindingPlainHTTPInterface = "plain_http_interface"
	// FindingInsecureOAuthURL: an OAuth 2.0 endpoint or metadata URL that
	// is not https (RFC 6749 §3.1, §3.2 require TLS). Error.
	FindingInsecureOAuthURL = "insecure_oauth_url"
	// FindingDeprecatedFlow: the implicit or password grant, which the
	// OAuth 2.0 Security BCP (RFC 9700 §2.1.2, §2.4) says not to use.
	// Warning.
	FindingDeprecatedFlow = "deprecated_oauth_flow"
	// FindingInsecureOIDCURL: openIdConnectUrl is not https. Error.
	FindingInsecureOIDCURL = "insecure_oidc_url"
	// FindingOIDCUnreachable: the discovery document could not be
	// fetched. Warning.
	FindingOIDCUnreachable = "oidc_discovery_unreachable"
	// FindingOIDCNotDiscovery: the URL does not serve an OpenID Provider
	// metadata document (OIDC Discovery §3: issuer, authorization_endpoint,
	// jwks_uri, response_types_supported). Error.
	FindingOIDCNotDiscovery = "oidc_not_discovery"
	// FindingOIDCIssuerMismatch: the document's issuer is not the URL it
	// was fetched from minus /.well-known/openid-configuration; OIDC
	// Discovery §4.3 says such a document MUST NOT be used. Error.
	FindingOIDCIssuerMismatch = "oidc_issuer_mismatch"
)

const wellKnownOIDC = "/.well-known/openid-configuration"

// AuditSecurity checks the card's security schemes and requirements. With
// Options.FetchOIDC and a client it also fetches every openIdConnectUrl.
func (v *Verifier) AuditSecurity(ctx context.Context, c *card.Card) []Finding {
	out := []Finding{}
	add := func(code string, sev Severity, path, format string, args ...any) {
		out = append(out, Finding{Code: code, Severity: sev, Path: path, Message: fmt.Sprintf(format, args...)})
	}
	for _, f := range c.Findings {
		switch f.Code {
		case card.LintInvalidScheme:
			add(FindingInvalidScheme, Severity(f.Severity), f.Path, "%s", f.Message)
		case card.LintUndeclaredScheme:
			add(FindingUndeclaredScheme, SeverityError, f.Path, "%s", f.Message)
		}
	}
	// SecurityTypes, as the security_scheme facet: a requirement naming
	// an undeclared scheme (card or skill) is no anonymous access.
	if len(c.SecurityTypes()) == 0 && len(c.SecurityRequirements) == 0 {
		add(FindingNoSecurity, SeverityWarning, "$", "the card declares no security scheme: the agent accepts anonymous callers")
	}
	plainHTTP := ""
	for _, in := range c.Interfaces {
		if strings.HasPrefix(strings.ToLower(in.URL), "http://") {
			plainHTTP = in.URL
			break
		}
	}
	if plainHTTP != "" {
		add(FindingPlainHTTPInterface, SeverityWarning, "$", "the interface %s is plain http: calls and answers cross the network in clear", plainHTTP)
	}
	for _, s := range c.SecuritySchemes {
		switch s.Type {
		case card.SchemeAPIKey:
			if s.In == "query" {
				add(FindingAPIKeyInQuery, SeverityWarning, s.Path, "scheme %q sends the API key %q in the query string, where logs and Referer headers keep it", s.Name, s.ParamName)
			}
		case card.SchemeHTTP:
			if s.Scheme == "basic" && plainHTTP != "" {
				add(FindingBasicOverHTTP, SeverityError, s.Path, "scheme %q sends a Basic password, and the interface %s is plain http", s.Name, plainHTTP)
				continue
			}
		case card.SchemeOAuth2:
			if s.OAuth2MetadataURL != "" && !isHTTPS(s.OAuth2MetadataURL) {
				add(FindingInsecureOAuthURL, SeverityError, s.Path, "scheme %q: oauth2MetadataUrl %s is not https", s.Name, s.OAuth2MetadataURL)
			}
			for _, fl := range s.Flows {
				for _, u := range []string{fl.AuthorizationURL, fl.TokenURL, fl.RefreshURL, fl.DeviceAuthURL} {
					if u != "" && !isHTTPS(u) {
						add(FindingInsecureOAuthURL, SeverityError, s.Path+".flows."+fl.Name, "scheme %q, %s flow: %s is not https", s.Name, fl.Name, u)
					}
				}
				if fl.Name == "implicit" || fl.Name == "password" {
					add(FindingDeprecatedFlow, SeverityWarning, s.Path+".flows."+fl.Name, "scheme %q offers the %s grant, which RFC 9700 says not to use", s.Name, fl.Name)
				}
			}
		case card.SchemeOpenIDConnect:
			if s.OpenIDConnectURL == "" {
				break
			}
			if !isHTTPS(s.OpenIDConnectURL) {
				add(FindingInsecureOIDCURL, SeverityError, s.Path, "scheme %q: openIdConnectUrl %s is not https", s.Name, s.OpenIDConnectURL)
			}
			if v.opts.FetchOIDC && v.opts.Client != nil {
				if code, msg := v.checkOIDC(ctx, s.OpenIDConnectURL); code != "" {
					sev := SeverityError
					if code == FindingOIDCUnreachable {
						sev = SeverityWarning
					}
					add(code, sev, s.Path, "scheme %q: %s", s.Name, msg)
				}
			}
		}
		if plainHTTP != "" && s.Type != card.SchemeMutualTLS {
			add(FindingCredentialsOverHTTP, SeverityWarning, s.Path, "scheme %q credentials would cross the plain-http interface %s in clear", s.Name, plainHTTP)
		}
	}
	return out
}

func isHTTPS(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && u.Scheme == "https" && u.Host != ""
}

// checkOIDC fetches an OpenID Provider metadata document and checks that
// it is one and that its issuer is the one the URL names.
func (v *Verifier) checkOIDC(ctx context.Context, raw string) (string, string) {
	ctx, cancel := context.WithTimeout(ctx, v.opts.JWKSTimeout)
	defer cancel()
	resp, err := v.opts.Client.Get(ctx, raw)
	if err != nil {
		// Describe, not err: the finding is shown to anyone reading the
		// agent, and err names the address the host resolved to.
		return FindingOIDCUnreachable, fmt.Sprintf("fetching %s: %s", raw, safehttp.Describe(hostOf(raw), err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return FindingOIDCUnreachable, fmt.Sprintf("fetching %s: HTTP %d", raw, resp.StatusCode)
	}
	body, err := safehttp.ReadBody(resp, v.opts.MaxJWKSBytes)
	if err != nil {
		return FindingOIDCUnreachable, fmt.Sprintf("reading %s: %s", raw, safehttp.Describe(hostOf(raw), err))
	}
	doc, err := decodeStrict(body)
	m, ok := doc.(map[string]any)
	if err != nil || !ok {
		return FindingOIDCNotDiscovery, fmt.Sprintf("%s is not a JSON object", raw)
	}
	for _, k := range []string{"issuer", "authorization_endpoint", "jwks_uri", "response_types_supported"} {
		if x, ok := m[k]; !ok || x == nil {
			return FindingOIDCNotDiscovery, fmt.Sprintf("%s lacks %q, required of OpenID Provider metadata", raw, k)
		}
	}
	iss, _ := m["issuer"].(string)
	want := strings.TrimSuffix(raw, wellKnownOIDC)
	if want == raw {
		// Not a /.well-known URL: the issuer must at least be the same
		// origin, or anyone could point at someone else's provider.
		if origin(iss) != origin(raw) {
			return FindingOIDCIssuerMismatch, fmt.Sprintf("issuer %q is not on the origin of %s", iss, raw)
		}
		return "", ""
	}
	if strings.TrimSuffix(iss, "/") != strings.TrimSuffix(want, "/") {
		return FindingOIDCIssuerMismatch, fmt.Sprintf("issuer %q does not match %s (OIDC Discovery §4.3)", iss, want)
	}
	return "", ""
}
