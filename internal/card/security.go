package card

import (
	"slices"
	"strings"
)

// protoSchemeKeys are v1.0's proto oneof members, in the order a2a-go
// checks them, with the type each maps onto.
var protoSchemeKeys = []struct{ key, typ string }{
	{"apiKeySecurityScheme", SchemeAPIKey},
	{"httpAuthSecurityScheme", SchemeHTTP},
	{"oauth2SecurityScheme", SchemeOAuth2},
	{"openIdConnectSecurityScheme", SchemeOpenIDConnect},
	{"mtlsSecurityScheme", SchemeMutualTLS},
}

// oauthFlowNames in OpenAPI order, deviceCode (v1.0) last.
var oauthFlowNames = []string{"authorizationCode", "clientCredentials", "implicit", "password", "deviceCode"}

// schemes reads `securitySchemes` in either style: OpenAPI (`"type":
// "apiKey"`, v0.2–v0.3) or the v1.0 proto oneof (`"apiKeySecurityScheme":
// {…}`). A scheme carrying both (a2a-go's a2av0 compatibility card) is read
// by its `type`. Every name is recorded in declared, even when the scheme is
// invalid, so requirements naming it are not reported twice.
func (p *parser) schemes(top map[string]any, declared map[string]bool) []SecurityScheme {
	o, ok := p.object(top, "securitySchemes", "$")
	out := []SecurityScheme{}
	if !ok || !p.limit("$.securitySchemes", len(o), p.lim.MaxSchemes, "security schemes") {
		return out
	}
	names := make([]string, 0, len(o))
	for name := range o {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		declared[name] = true
		path := pathKey("$.securitySchemes", name)
		v := o[name]
		so, ok := v.(map[string]any)
		if !ok {
			p.wrongType(path, "an object", v)
			continue
		}
		out = append(out, p.scheme(name, so, path))
	}
	return out
}

func (p *parser) scheme(name string, o map[string]any, path string) SecurityScheme {
	s := SecurityScheme{Name: name, Path: path, Description: p.optStr(o, "description", path)}
	if t, ok := p.str(o, "type", path); ok {
		s.Type = t
		switch t {
		case SchemeAPIKey:
			p.apiKey(&s, o, path, "in")
		case SchemeHTTP:
			p.httpAuth(&s, o, path)
		case SchemeOAuth2:
			p.oauth2(&s, o, path)
		case SchemeOpenIDConnect:
			p.oidc(&s, o, path)
		case SchemeMutualTLS:
		default:
			p.add(LintInvalidScheme, SeverityError, path+".type",
				"%s.type %q is not apiKey, http, oauth2, openIdConnect or mutualTLS", path, t)
		}
		return s
	}

	var found []string
	for _, k := range protoSchemeKeys {
		if _, ok := field(o, k.key); ok {
			found = append(found, k.key)
		}
	}
	switch len(found) {
	case 0:
		p.add(LintInvalidScheme, SeverityError, path,
			"%s has neither a type nor one of apiKeySecurityScheme, httpAuthSecurityScheme, oauth2SecurityScheme, openIdConnectSecurityScheme, mtlsSecurityScheme", path)
		return s
	case 1:
	default:
		p.add(LintInvalidScheme, SeverityError, path,
			"%s declares %d scheme types (%s); exactly one is allowed, the first is used", path, len(found), strings.Join(found, ", "))
	}
	for _, k := range protoSchemeKeys {
		if k.key != found[0] {
			continue
		}
		s.Type = k.typ
		inner, ok := p.object(o, k.key, path)
		if !ok {
			return s
		}
		ipath := path + "." + k.key
		if d := p.optStr(inner, "description", ipath); d != "" {
			s.Description = d
		}
		switch k.typ {
		case SchemeAPIKey:
			p.apiKey(&s, inner, ipath, "location")
		case SchemeHTTP:
			p.httpAuth(&s, inner, ipath)
		case SchemeOAuth2:
			p.oauth2(&s, inner, ipath)
		case SchemeOpenIDConnect:
			p.oidc(&s, inner, ipath)
		}
	}
	return s
}

