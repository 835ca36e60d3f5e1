package card

import (
	"encoding/json"
	"fmt"
	"go/ast"
	goparser "go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"
)

const baseV03 = `{
  "protocolVersion": "0.3.0",
  "name": "Base Agent",
  "description": "A clean card that lint tests mutate.",
  "url": "https://agent.example.com/a2a/v1",
  "preferredTransport": "JSONRPC",
  "additionalInterfaces": [
    {"url": "https://agent.example.com/a2a/v1", "transport": "JSONRPC"},
    {"url": "https://agent.example.com/a2a/rest", "transport": "HTTP+JSON"}
  ],
  "version": "1.0.0",
  "iconUrl": "https://agent.example.com/icon.png",
  "capabilities": {"streaming": true},
  "securitySchemes": {"oauth": {"type": "oauth2", "flows": {"clientCredentials": {"tokenUrl": "https://auth.example.com/token", "scopes": {"read": "Read"}}}}},
  "security": [{"oauth": ["read"]}],
  "defaultInputModes": ["text", "application/pdf"],
  "defaultOutputModes": ["application/json"],
  "skills": [
    {"id": "one", "name": "One", "description": "First skill.", "tags": ["a"]},
    {"id": "two", "name": "Two", "description": "Second skill.", "tags": ["b"], "security": [{"oauth": []}]}
  ]
}`

const baseV10 = `{
  "name": "Base Agent",
  "description": "A clean v1.0 card that lint tests mutate.",
  "supportedInterfaces": [
    {"url": "https://agent.example.com/a2a/v1", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
  ],
  "version": "1.0.0",
  "capabilities": {},
  "securitySchemes": {"key": {"apiKeySecurityScheme": {"location": "header", "name": "X-Key"}}},
  "securityRequirements": [{"schemes": {"key": {"list": []}}}],
  "defaultInputModes": ["text/plain"],
  "defaultOutputModes": ["text/plain"],
  "skills": [{"id": "one", "name": "One", "description": "First skill.", "tags": ["a"]}]
}`

type obj = map[string]any

