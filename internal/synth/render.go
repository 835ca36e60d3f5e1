package synth

import (
	"encoding/base64"
	"unicode/utf8"
)

// appendJSON writes the card in the field layout of its shape. Keys come in
// a fixed order so the bytes are reproducible; map-valued fields
// (securitySchemes, scopes) are written in a fixed order too.
func (a *agent) appendJSON(b []byte) []byte {
	base := "https://" + a.host
	v03 := a.shape == ShapeV03 || a.shape == ShapeMixed
	v10 := a.shape == ShapeV10 || a.shape == ShapeMixed

	b = append(b, '{')
	b = appendKey(b, "name", true)
	b = appendString(b, a.name)
	b = appendKey(b, "description", false)
	b = appendString(b, a.description)
	b = appendKey(b, "version", false)
	b = appendString(b, a.version)

	if a.shape != ShapeV10 {
		if v03 {
			b = appendKey(b, "protocolVersion", false)
			b = appendString(b, "0.3.0")
		}
		b = appendKey(b, "url", false)
		b = appendString(b, bindingURL(base, a.bindings[0]))
		if v03 {
			b = appendKey(b, "preferredTransport", false)
			b = appendString(b, a.bindings[0])
			if len(a.bindings) > 1 {
				// v0.3 §5.6.4: additionalInterfaces SHOULD repeat the
				// preferred (url, transport) pair.
				b = appendKey(b, "additionalInterfaces", false)
				b = append(b, '[')
				for i, bd := range a.bindings {
					if i > 0 {
						b = append(b, ',')
					}
					b = append(b, `{"url":`...)
					b = appendString(b, bindingURL(base, bd))
					b = append(b, `,"transport":`...)
					b = appendString(b, bd)
					b = append(b, '}')
				}
				b = append(b, ']')
			}
		}
	}
	if v10 {
		b = appendKey(b, "supportedInterfaces", false)
		b = append(b, '[')
		for i, bd := range a.bindings {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendInterface(b, bindingURL(base, bd), bd, "1.0")
		}
		if a.shape == ShapeMixed {
			b = append(b, ',')
			b = appendInterface(b, bindingURL(base, a.bindings[0]), a.bindings[0], "0.3")
		}
		b = append(b, ']')
	}

	if a.provider != "" {
		b = appendKey(b, "provider", false)
		b = append(b, `{"organization":`...)
		b = appendString(b, a.provider)
		b = append(b, `,"url":`...)
		b = appendString(b, base+"/about")
		b = append(b, '}')
	}
	if a.iconURL {
		b = appendKey(b, "iconUrl", false)
		b = appendString(b, base+"/static/icon.png")
	}
	if a.docURL {
		b = appendKey(b, "documentationUrl", false)
		b = appendString(b, base+"/docs")
	}

	b = appendKey(b, "capabilities", false)
	b = append(b, '{')
	b = appendBool(b, "streaming", a.streaming, true)
	b = appendBool(b, "pushNotifications", a.push, false)
	if a.shape != ShapeV10 {
		b = appendBool(b, "stateTransitionHistory", a.history, false)
	}
	if v10 && a.extended {
		b = appendBool(b, "extendedAgentCard", true, false)
	}
	if a.extension > 0 {
		name := extensionNames[a.extension-1]
		b = append(b, `,"extensions":[{"uri":`...)
		b = appendString(b, base+"/extensions/"+name+"/v1")
		b = append(b, `,"description":`...)
		b = appendString(b, "Adds "+name+" metadata to task artifacts.")
		b = append(b, `,"required":false}]`...)
	}
	b = append(b, '}')
	if v03 && a.extended {
		b = appendBool(b, "supportsAuthenticatedExtendedCard", true, false)
	}

	b = a.appendSecurity(b, base)

	b = appendKey(b, "defaultInputModes", false)
	b = appendStrings(b, a.defaultIn)
	b = appendKey(b, "defaultOutputModes", false)
	b = appendStrings(b, a.defaultOut)

	b = appendKey(b, "skills", false)
	b = append(b, '[')
	for i := range a.skills {
		if i > 0 {
			b = append(b, ',')
		}
		b = a.appendSkill(b, &a.skills[i])
	}
	b = append(b, ']')

	if a.signature != nil {
		b = a.appendSignature(b, base)
	}
	return append(b, '}')
}

func bindingURL(base, binding string) string {
	switch binding {
	case BindingGRPC:
		return base + "/a2a/grpc"
	case BindingHTTPJSON:
		return base + "/a2a/json"
	default:
		return base + "/a2a/v1"
	}
}