// apiKey reads an API key scheme; the location field is `in` in OpenAPI and
// `location` in v1.0.
func (p *parser) apiKey(s *SecurityScheme, o map[string]any, path, locKey string) {
	s.ParamName, _ = p.str(o, "name", path)
	loc, _ := p.str(o, locKey, path)
	s.In = strings.ToLower(strings.TrimSpace(loc))
	if strings.TrimSpace(s.ParamName) == "" {
		p.add(LintInvalidScheme, SeverityError, path+".name", "%s.name is required (%s): clients cannot know where to put the key", path, p.cite(path))
	}
	switch s.In {
	case "header", "query", "cookie":
	default:
		p.add(LintInvalidScheme, SeverityError, pathKey(path, locKey),
			"%s %q must be header, query or cookie", pathKey(path, locKey), loc)
	}
}

func (p *parser) httpAuth(s *SecurityScheme, o map[string]any, path string) {
	scheme, _ := p.str(o, "scheme", path)
	// RFC 9110 §11.1: auth-scheme names are case-insensitive.
	s.Scheme = strings.ToLower(strings.TrimSpace(scheme))
	s.BearerFormat = p.optStr(o, "bearerFormat", path)
	if s.Scheme == "" {
		p.add(LintInvalidScheme, SeverityError, path+".scheme", "%s.scheme is required (%s; e.g. bearer, basic)", path, p.cite(path))
	}
}

func (p *parser) oidc(s *SecurityScheme, o map[string]any, path string) {
	u, _ := p.str(o, "openIdConnectUrl", path)
	if strings.TrimSpace(u) == "" {
		p.add(LintInvalidScheme, SeverityError, path+".openIdConnectUrl", "%s.openIdConnectUrl is required (%s)", path, p.cite(path))
		return
	}
	if p.checkURL(u, path+".openIdConnectUrl", SeverityError, "OpenID Connect Discovery 1.0 §4 requires TLS for the configuration document") {
		s.OpenIDConnectURL = u
	}
}

func (p *parser) oauth2(s *SecurityScheme, o map[string]any, path string) {
	if u, ok := p.str(o, "oauth2MetadataUrl", path); ok && strings.TrimSpace(u) != "" && p.checkURL(u, path+".oauth2MetadataUrl", SeverityError, "RFC 8414 §3 requires TLS for authorization server metadata") {
		s.OAuth2MetadataURL = u
	}
	flows, ok := p.object(o, "flows", path)
	if !ok {
		p.add(LintInvalidScheme, SeverityError, path+".flows", "%s.flows is required for an oauth2 scheme (%s)", path, p.cite(path))
		return
	}
	for name := range flows {
		if !slices.Contains(oauthFlowNames, name) {
			p.add(LintInvalidScheme, SeverityWarning, pathKey(path+".flows", name),
				"%s is not a known OAuth flow (%s); ignored", pathKey(path+".flows", name), strings.Join(oauthFlowNames, ", "))
		}
	}
	for _, name := range oauthFlowNames {
		fo, ok := p.object(flows, name, path+".flows")
		if !ok {
			continue
		}
		fpath := path + ".flows." + name
		f := OAuthFlow{Name: name, PKCERequired: p.boolean(fo, "pkceRequired", fpath)}
		need := flowNeeds(name)
		for _, k := range []string{"authorizationUrl", "tokenUrl", "refreshUrl", "deviceAuthorizationUrl"} {
			u, _ := p.str(fo, k, fpath)
			if strings.TrimSpace(u) == "" {
				if slices.Contains(need, k) {
					p.add(LintInvalidScheme, SeverityError, fpath+"."+k, "%s.%s is required for the %s flow", fpath, k, name)
				}
				continue
			}
			if !p.checkURL(u, fpath+"."+k, SeverityError, "RFC 6749 §3.1 and §3.2 require TLS for OAuth endpoints") {
				continue
			}
			switch k {
			case "authorizationUrl":
				f.AuthorizationURL = u
			case "tokenUrl":
				f.TokenURL = u
			case "refreshUrl":
				f.RefreshURL = u
			case "deviceAuthorizationUrl":
				f.DeviceAuthURL = u
			}
		}
		if scopes, ok := p.object(fo, "scopes", fpath); ok {
			f.Scopes = make(map[string]string, len(scopes))
			for sc, d := range scopes {
				ds, ok := d.(string)
				if !ok {
					p.wrongType(pathKey(fpath+".scopes", sc), "a string", d)
				}
				f.Scopes[sc] = ds
			}
		}
		s.Flows = append(s.Flows, f)
	}
	if len(s.Flows) == 0 {
		p.add(LintInvalidScheme, SeverityError, path+".flows", "%s.flows declares no known OAuth flow", path)
	}
}