func edit(t *testing.T, base string, f func(m obj)) []byte {
	t.Helper()
	var m obj
	if err := json.Unmarshal([]byte(base), &m); err != nil {
		t.Fatal(err)
	}
	if f != nil {
		f(m)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func skill(m obj, i int) obj { return m["skills"].([]any)[i].(obj) }

func TestLintBasesAreClean(t *testing.T) {
	for _, base := range []string{baseV03, baseV10} {
		c, err := Parse([]byte(base), Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Findings) != 0 {
			t.Errorf("base card has findings: %+v", c.Findings)
		}
	}
}

type want struct {
	code string
	sev  Severity
	path string
}

type lintCase struct {
	name  string
	base  string
	edit  func(m obj)
	want  []want
	avoid []string // codes that must not appear
	check func(t *testing.T, c *Card)
}

// lintCases is the lint table: every code of lint.go is wanted by one case
// and avoided by another (TestLintCodesCovered).
func lintCases() []lintCase {
	return []lintCase{
		{name: "null optional field is absent", base: baseV03, edit: func(m obj) { m["iconUrl"] = nil; m["provider"] = nil },
			avoid: []string{LintWrongType, LintInvalidURL}},
		{name: "missing description and version", base: baseV03, edit: func(m obj) { delete(m, "description"); delete(m, "version") },
			want: []want{{LintMissingField, SeverityWarning, "$.description"}, {LintMissingField, SeverityWarning, "$.version"}}},
		{name: "missing capabilities and modes", base: baseV03,
			edit: func(m obj) {
				delete(m, "capabilities")
				delete(m, "defaultInputModes")
				delete(m, "defaultOutputModes")
			},
			want: []want{{LintMissingField, SeverityWarning, "$.capabilities"}, {LintMissingField, SeverityWarning, "$.defaultInputModes"},
				{LintMissingField, SeverityWarning, "$.defaultOutputModes"}}},
		{name: "capability of wrong type", base: baseV03, edit: func(m obj) { m["capabilities"] = obj{"streaming": "yes"} },
			want: []want{{LintWrongType, SeverityError, "$.capabilities.streaming"}},
			check: func(t *testing.T, c *Card) {
				if c.Capabilities.Streaming {
					t.Error(`"yes" read as true`)
				}
			}},
		{name: "missing skills", base: baseV03, edit: func(m obj) { delete(m, "skills") },
			want: []want{{LintMissingField, SeverityError, "$.skills"}}, avoid: []string{LintEmptySkills}},
		{name: "empty skills", base: baseV03, edit: func(m obj) { m["skills"] = []any{} },
			want: []want{{LintEmptySkills, SeverityWarning, "$.skills"}}, avoid: []string{LintMissingField}},
		{name: "null skills are no skills, not a missing field", base: baseV03, edit: func(m obj) { m["skills"] = nil },
			want: []want{{LintEmptySkills, SeverityWarning, "$.skills"}}, avoid: []string{LintMissingField, LintWrongType},
			check: func(t *testing.T, c *Card) {
				if len(c.Skills) != 0 {
					t.Errorf("skills = %+v", c.Skills)
				}
			}},
		{name: "skills not an array", base: baseV03, edit: func(m obj) { m["skills"] = "lots" },
			want: []want{{LintWrongType, SeverityError, "$.skills"}}},
		{name: "skill fields missing", base: baseV03,
			edit: func(m obj) {
				s := skill(m, 0)
				delete(s, "id")
				delete(s, "name")
				delete(s, "description")
				delete(s, "tags")
				skill(m, 1)["tags"] = "b"
			},
			want: []want{{LintMissingField, SeverityError, "$.skills[0].id"}, {LintMissingField, SeverityError, "$.skills[0].name"},
				{LintMissingField, SeverityWarning, "$.skills[0].description"}, {LintMissingField, SeverityWarning, "$.skills[0].tags"},
				{LintWrongType, SeverityError, "$.skills[1].tags"}},
			check: func(t *testing.T, c *Card) {
				if len(c.Skills) != 1 || c.Skills[0].ID != "two" {
					t.Errorf("skills = %+v, want only the one with an id: the other has no name either", c.Skills)
				}
			}},
		{name: "skill without id stays searchable by name", base: baseV03, edit: func(m obj) { delete(skill(m, 0), "id") },
			want: []want{{LintMissingField, SeverityError, "$.skills[0].id"}}, avoid: []string{LintDuplicateSkillID},
			check: func(t *testing.T, c *Card) {
				if len(c.Skills) != 2 || c.Skills[0].Name != "One" || c.Skills[0].ID != "" {
					t.Errorf("skills = %+v, want One kept without id", c.Skills)
				}
			}},
		{name: "two skills without id are not duplicates", base: baseV03, edit: func(m obj) { delete(skill(m, 0), "id"); delete(skill(m, 1), "id") },
			avoid: []string{LintDuplicateSkillID}},
		{name: "duplicate skill id", base: baseV03, edit: func(m obj) { skill(m, 1)["id"] = "one" },
			want: []want{{LintDuplicateSkillID, SeverityError, "$.skills[1].id"}},
			check: func(t *testing.T, c *Card) {
				if len(c.Skills) != 1 || c.Skills[0].Name != "One" {
					t.Errorf("skills = %+v, want the first kept", c.Skills)
				}
			}},
		{name: "missing url v0.3", base: baseV03, edit: func(m obj) { delete(m, "url") },
			want: []want{{LintMissingField, SeverityError, "$.url"}}, avoid: []string{LintInterfaceIncomplete}},
		{name: "missing url v0.2 and no endpoint at all", base: baseV03,
			edit: func(m obj) { delete(m, "url"); delete(m, "protocolVersion"); delete(m, "additionalInterfaces") },
			want: []want{{LintMissingField, SeverityError, "$.url"}}, avoid: []string{LintNoInterfaces}},
		{name: "invalid url", base: baseV03, edit: func(m obj) { m["url"] = "agent.example.com/a2a"; delete(m, "additionalInterfaces") },
			want: []want{{LintInvalidURL, SeverityError, "$.url"}, {LintNoInterfaces, SeverityError, "$"}}},
		{name: "placeholder host that parses as a URL", base: baseV10,
			edit: func(m obj) { m["supportedInterfaces"].([]any)[0].(obj)["url"] = "https://<LOOKER_URL>/api/a2a" },
			want: []want{{LintInvalidURL, SeverityError, "$.supportedInterfaces[0].url"}, {LintNoInterfaces, SeverityError, "$"}},
			check: func(t *testing.T, c *Card) {
				if len(c.Interfaces) != 0 {
					t.Errorf("interfaces = %+v: a placeholder must never be probed or called", c.Interfaces)
				}
			}},
		{name: "placeholder next to a real interface", base: baseV03,
			edit: func(m obj) {
				m["additionalInterfaces"].([]any)[1].(obj)["url"] = "https://agent.example.com/%7BTENANT%7D/rest"
				m["iconUrl"] = "https://${CDN_HOST}/icon.png"
				m["securitySchemes"].(obj)["oauth"].(obj)["flows"].(obj)["clientCredentials"].(obj)["tokenUrl"] = "https://YOUR_AUTH_HOST/token"
			},
			want: []want{{LintInvalidURL, SeverityError, "$.additionalInterfaces[1].url"}, {LintInvalidURL, SeverityWarning, "$.iconUrl"},
				{LintInvalidURL, SeverityError, "$.securitySchemes.oauth.flows.clientCredentials.tokenUrl"}},
			avoid: []string{LintNoInterfaces},
			check: func(t *testing.T, c *Card) {
				for _, in := range c.Interfaces {
					if strings.Contains(in.URL, "TENANT") {
						t.Errorf("placeholder interface kept: %+v", in)
					}
				}
				if len(c.Interfaces) != 1 || c.IconURL != "" {
					t.Errorf("interfaces %+v, icon %q", c.Interfaces, c.IconURL)
				}
			}},
		{name: "placeholder grpc target", base: baseV10,
			edit: func(m obj) {
				m["supportedInterfaces"] = append(m["supportedInterfaces"].([]any),
					obj{"url": "{GRPC_HOST}:50051", "protocolBinding": "GRPC", "protocolVersion": "1.0"})
			},
			want: []want{{LintInvalidURL, SeverityError, "$.supportedInterfaces[1].url"}},
			check: func(t *testing.T, c *Card) {
				if len(c.Interfaces) != 1 {
					t.Errorf("interfaces = %+v", c.Interfaces)
				}
			}},
		{name: "javascript icon dropped", base: baseV03, edit: func(m obj) { m["iconUrl"] = "javascript:alert(1)" },
			want: []want{{LintInvalidURL, SeverityWarning, "$.iconUrl"}},
			check: func(t *testing.T, c *Card) {
				if c.IconURL != "" {
					t.Errorf("IconURL = %q kept", c.IconURL)
				}
			}},
		{name: "plain http links break no rule", base: baseV03,
			edit: func(m obj) {
				m["documentationUrl"] = "http://docs.example.com"
				m["iconUrl"] = "http://docs.example.com/i.png"
				m["provider"] = obj{"organization": "X", "url": "http://x.example.com"}
			},
			avoid: []string{LintInsecureURL, LintInvalidURL}},
		{name: "insecure token url", base: baseV03,
			edit: func(m obj) {
				m["securitySchemes"].(obj)["oauth"].(obj)["flows"].(obj)["clientCredentials"].(obj)["tokenUrl"] = "http://auth.example.com/token"
			},
			want: []want{{LintInsecureURL, SeverityWarning, "$.securitySchemes.oauth.flows.clientCredentials.tokenUrl"}}},
		{name: "insecure interface", base: baseV10, edit: func(m obj) { m["supportedInterfaces"].([]any)[0].(obj)["url"] = "http://agent.example.com/a2a" },
			want: []want{{LintInsecureURL, SeverityWarning, "$.supportedInterfaces[0].url"}}},
		{name: "unknown binding", base: baseV10, edit: func(m obj) { m["supportedInterfaces"].([]any)[0].(obj)["protocolBinding"] = "WEBSOCKET" },
			want: []want{{LintUnknownBinding, SeverityWarning, "$.supportedInterfaces[0].protocolBinding"}}},
		{name: "core bindings are known", base: baseV03, avoid: []string{LintUnknownBinding, LintNoncanonicalBinding}},
		{name: "noncanonical binding", base: baseV03, edit: func(m obj) { m["preferredTransport"] = "jsonrpc" },
			want: []want{{LintNoncanonicalBinding, SeverityWarning, "$.preferredTransport"}}, avoid: []string{LintInterfaceIncomplete},
			check: func(t *testing.T, c *Card) {
				if c.Interfaces[0].Binding != BindingJSONRPC {
					t.Errorf("binding = %q", c.Interfaces[0].Binding)
				}
			}},
		{name: "missing preferred transport", base: baseV03, edit: func(m obj) { delete(m, "preferredTransport") },
			want: []want{{LintMissingPreferredTransport, SeverityWarning, "$.preferredTransport"}}},
		{name: "v0.2 card needs no preferred transport", base: baseV03,
			edit: func(m obj) {
				delete(m, "preferredTransport")
				delete(m, "protocolVersion")
				delete(m, "additionalInterfaces")
			},
			avoid: []string{LintMissingPreferredTransport}},
		{name: "interface incomplete", base: baseV03,
			edit: func(m obj) {
				m["additionalInterfaces"] = []any{obj{"url": "https://agent.example.com/a2a/grpc", "transport": "GRPC"}}
			},
			want: []want{{LintInterfaceIncomplete, SeverityWarning, "$.additionalInterfaces"}}},
		{name: "conflicting transports", base: baseV03,
			edit: func(m obj) {
				m["additionalInterfaces"] = []any{
					obj{"url": "https://agent.example.com/a2a/v1", "transport": "JSONRPC"},
					obj{"url": "https://agent.example.com/a2a/v1", "transport": "HTTP+JSON"},
				}
			},
			want: []want{{LintConflictingTransports, SeverityError, "$.additionalInterfaces[1]"}}},
		{name: "duplicate interface is info", base: baseV03,
			edit: func(m obj) {
				m["additionalInterfaces"] = append(m["additionalInterfaces"].([]any), obj{"url": "https://agent.example.com/a2a/rest", "transport": "HTTP+JSON"})
			},
			want:  []want{{LintDuplicateInterface, SeverityInfo, "$.additionalInterfaces[2]"}},
			avoid: []string{LintConflictingTransports}},
		{name: "no interfaces v1.0", base: baseV10, edit: func(m obj) { m["supportedInterfaces"] = []any{} },
			want: []want{{LintNoInterfaces, SeverityError, "$"}}},
		{name: "v1.0 interface missing fields", base: baseV10,
			edit: func(m obj) {
				m["supportedInterfaces"] = []any{obj{"url": "https://a.example.com"}, obj{"protocolBinding": "GRPC", "protocolVersion": "1.0"}}
			},
			want: []want{{LintMissingField, SeverityError, "$.supportedInterfaces[0].protocolBinding"},
				{LintMissingField, SeverityError, "$.supportedInterfaces[1].url"}, {LintNoInterfaces, SeverityError, "$"}}},
		{name: "missing protocol version", base: baseV10, edit: func(m obj) { delete(m["supportedInterfaces"].([]any)[0].(obj), "protocolVersion") },
			want: []want{{LintMissingProtocolVersion, SeverityWarning, "$.supportedInterfaces[0].protocolVersion"}},
			check: func(t *testing.T, c *Card) {
				if c.Interfaces[0].ProtocolVersion != VersionUnknown || fmt.Sprint(c.ProtocolVersions) != "[unknown]" {
					t.Errorf("version = %q, card %q; want unknown, never a guess", c.Interfaces[0].ProtocolVersion, c.ProtocolVersions)
				}
			}},
		{name: "interface version from the card's protocolVersion", base: baseV10,
			edit: func(m obj) {
				delete(m["supportedInterfaces"].([]any)[0].(obj), "protocolVersion")
				m["protocolVersion"] = "0.3.0"
			},
			want: []want{{LintMissingProtocolVersion, SeverityWarning, "$.supportedInterfaces[0].protocolVersion"}},
			check: func(t *testing.T, c *Card) {
				if c.Interfaces[0].ProtocolVersion != "0.3" || fmt.Sprint(c.ProtocolVersions) != "[0.3]" {
					t.Errorf("version = %q, card %q; want 0.3", c.Interfaces[0].ProtocolVersion, c.ProtocolVersions)
				}
			}},
		{name: "interface versions from protocolVersions", base: baseV10,
			edit: func(m obj) {
				delete(m["supportedInterfaces"].([]any)[0].(obj), "protocolVersion")
				m["protocolVersions"] = []any{"1.0", "0.3"}
			},
			want:  []want{{LintMissingProtocolVersion, SeverityWarning, "$.supportedInterfaces[0].protocolVersion"}},
			avoid: []string{LintConflictingTransports, LintDuplicateInterface},
			check: func(t *testing.T, c *Card) {
				if len(c.Interfaces) != 2 || c.Interfaces[0].ProtocolVersion != "1.0" || c.Interfaces[1].ProtocolVersion != "0.3" {
					t.Errorf("interfaces = %+v, want one per declared version", c.Interfaces)
				}
			}},
		{name: "interface version is its own", base: baseV10, edit: func(m obj) { m["protocolVersions"] = []any{"0.3"} },
			avoid: []string{LintMissingProtocolVersion},
			check: func(t *testing.T, c *Card) {
				if len(c.Interfaces) != 1 || c.Interfaces[0].ProtocolVersion != "1.0" {
					t.Errorf("interfaces = %+v", c.Interfaces)
				}
			}},
		{name: "invalid protocol version", base: baseV03, edit: func(m obj) { m["protocolVersion"] = "latest" },
			want: []want{{LintInvalidProtocolVersion, SeverityWarning, "$.protocolVersion"}},
			check: func(t *testing.T, c *Card) {
				if c.Interfaces[0].ProtocolVersion != VersionUnknown || fmt.Sprint(c.ProtocolVersions) != "[unknown]" {
					t.Errorf("interfaces %+v, versions %v; want unknown, not latest", c.Interfaces, c.ProtocolVersions)
				}
			}},
		{name: "an MCP date in an interface does not replace the declared version", base: baseV10,
			edit: func(m obj) {
				m["protocolVersions"] = []any{"1.0"}
				m["supportedInterfaces"].([]any)[0].(obj)["protocolVersion"] = "2025-06-18"
			},
			want:  []want{{LintInvalidProtocolVersion, SeverityWarning, "$.supportedInterfaces[0].protocolVersion"}},
			avoid: []string{LintMissingProtocolVersion},
			check: func(t *testing.T, c *Card) {
				if c.Interfaces[0].ProtocolVersion != "1.0" || fmt.Sprint(c.ProtocolVersions) != "[1.0]" {
					t.Errorf("interfaces %+v, versions %v; want the declared 1.0", c.Interfaces, c.ProtocolVersions)
				}
			}},
		{name: "an MCP date with nothing declared is unknown", base: baseV10,
			edit: func(m obj) { m["supportedInterfaces"].([]any)[0].(obj)["protocolVersion"] = "2025-06-18" },
			want: []want{{LintInvalidProtocolVersion, SeverityWarning, "$.supportedInterfaces[0].protocolVersion"}},
			check: func(t *testing.T, c *Card) {
				if c.Interfaces[0].ProtocolVersion != VersionUnknown {
					t.Errorf("interfaces %+v; want unknown", c.Interfaces)
				}
			}},
		{name: "blank protocol version", base: baseV03, edit: func(m obj) { m["protocolVersion"] = " " },
			want: []want{{LintInvalidProtocolVersion, SeverityWarning, "$.protocolVersion"}},
			check: func(t *testing.T, c *Card) {
				if c.Interfaces[0].ProtocolVersion != VersionUnknown {
					t.Errorf("version = %q, want unknown", c.Interfaces[0].ProtocolVersion)
				}
			}},
		{name: "undeclared scheme card level", base: baseV03, edit: func(m obj) { m["security"] = []any{obj{"oauth": []any{}, "key": []any{}}} },
			want: []want{{LintUndeclaredScheme, SeverityError, "$.security[0].key"}}},
		{name: "undeclared scheme skill level", base: baseV03, edit: func(m obj) { skill(m, 1)["security"] = []any{obj{"google": []any{"openid"}}} },
			want: []want{{LintUndeclaredScheme, SeverityError, "$.skills[1].security[0].google"}}},
		{name: "undeclared scheme v1.0", base: baseV10,
			edit: func(m obj) { m["securityRequirements"] = []any{obj{"schemes": obj{"other": obj{"list": []any{}}}}} },
			want: []want{{LintUndeclaredScheme, SeverityError, "$.securityRequirements[0].schemes.other"}}},
		{name: "scopes of wrong type", base: baseV03, edit: func(m obj) { m["security"] = []any{obj{"oauth": "read"}} },
			want: []want{{LintWrongType, SeverityError, "$.security[0].oauth"}}},
		{name: "unknown scheme type", base: baseV03, edit: func(m obj) { m["securitySchemes"].(obj)["x"] = obj{"type": "kerberos"} },
			want: []want{{LintInvalidScheme, SeverityError, "$.securitySchemes.x.type"}}},
		{name: "apiKey without name or location", base: baseV03, edit: func(m obj) { m["securitySchemes"].(obj)["k"] = obj{"type": "apiKey", "in": "body"} },
			want: []want{{LintInvalidScheme, SeverityError, "$.securitySchemes.k.name"}, {LintInvalidScheme, SeverityError, "$.securitySchemes.k.in"}}},
		{name: "http without scheme", base: baseV03, edit: func(m obj) { m["securitySchemes"].(obj)["h"] = obj{"type": "http"} },
			want: []want{{LintInvalidScheme, SeverityError, "$.securitySchemes.h.scheme"}}},
		{name: "oauth2 without flows", base: baseV03, edit: func(m obj) { m["securitySchemes"].(obj)["oauth"] = obj{"type": "oauth2"} },
			want: []want{{LintInvalidScheme, SeverityError, "$.securitySchemes.oauth.flows"}}},
		{name: "oauth2 flow without token url", base: baseV03,
			edit: func(m obj) {
				m["securitySchemes"].(obj)["oauth"] = obj{"type": "oauth2", "flows": obj{
					"authorizationCode": obj{"authorizationUrl": "https://auth.example.com/a", "scopes": obj{}},
					"magic":             obj{},
				}}
			},
			want: []want{{LintInvalidScheme, SeverityError, "$.securitySchemes.oauth.flows.authorizationCode.tokenUrl"},
				{LintInvalidScheme, SeverityWarning, "$.securitySchemes.oauth.flows.magic"}}},
		{name: "oidc without url", base: baseV03, edit: func(m obj) { m["securitySchemes"].(obj)["o"] = obj{"type": "openIdConnect"} },
			want: []want{{LintInvalidScheme, SeverityError, "$.securitySchemes.o.openIdConnectUrl"}}},
		{name: "proto scheme with two types", base: baseV10,
			edit: func(m obj) {
				m["securitySchemes"].(obj)["key"] = obj{"apiKeySecurityScheme": obj{"location": "header", "name": "X"}, "mtlsSecurityScheme": obj{}}
			},
			want: []want{{LintInvalidScheme, SeverityError, "$.securitySchemes.key"}}},
		{name: "proto scheme with none", base: baseV10, edit: func(m obj) { m["securitySchemes"].(obj)["key"] = obj{"description": "?"} },
			want: []want{{LintInvalidScheme, SeverityError, "$.securitySchemes.key"}}, avoid: []string{LintUndeclaredScheme}},
		{name: "scheme name needing quotes", base: baseV03, edit: func(m obj) { m["securitySchemes"].(obj)["api key"] = obj{"type": "apiKey", "in": "header"} },
			want: []want{{LintInvalidScheme, SeverityError, `$.securitySchemes["api key"].name`}}},
		{name: "invalid modes", base: baseV03, edit: func(m obj) { m["defaultInputModes"] = []any{"text", "pdf", " ", "image/*", 7} },
			want: []want{{LintInvalidMode, SeverityInfo, "$.defaultInputModes[1]"}, {LintInvalidMode, SeverityInfo, "$.defaultInputModes[2]"},
				{LintWrongType, SeverityError, "$.defaultInputModes[4]"}},
			check: func(t *testing.T, c *Card) {
				if fmt.Sprint(c.DefaultInputModes) != "[text pdf image/*]" {
					t.Errorf("modes = %q", c.DefaultInputModes)
				}
			}},
		{name: "informal and parameterized modes are valid", base: baseV03,
			edit:  func(m obj) { m["defaultOutputModes"] = []any{"text", "file", "Application/JSON; charset=utf-8", "*/*"} },
			avoid: []string{LintInvalidMode}},
		{name: "signature without protected", base: baseV03, edit: func(m obj) { m["signatures"] = []any{obj{"signature": "abc"}} },
			want: []want{{LintMissingField, SeverityError, "$.signatures[0].protected"}},
			check: func(t *testing.T, c *Card) {
				if len(c.Signatures) != 0 {
					t.Error("incomplete signature kept")
				}
			}},
		{name: "missing preferred transport is not a 0.2.x rule", base: baseV03,
			edit:  func(m obj) { delete(m, "preferredTransport"); m["protocolVersion"] = "0.2.6" },
			avoid: []string{LintMissingPreferredTransport}},
		{name: "card declaring 1.0 without supportedInterfaces", base: baseV03, edit: func(m obj) { m["protocolVersion"] = "1.0" },
			want: []want{{LintMissingSupportedInterfaces, SeverityWarning, "$"}}},
		{name: "v0.3 card needs no supportedInterfaces", base: baseV03, avoid: []string{LintMissingSupportedInterfaces}},
		{name: "mixed card with leftover url", base: baseV10,
			edit:  func(m obj) { m["url"] = "https://agent.example.com/a2a/legacy"; m["protocolVersion"] = "0.3.0" },
			want:  []want{{LintIgnoredURL, SeverityInfo, "$.url"}},
			avoid: []string{LintConflictingTransports, LintMissingPreferredTransport},
			check: func(t *testing.T, c *Card) {
				if len(c.Interfaces) != 1 || c.Interfaces[0].URL != "https://agent.example.com/a2a/v1" {
					t.Errorf("interfaces = %+v, want none made of the leftover url", c.Interfaces)
				}
			}},
		{name: "mixed card with declared url", base: baseV10,
			edit: func(m obj) {
				m["url"] = "https://agent.example.com/a2a/v1"
				m["preferredTransport"] = "JSONRPC"
				m["protocolVersion"] = "0.3.0"
			},
			avoid: []string{LintIgnoredURL, LintConflictingTransports},
			check: func(t *testing.T, c *Card) {
				if len(c.Interfaces) != 2 || c.Interfaces[1].ProtocolVersion != "0.3" {
					t.Errorf("interfaces = %+v, want the v1.0 and the v0.3 one", c.Interfaces)
				}
			}},
		{name: "REST next to HTTP+JSON at one URL", base: baseV03,
			edit: func(m obj) {
				m["additionalInterfaces"] = append(m["additionalInterfaces"].([]any), obj{"url": "https://agent.example.com/a2a/rest", "transport": "REST"})
			},
			want:  []want{{LintUnknownBinding, SeverityWarning, "$.additionalInterfaces[2].transport"}},
			avoid: []string{LintConflictingTransports},
			check: func(t *testing.T, c *Card) {
				for _, in := range c.Interfaces {
					if in.Binding == "REST" {
						t.Errorf("REST kept as a binding of its own: %+v", c.Interfaces)
					}
				}
			}},
		{name: "REST alone is HTTP+JSON, kept verbatim for display", base: baseV10,
			edit: func(m obj) { m["supportedInterfaces"].([]any)[0].(obj)["protocolBinding"] = "rest" },
			want: []want{{LintUnknownBinding, SeverityWarning, "$.supportedInterfaces[0].protocolBinding"}},
			check: func(t *testing.T, c *Card) {
				if in := c.Interfaces[0]; in.Binding != BindingHTTPJSON || in.DeclaredBinding != "rest" {
					t.Errorf("interface = %+v, want HTTP+JSON declared as rest", in)
				}
			}},
		{name: "v0.1 authentication none is anonymous", base: baseV03,
			edit: func(m obj) {
				delete(m, "securitySchemes")
				delete(m, "security")
				delete(skill(m, 1), "security")
				m["authentication"] = obj{"schemes": []any{"none"}}
			},
			want:  []want{{LintLegacyAuthentication, SeverityInfo, "$.authentication"}},
			avoid: []string{LintIncompleteLegacyScheme, LintInvalidScheme},
			check: func(t *testing.T, c *Card) {
				if len(c.SecuritySchemes) != 0 || len(c.SecurityRequirements) != 0 {
					t.Errorf("schemes %+v, requirements %+v; want anonymous", c.SecuritySchemes, c.SecurityRequirements)
				}
			}},
		{name: "v0.1 none next to bearer adds the anonymous alternative", base: baseV03,
			edit: func(m obj) {
				delete(m, "securitySchemes")
				delete(m, "security")
				delete(skill(m, 1), "security")
				m["authentication"] = obj{"schemes": []any{"Bearer", "none"}}
			},
			avoid: []string{LintIncompleteLegacyScheme},
			check: func(t *testing.T, c *Card) {
				if len(c.SecuritySchemes) != 1 || fmt.Sprint(c.SecurityRequirements) != "[[{bearer []}] []]" {
					t.Errorf("schemes %+v, requirements %v", c.SecuritySchemes, c.SecurityRequirements)
				}
			}},
		{name: "v0.1 apiKey and oauth say what they lack", base: baseV03,
			edit: func(m obj) {
				delete(m, "securitySchemes")
				delete(m, "security")
				delete(skill(m, 1), "security")
				m["authentication"] = obj{"schemes": []any{"apiKey", "OAuth2"}}
			},
			want: []want{{LintIncompleteLegacyScheme, SeverityWarning, "$.authentication.schemes[0]"},
				{LintIncompleteLegacyScheme, SeverityWarning, "$.authentication.schemes[1]"}}},
		{name: "v0.1 scheme no spec defines", base: baseV03,
			edit: func(m obj) {
				delete(m, "securitySchemes")
				delete(m, "security")
				delete(skill(m, 1), "security")
				m["authentication"] = obj{"schemes": []any{"x402", "Bearer"}}
			},
			want: []want{{LintUnknownLegacyScheme, SeverityWarning, "$.authentication.schemes[0]"}},
			check: func(t *testing.T, c *Card) {
				if len(c.SecuritySchemes) != 1 || c.SecuritySchemes[0].Name != "bearer" {
					t.Errorf("schemes %+v; want only bearer, no invented x402 scheme", c.SecuritySchemes)
				}
				if fmt.Sprint(c.SecurityRequirements) != "[[{x402 []}] [{bearer []}]]" {
					t.Errorf("requirements %v", c.SecurityRequirements)
				}
				if fmt.Sprint(c.SecurityTypes()) != "[http undeclared]" {
					t.Errorf("security types %v", c.SecurityTypes())
				}
			}},
		{name: "v1.0 requirement body under security", base: baseV10,
			edit: func(m obj) {
				delete(m, "securityRequirements")
				m["security"] = []any{obj{"schemes": obj{"key": obj{"list": []any{}}}}}
			},
			want:  []want{{LintMisplacedSecurity, SeverityWarning, "$.security[0]"}},
			avoid: []string{LintUndeclaredScheme, LintLegacySecurityKey},
			check: func(t *testing.T, c *Card) {
				if fmt.Sprint(c.SecurityRequirements) != "[[{key []}]]" {
					t.Errorf("requirements = %v, want [[key]]", c.SecurityRequirements)
				}
			}},
		{name: "scheme named schemes is not misplaced", base: baseV03,
			edit: func(m obj) {
				m["securitySchemes"].(obj)["schemes"] = obj{"type": "mutualTLS"}
				m["security"] = []any{obj{"schemes": []any{}}}
			},
			avoid: []string{LintMisplacedSecurity}},
		{name: "v0.3 security key in a v1.0 card", base: baseV10, edit: func(m obj) { m["security"] = []any{obj{"key": []any{}}} },
			want: []want{{LintLegacySecurityKey, SeverityWarning, "$.security"}}},
		{name: "v0.3 security key in a v0.3 card", base: baseV03, avoid: []string{LintLegacySecurityKey, LintMisplacedSecurity}},
		{name: "supportsExtendedAgentCard", base: baseV10, edit: func(m obj) { m["supportsExtendedAgentCard"] = true },
			want: []want{{LintHybridField, SeverityWarning, "$.supportsExtendedAgentCard"}},
			check: func(t *testing.T, c *Card) {
				if !c.Capabilities.ExtendedCard {
					t.Error("extended card flag not read")
				}
			}},
		{name: "standard extended card flags", base: baseV10,
			edit: func(m obj) {
				m["capabilities"] = obj{"extendedAgentCard": true}
				m["supportsAuthenticatedExtendedCard"] = true
			},
			avoid: []string{LintHybridField}},
		{name: "legacy authentication absent", base: baseV03, avoid: []string{LintLegacyAuthentication, LintIncompleteLegacyScheme, LintUnknownLegacyScheme}},
		{name: "clean v1.0 card", base: baseV10,
			avoid: []string{LintMissingField, LintWrongType, LintInvalidURL, LintInsecureURL, LintEmptySkills, LintDuplicateSkillID,
				LintUnknownBinding, LintNoncanonicalBinding, LintMissingPreferredTransport, LintInterfaceIncomplete, LintNoInterfaces,
				LintInvalidProtocolVersion, LintUndeclaredScheme, LintInvalidScheme, LintInvalidMode, LintMissingSupportedInterfaces,
				LintIgnoredURL}},
	}
}

func TestLint(t *testing.T) {
	for _, tt := range lintCases() {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse(edit(t, tt.base, tt.edit), Limits{})
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			for _, w := range tt.want {
				found := false
				for _, f := range c.Findings {
					if f.Code == w.code && f.Path == w.path {
						found = true
						if f.Severity != w.sev {
							t.Errorf("%s at %s has severity %s, want %s", w.code, w.path, f.Severity, w.sev)
						}
						if f.Message == "" {
							t.Errorf("%s at %s has no message", w.code, w.path)
						}
					}
				}
				if !found {
					t.Errorf("no %s at %s; findings: %+v", w.code, w.path, c.Findings)
				}
			}
			for _, f := range c.Findings {
				for _, a := range tt.avoid {
					if f.Code == a {
						t.Errorf("unexpected %s at %s: %s", f.Code, f.Path, f.Message)
					}
				}
			}
			if tt.check != nil {
				tt.check(t, c)
			}
		})
	}
}