func appendInterface(b []byte, url, binding, version string) []byte {
	b = append(b, `{"url":`...)
	b = appendString(b, url)
	b = append(b, `,"protocolBinding":`...)
	b = appendString(b, binding)
	b = append(b, `,"protocolVersion":`...)
	b = appendString(b, version)
	return append(b, '}')
}

// appendSecurity writes securitySchemes and the card's requirements. v1.0
// cards use the proto oneof keys; v0.2/v0.3 and mixed cards use OpenAPI
// `type` objects, as the a2a-go compatibility layer serves them.
func (a *agent) appendSecurity(b []byte, base string) []byte {
	if len(a.schemes) == 0 {
		return b
	}
	if a.legacyAuth {
		b = appendKey(b, "authentication", false)
		b = append(b, `{"schemes":[`...)
		for i, s := range a.schemes {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, legacyAuthName(s.kind))
		}
		return append(b, "]}"...)
	}
	proto := a.shape == ShapeV10
	b = appendKey(b, "securitySchemes", false)
	b = append(b, '{')
	for i, s := range a.schemes {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s.name)
		b = append(b, ':')
		if proto {
			b = appendProtoScheme(b, s, base)
		} else {
			b = appendOpenAPIScheme(b, s, base)
		}
	}
	b = append(b, '}')

	if a.shape != ShapeV10 {
		b = appendKey(b, "security", false)
		b = append(b, '[')
		for i, s := range a.schemes {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '{')
			b = appendString(b, s.name)
			b = append(b, ':')
			b = appendStrings(b, requiredScopes(s))
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if a.shape == ShapeV10 || a.shape == ShapeMixed {
		b = appendKey(b, "securityRequirements", false)
		b = append(b, '[')
		for i, s := range a.schemes {
			if i > 0 {
				b = append(b, ',')
			}
			b = a.appendRequirement(b, s.name, requiredScopes(s))
		}
		b = append(b, ']')
	}
	return b
}

// appendRequirement writes one v1.0 SecurityRequirement. The proto JSON form
// wraps scopes in a StringList (`{"list":[…]}`); the Go SDK writes a bare
// array, and both occur in the wild.
func (a *agent) appendRequirement(b []byte, name string, scopes []string) []byte {
	b = append(b, `{"schemes":{`...)
	b = appendString(b, name)
	b = append(b, ':')
	if a.plainScopes || a.shape == ShapeMixed {
		b = appendStrings(b, scopes)
	} else {
		b = append(b, `{"list":`...)
		b = appendStrings(b, scopes)
		b = append(b, '}')
	}
	return append(b, "}}"...)
}

// requiredScopes is what the card-level requirement demands of s: OAuth 2.0
// and OpenID Connect carry scopes, other schemes an empty list (OpenAPI 3
// Security Requirement Object).
func requiredScopes(s scheme) []string {
	if s.kind == SchemeOAuth2 || s.kind == SchemeOpenIDConnect {
		return []string{"read"}
	}
	return []string{}
}

func legacyAuthName(kind string) string {
	switch kind {
	case SchemeHTTP, SchemeOAuth2, SchemeOpenIDConnect:
		return "Bearer"
	case SchemeAPIKey:
		return "ApiKey"
	default:
		return "mTLS"
	}
}

const oauthScopes = `{"read":"Read agent results","write":"Create and cancel tasks"}`

func appendOpenAPIScheme(b []byte, s scheme, base string) []byte {
	switch s.kind {
	case SchemeAPIKey:
		if s.alt {
			return append(b, `{"type":"apiKey","in":"query","name":"api_key"}`...)
		}
		return append(b, `{"type":"apiKey","in":"header","name":"X-API-Key","description":"Key issued in the developer portal."}`...)
	case SchemeHTTP:
		return append(b, `{"type":"http","scheme":"bearer","bearerFormat":"JWT"}`...)
	case SchemeOAuth2:
		b = append(b, `{"type":"oauth2","flows":`...)
		b = appendFlows(b, s, base)
		return append(b, '}')
	case SchemeOpenIDConnect:
		b = append(b, `{"type":"openIdConnect","openIdConnectUrl":`...)
		b = appendString(b, base+"/.well-known/openid-configuration")
		return append(b, '}')
	default:
		return append(b, `{"type":"mutualTLS","description":"Client certificate issued by the partner CA."}`...)
	}
}