// flowNeeds lists the URLs an OAuth flow cannot work without: RFC 6749
// §4.1–4.4, RFC 8628 §3.1.
func flowNeeds(flow string) []string {
	switch flow {
	case "authorizationCode":
		return []string{"authorizationUrl", "tokenUrl"}
	case "implicit":
		return []string{"authorizationUrl"}
	case "deviceCode":
		return []string{"deviceAuthorizationUrl", "tokenUrl"}
	}
	return []string{"tokenUrl"} // clientCredentials, password
}

// requirements reads the security requirements of the card or of a skill
// (base "$" or "$.skills[i]"): v1.0 `securityRequirements` (proto JSON
// `{"schemes":{"s":{"list":[…]}}}`, or a2a-go's `{"schemes":{"s":[…]}}`)
// and v0.3 `security` (`[{"s":[…]}]`). When both are present (mixed card)
// the v1.0 list wins; both are checked against declared.
func (p *parser) requirements(o map[string]any, base string, declared map[string]bool) []Requirement {
	var v1, v0 []Requirement
	list, hasV1 := p.array(o, "securityRequirements", base, p.lim.MaxSchemes, "security requirements")
	for i, v := range list {
		path := pathIndex(pathKey(base, "securityRequirements"), i)
		ro, ok := v.(map[string]any)
		if !ok {
			p.wrongType(path, "an object", v)
			continue
		}
		schemes, ok := p.object(ro, "schemes", path)
		if !ok {
			if _, present := field(ro, "schemes"); present {
				continue // wrong type, reported
			}
			if len(ro) > 0 {
				p.add(LintMissingField, SeverityError, path+".schemes", "%s.schemes is required (v1.0 SecurityRequirement)", path)
				continue
			}
			schemes = map[string]any{} // {} allows anonymous access
		}
		if r, ok := p.requirement(schemes, path+".schemes", declared); ok {
			v1 = append(v1, r)
		}
	}
	list, hasV0 := p.array(o, "security", base, p.lim.MaxSchemes, "security requirements")
	legacyBodies := false
	for i, v := range list {
		path := pathIndex(pathKey(base, "security"), i)
		ro, ok := v.(map[string]any)
		if !ok {
			p.wrongType(path, "an object", v)
			continue
		}
		if body, ok := misplacedV1Body(ro, declared); ok {
			p.add(LintMisplacedSecurity, SeverityWarning, path,
				"%s is a v1.0 requirement ({\"schemes\": …}) under the v0.3 key security; it belongs under securityRequirements (v1.0 AgentCard) and is read as such, while v0.3 clients read a scheme named \"schemes\"", path)
			if r, ok := p.requirement(body, path+".schemes", declared); ok {
				v0 = append(v0, r)
			}
			continue
		}
		legacyBodies = true
		if r, ok := p.requirement(ro, path, declared); ok {
			v0 = append(v0, r)
		}
	}
	if legacyBodies && p.shape == ShapeV10 {
		path := pathKey(base, "security")
		p.add(LintLegacySecurityKey, SeverityWarning, path,
			"%s is the v0.3 key (v0.3 §5.5); this v1.0 card's clients read only securityRequirements (v1.0 AgentCard), so they see no requirement here", path)
	}
	switch {
	case hasV1:
		return nonNil(v1)
	case hasV0:
		return nonNil(v0)
	}
	return nil
}