func TestFindingsSorted(t *testing.T) {
	c, err := Parse([]byte(`{"skills":[{"name":1},{}],"url":"ftp://x","name":2}`), Limits{Stored: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(c.Findings); i++ {
		a, b := c.Findings[i-1], c.Findings[i]
		if a.Path > b.Path || a.Path == b.Path && a.Code > b.Code {
			t.Errorf("findings out of order: %v before %v", a, b)
		}
	}
}

// TestLintCodesCovered holds the lint table to its promise: each Lint*
// constant of lint.go is wanted by one case and avoided by another.
func TestLintCodesCovered(t *testing.T) {
	f, err := goparser.ParseFile(token.NewFileSet(), "lint.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			for _, v := range spec.(*ast.ValueSpec).Values {
				lit, ok := v.(*ast.BasicLit)
				if !ok {
					continue
				}
				code, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				codes = append(codes, code)
			}
		}
	}
	if len(codes) < 20 {
		t.Fatalf("read only %d codes from lint.go", len(codes))
	}
	wanted, avoided := map[string]bool{}, map[string]bool{}
	for _, c := range lintCases() {
		for _, w := range c.want {
			wanted[w.code] = true
		}
		for _, a := range c.avoid {
			avoided[a] = true
		}
	}
	for _, code := range codes {
		if !wanted[code] {
			t.Errorf("no lint case triggers %s", code)
		}
		if !avoided[code] {
			t.Errorf("no lint case shows a card that must not trigger %s", code)
		}
	}
}