func appendProtoScheme(b []byte, s scheme, base string) []byte {
	switch s.kind {
	case SchemeAPIKey:
		if s.alt {
			return append(b, `{"apiKeySecurityScheme":{"location":"query","name":"api_key"}}`...)
		}
		return append(b, `{"apiKeySecurityScheme":{"location":"header","name":"X-API-Key","description":"Key issued in the developer portal."}}`...)
	case SchemeHTTP:
		return append(b, `{"httpAuthSecurityScheme":{"scheme":"Bearer","bearerFormat":"JWT"}}`...)
	case SchemeOAuth2:
		b = append(b, `{"oauth2SecurityScheme":{"flows":`...)
		b = appendFlows(b, s, base)
		return append(b, "}}"...)
	case SchemeOpenIDConnect:
		b = append(b, `{"openIdConnectSecurityScheme":{"openIdConnectUrl":`...)
		b = appendString(b, base+"/.well-known/openid-configuration")
		return append(b, "}}"...)
	default:
		return append(b, `{"mtlsSecurityScheme":{"description":"Client certificate issued by the partner CA."}}`...)
	}
}

func appendFlows(b []byte, s scheme, base string) []byte {
	if s.alt {
		b = append(b, `{"authorizationCode":{"authorizationUrl":`...)
		b = appendString(b, base+"/oauth/authorize")
		b = append(b, `,"tokenUrl":`...)
		b = appendString(b, base+"/oauth/token")
	} else {
		b = append(b, `{"clientCredentials":{"tokenUrl":`...)
		b = appendString(b, base+"/oauth/token")
	}
	b = append(b, `,"scopes":`...)
	b = append(b, oauthScopes...)
	return append(b, "}}"...)
}

func (a *agent) appendSkill(b []byte, s *skill) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, s.id)
	b = appendKey(b, "name", false)
	b = appendString(b, s.name)
	b = appendKey(b, "description", false)
	b = appendString(b, s.desc)
	b = appendKey(b, "tags", false)
	b = appendStrings(b, s.tags)
	if len(s.examples) > 0 {
		b = appendKey(b, "examples", false)
		b = appendStrings(b, s.examples)
	}
	if s.in != nil {
		b = appendKey(b, "inputModes", false)
		b = appendStrings(b, s.in)
	}
	if s.out != nil {
		b = appendKey(b, "outputModes", false)
		b = appendStrings(b, s.out)
	}
	if s.writeScope {
		name := a.schemes[0].name
		for _, sc := range a.schemes {
			if sc.kind == SchemeOAuth2 {
				name = sc.name
			}
		}
		scopes := []string{"read", "write"}
		if a.shape != ShapeV10 {
			b = appendKey(b, "security", false)
			b = append(b, "[{"...)
			b = appendString(b, name)
			b = append(b, ':')
			b = appendStrings(b, scopes)
			b = append(b, "}]"...)
		}
		if a.shape == ShapeV10 || a.shape == ShapeMixed {
			b = appendKey(b, "securityRequirements", false)
			b = append(b, '[')
			b = a.appendRequirement(b, name, scopes)
			b = append(b, ']')
		}
	}
	return append(b, '}')
}

// appendSignature writes one detached JWS (A2A v1.0 §8.4) with a well-formed
// protected header and random signature bytes: parsers and key resolution
// get exercised, verification always fails.
func (a *agent) appendSignature(b []byte, base string) []byte {
	header := `{"alg":"ES256","jku":"` + base + `/.well-known/jwks.json","kid":"synth-key-1","typ":"JOSE"}`
	b = append(b, `,"signatures":[{"protected":"`...)
	b = base64.RawURLEncoding.AppendEncode(b, []byte(header))
	b = append(b, `","signature":"`...)
	b = base64.RawURLEncoding.AppendEncode(b, a.signature)
	return append(b, `"}]`...)
}

func appendKey(b []byte, key string, first bool) []byte {
	if !first {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, key...)
	return append(b, '"', ':')
}

func appendBool(b []byte, key string, v, first bool) []byte {
	b = appendKey(b, key, first)
	if v {
		return append(b, "true"...)
	}
	return append(b, "false"...)
}

func appendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string (RFC 8259 §7). Non-ASCII UTF-8 is
// written as is; invalid UTF-8 becomes U+FFFD so the output is always valid.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	if plainASCII(s) {
		b = append(b, s...)
		return append(b, '"')
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		b = utf8.AppendRune(b, r)
		i += n
	}
	return append(b, '"')
}

// plainASCII tells that s needs no escaping: the common case, worth a fast
// path because strings are most of a card.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