// misplacedV1Body recognizes a v1.0 requirement body `{"schemes": {…}}`
// written under the v0.3 key: a single key "schemes" holding an object,
// where the card declares no scheme of that name.
func misplacedV1Body(ro map[string]any, declared map[string]bool) (map[string]any, bool) {
	if len(ro) != 1 || declared["schemes"] {
		return nil, false
	}
	body, ok := ro["schemes"].(map[string]any)
	return body, ok
}

// requirement reads one {scheme: scopes} map. An empty map is kept: in
// OpenAPI it means the alternative "no authentication".
func (p *parser) requirement(m map[string]any, path string, declared map[string]bool) (Requirement, bool) {
	if !p.limit(path, len(m), p.lim.MaxSchemes, "schemes") {
		return nil, false
	}
	r := make(Requirement, 0, len(m))
	for name, v := range m {
		if !declared[name] {
			spath := pathKey(path, name)
			p.add(LintUndeclaredScheme, SeverityError, spath, "%s names scheme %q, which securitySchemes does not declare", spath, name)
		}
		list := false
		if lo, ok := v.(map[string]any); ok { // proto JSON: {"list": [...]}
			v, _ = field(lo, "list")
			list = true
		}
		scopesPath := func() string {
			if list {
				return pathKey(path, name) + ".list"
			}
			return pathKey(path, name)
		}
		scopes := []string{}
		switch vv := v.(type) {
		case nil:
		case []any:
			for i, sv := range vv {
				s, ok := sv.(string)
				if !ok {
					p.wrongType(pathIndex(scopesPath(), i), "a string", sv)
					continue
				}
				scopes = append(scopes, s)
			}
		default:
			p.wrongType(scopesPath(), "an array of scopes", v)
		}
		r = append(r, SchemeRef{Scheme: name, Scopes: scopes})
	}
	slices.SortFunc(r, func(a, b SchemeRef) int { return strings.Compare(a.Scheme, b.Scheme) })
	return r, true
}