func TestFindingsCiteTheSpec(t *testing.T) {
	tests := []struct {
		base, path, cite string
		edit             func(m obj)
	}{
		{baseV03, "$.skills[0].tags", "v0.3 §5.5.4 AgentSkill", func(m obj) { delete(skill(m, 0), "tags") }},
		{baseV10, "$.skills[0].tags", "v1.0 AgentSkill", func(m obj) { delete(skill(m, 0), "tags") }},
		{baseV03, "$.description", "v0.3 §5.5 AgentCard", func(m obj) { delete(m, "description") }},
		{baseV03, "$.preferredTransport", "v0.3 §5.6.1", func(m obj) { delete(m, "preferredTransport") }},
		{baseV10, "$.supportedInterfaces[0].protocolBinding", "v1.0 AgentInterface", func(m obj) {
			delete(m["supportedInterfaces"].([]any)[0].(obj), "protocolBinding")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.path+" "+tt.cite, func(t *testing.T) {
			c, err := Parse(edit(t, tt.base, tt.edit), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range c.Findings {
				if f.Path == tt.path {
					if !strings.Contains(f.Message, tt.cite) {
						t.Errorf("%s: %q does not cite %s", f.Code, f.Message, tt.cite)
					}
					return
				}
			}
			t.Errorf("no finding at %s: %+v", tt.path, c.Findings)
		})
	}
}

func TestPlaceholderIn(t *testing.T) {
	tests := []struct{ in, marker string }{
		{"https://<LOOKER_URL>/api/a2a", "<LOOKER_URL>"},
		{"{BASE_URL}/a2a", "{BASE_URL}"},
		{"https://${HOST}/a2a", "${HOST}"},
		{"https://{{host}}:8443/a2a", "{{host}}"},
		{"https://%7BBASE_URL%7D/a2a", "{BASE_URL}"},
		{"https://agent.example.com/%7btenant%7d/a2a", "{tenant}"},
		{"https://$AGENT_HOST/a2a", "$AGENT_HOST"},
		{"https://api.example.com:$PORT/a2a", "$PORT"},
		{"https://YOUR_HOST/a2a", "YOUR_HOST"},
		{"https://REPLACE_ME.example.com/a2a", "REPLACE_ME"},
		{"https://agent.example.com/<tenant>", "<tenant>"},
		// Real addresses.
		{"https://agent.example.com/a2a/v1", ""},
		{"https://my_agent.internal:8443/a2a", ""},
		{"https://AGENT.EXAMPLE.COM/a2a", ""},
		{"https://odata.example.com/svc/$metadata?$filter=x", ""},
		{"https://agent.example.com/a2a?q=%7E", ""},
		{"grpc.example.com:50051", ""},
		{"https://agent.example.com/$A", ""},
	}
	for _, tt := range tests {
		marker, ok := PlaceholderIn(tt.in)
		if ok != (tt.marker != "") || marker != tt.marker {
			t.Errorf("PlaceholderIn(%q) = %q, %v; want %q", tt.in, marker, ok, tt.marker)
		}
	}
}

// TestSecurityTypes: a requirement naming a scheme the card never
// declares is not anonymous access, at the card or at a skill.
func TestSecurityTypes(t *testing.T) {
	tests := []struct {
		name string
		base string
		edit func(m obj)
		want string
	}{
		{"declared", baseV03, nil, "[oauth2]"},
		{"anonymous", baseV03, func(m obj) { delete(m, "securitySchemes"); delete(m, "security"); delete(skill(m, 1), "security") }, "[]"},
		{"card requirement names nothing declared", baseV03, func(m obj) {
			delete(m, "securitySchemes")
			m["security"] = []any{obj{"bearerAuth": []any{}}}
			delete(skill(m, 1), "security")
		}, "[undeclared]"},
		{"skill requirement names nothing declared", baseV03, func(m obj) {
			delete(m, "security")
			skill(m, 1)["security"] = []any{obj{"google": []any{"openid"}}}
		}, "[oauth2 undeclared]"},
		{"v1.0 requirement without schemes", baseV10, func(m obj) { delete(m, "securitySchemes") }, "[undeclared]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse(edit(t, tt.base, tt.edit), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(c.SecurityTypes()); got != tt.want {
				t.Errorf("SecurityTypes() = %s, want %s", got, tt.want)
			}
		})
	}
}