// legacyAuthentication maps the v0.1 `authentication: {schemes: [...]}`
// object onto security schemes; its names were HTTP auth-schemes ("Bearer",
// "Basic"), loose words ("apiKey", "oauth2") or "none", which means
// anonymous access: no scheme at all; a name that is none of these (x402)
// makes no scheme, only a requirement (LintUnknownLegacyScheme). It
// returns one requirement per scheme
// (any one suffices; "none" next to others adds the anonymous alternative
// {}), which the caller uses only when the card declares no security of
// its own.
func (p *parser) legacyAuthentication(top map[string]any, c *Card, declared map[string]bool) ([]Requirement, bool) {
	o, ok := p.object(top, "authentication", "$")
	if !ok {
		return nil, false
	}
	names, _ := p.strList(o, "schemes", "$.authentication", p.lim.MaxSchemes, "schemes")
	p.add(LintLegacyAuthentication, SeverityInfo, "$.authentication",
		"$.authentication is the v0.1 form; declare securitySchemes and security instead")
	var reqs []Requirement
	anonymous := false
	for i, n := range names {
		name := strings.ToLower(strings.TrimSpace(n))
		path := pathIndex("$.authentication.schemes", i)
		if name == "none" || name == "anonymous" {
			anonymous = true
			continue
		}
		if name == "" || declared[name] {
			continue
		}
		s := SecurityScheme{Name: name, Path: path}
		switch name {
		case "apikey", "api_key", "api-key":
			s.Type = SchemeAPIKey
			p.add(LintIncompleteLegacyScheme, SeverityWarning, path,
				"%s %q names an API key but v0.1 authentication cannot say its name or location (header, query, cookie); callers must ask the provider", path, n)
		case "oauth", "oauth2":
			s.Type = SchemeOAuth2
			p.add(LintIncompleteLegacyScheme, SeverityWarning, path,
				"%s %q names OAuth but v0.1 authentication cannot give its flows or token URL; callers must ask the provider", path, n)
		case "openidconnect", "oidc", "openid":
			s.Type = SchemeOpenIDConnect
			p.add(LintIncompleteLegacyScheme, SeverityWarning, path,
				"%s %q names OpenID Connect but v0.1 authentication cannot give its discovery URL; callers must ask the provider", path, n)
		case "mtls", "mutualtls":
			s.Type = SchemeMutualTLS
		default:
			if !slices.Contains(httpAuthSchemes, name) {
				// x402 (payments over HTTP 402) and the like: no scheme
				// type fits, and an invented http scheme would tell
				// callers to send an Authorization header no one reads.
				// The requirement stays, naming what the card asks for,
				// so the agent is not taken for an anonymous one.
				p.add(LintUnknownLegacyScheme, SeverityWarning, path,
					"%s %q names no security scheme the registry knows (an HTTP authentication scheme such as Bearer or Basic, apiKey, oauth2, openIdConnect or mtls); it is kept as a requirement without a scheme, and callers must ask the provider how to authenticate", path, n)
				declared[name] = true
				reqs = append(reqs, Requirement{{Scheme: name, Scopes: []string{}}})
				continue
			}
			s.Type, s.Scheme = SchemeHTTP, name
		}
		declared[name] = true
		c.SecuritySchemes = append(c.SecuritySchemes, s)
		reqs = append(reqs, Requirement{{Scheme: name, Scopes: []string{}}})
	}
	if anonymous && len(reqs) > 0 {
		reqs = append(reqs, Requirement{})
	}
	return reqs, len(reqs) > 0
}

// httpAuthSchemes are the IANA HTTP Authentication Scheme Registry's names
// (RFC 9110 §16.4), lower-cased, that a v0.1 `authentication.schemes` entry
// may name for an http scheme.
var httpAuthSchemes = []string{"basic", "bearer", "concealed", "digest", "dpop", "gnap", "hoba", "mutual",
	"negotiate", "privatetoken", "scram-sha-1", "scram-sha-256", "vapid"}

// SchemeUndeclared is the security type of a requirement that names a
// scheme the card never declares (LintUndeclaredScheme), or a v0.1
// authentication entry naming none the registry knows
// (LintUnknownLegacyScheme): the agent asks for something a caller cannot
// tell, which is not the same as asking for nothing.
const SchemeUndeclared = "undeclared"

// SecurityTypes lists what a caller of the agent faces, without repeats:
// the type of each declared scheme (in SecuritySchemes order), then
// SchemeUndeclared when a requirement of the card or of a skill names a
// scheme SecuritySchemes lacks. Empty means the card asks for nothing: an
// anonymous agent. Search facets and the security audit read it, so both
// agree on which agents are open.
func (c *Card) SecurityTypes() []string {
	out := []string{}
	declared := make(map[string]bool, len(c.SecuritySchemes))
	for _, s := range c.SecuritySchemes {
		declared[s.Name] = true
		if !slices.Contains(out, s.Type) {
			out = append(out, s.Type)
		}
	}
	undeclared := func(reqs []Requirement) bool {
		for _, r := range reqs {
			for _, ref := range r {
				if !declared[ref.Scheme] {
					return true
				}
			}
		}
		return false
	}
	if undeclared(c.SecurityRequirements) || slices.ContainsFunc(c.Skills, func(s Skill) bool { return undeclared(s.SecurityRequirements) }) {
		out = append(out, SchemeUndeclared)
	}
	return out
}
