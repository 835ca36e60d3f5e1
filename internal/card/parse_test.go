package card

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func mustRead(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func ifaceStrings(ifs []Interface) []string {
	out := make([]string, len(ifs))
	for i, f := range ifs {
		out[i] = f.URL + " " + f.Binding + " " + f.ProtocolVersion + " " + f.Tenant
	}
	return out
}

func findingCodes(fs []Finding) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Code + "@" + f.Path
	}
	return out
}

func TestParseFixtures(t *testing.T) {
	tests := []struct {
		file       string
		shape      Shape
		versions   []string
		interfaces []string
		schemes    []string // name:type[:detail]
		reqs       string
		findings   []string
	}{
		{
			file:       "v02_url_only.json",
			shape:      ShapeV02,
			versions:   []string{VersionUnknown},
			interfaces: []string{"https://fx.example.com/a2a JSONRPC unknown "},
			schemes:    []string{"bearer:http:bearer"},
			reqs:       "[[bearer]]",
			findings:   []string{},
		},
		{
			file:       "v01_authentication.json",
			shape:      ShapeV02,
			versions:   []string{VersionUnknown},
			interfaces: []string{"https://weather.example.org/agent JSONRPC unknown "},
			schemes:    []string{"basic:http:basic", "bearer:http:bearer"},
			reqs:       "[[bearer] [basic]]",
			findings:   []string{"legacy_authentication@$.authentication"},
		},
		{
			file:     "v03_seed.json",
			shape:    ShapeV03,
			versions: []string{"0.2"},
			interfaces: []string{
				"https://georoute-agent.example.com/a2a/v1 JSONRPC 0.2 ",
				"https://georoute-agent.example.com/a2a/grpc GRPC 0.2 ",
				"https://georoute-agent.example.com/a2a/json HTTP+JSON 0.2 ",
			},
			schemes:  []string{"google:openIdConnect:https://accounts.google.com/.well-known/openid-configuration"},
			reqs:     "[[google]]",
			findings: []string{},
		},
		{
			file:     "v03_full.json",
			shape:    ShapeV03,
			versions: []string{"0.3"},
			interfaces: []string{
				"https://contracts.example.com/a2a/v1 JSONRPC 0.3 ",
				"https://contracts.example.com/a2a/rest HTTP+JSON 0.3 ",
				"contracts-grpc.example.com:443 GRPC 0.3 ",
			},
			schemes:  []string{"api-key:apiKey:header/X-API-Key", "mtls:mutualTLS", "oauth:oauth2:authorizationCode,clientCredentials"},
			reqs:     "[[oauth] [api-key mtls]]",
			findings: []string{},
		},
		{
			file:     "v10_proto.json",
			shape:    ShapeV10,
			versions: []string{"1.0", "0.3"},
			interfaces: []string{
				"https://expenses.example.com/a2a/v1 JSONRPC 1.0 ",
				"https://expenses.example.com/a2a/rest HTTP+JSON 1.0 acme",
				"https://expenses.example.com/a2a/v03 JSONRPC 0.3 ",
			},
			schemes: []string{
				"bearer:http:bearer", "key:apiKey:query/api_key", "mtls:mutualTLS",
				"oauth:oauth2:deviceCode", "oidc:openIdConnect:https://login.example.com/.well-known/openid-configuration",
			},
			reqs:     "[[oidc] [key mtls]]",
			findings: []string{},
		},
		{
			file:     "mixed.json",
			shape:    ShapeMixed,
			versions: []string{"1.0", "0.3"},
			interfaces: []string{
				"https://triage.example.com/a2a/v1 JSONRPC 1.0 ",
				"https://triage.example.com/a2a/v03 JSONRPC 0.3 ",
			},
			schemes:  []string{"bearer:http:bearer"},
			reqs:     "[[bearer]]",
			findings: []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			raw := mustRead(t, tt.file)
			c, err := Parse(raw, DefaultLimits())
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !bytes.Equal(c.Raw, raw) {
				t.Error("Raw differs from input")
			}
			if c.Shape != tt.shape {
				t.Errorf("Shape = %q, want %q", c.Shape, tt.shape)
			}
			if !slices.Equal(c.ProtocolVersions, tt.versions) {
				t.Errorf("ProtocolVersions = %q, want %q", c.ProtocolVersions, tt.versions)
			}
			if got := ifaceStrings(c.Interfaces); !slices.Equal(got, tt.interfaces) {
				t.Errorf("Interfaces =\n%q\nwant\n%q", got, tt.interfaces)
			}
			var schemes []string
			for _, s := range c.SecuritySchemes {
				d := s.Name + ":" + s.Type
				switch s.Type {
				case SchemeHTTP:
					d += ":" + s.Scheme
				case SchemeAPIKey:
					d += ":" + s.In + "/" + s.ParamName
				case SchemeOpenIDConnect:
					d += ":" + s.OpenIDConnectURL
				case SchemeOAuth2:
					var names []string
					for _, f := range s.Flows {
						names = append(names, f.Name)
					}
					d += ":" + strings.Join(names, ",")
				}
				schemes = append(schemes, d)
			}
			if !slices.Equal(schemes, tt.schemes) {
				t.Errorf("schemes = %q, want %q", schemes, tt.schemes)
			}
			if got := reqString(c.SecurityRequirements); got != tt.reqs {
				t.Errorf("requirements = %s, want %s", got, tt.reqs)
			}
			if got := findingCodes(c.Findings); !slices.Equal(got, tt.findings) {
				t.Errorf("findings = %q, want %q\n%+v", got, tt.findings, c.Findings)
			}
		})
	}
}

func reqString(rs []Requirement) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		names := make([]string, len(r))
		for j, ref := range r {
			names[j] = ref.Scheme
		}
		parts[i] = "[" + strings.Join(names, " ") + "]"
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func TestParseDetails(t *testing.T) {
	c, err := Parse(mustRead(t, "v03_full.json"), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Capabilities.Streaming || c.Capabilities.PushNotifications || !c.Capabilities.StateTransitionHistory || !c.Capabilities.ExtendedCard {
		t.Errorf("capabilities = %+v", c.Capabilities)
	}
	if len(c.Capabilities.Extensions) != 1 || string(c.Capabilities.Extensions[0].Params) != `{"maxCitations":10,"style":"inline"}` {
		t.Errorf("extensions = %+v", c.Capabilities.Extensions)
	}
	risk, summary := c.Skills[0], c.Skills[1]
	if !risk.InheritsInputModes || !risk.InheritsOutputModes || !slices.Equal(risk.InputModes, []string{"application/pdf", "text/plain"}) {
		t.Errorf("clause-risk modes: %+v", risk)
	}
	if !summary.InheritsInputModes || summary.InheritsOutputModes ||
		!slices.Equal(summary.OutputModes, []string{"text/markdown", "application/json; charset=utf-8"}) {
		t.Errorf("summary modes: %+v", summary)
	}
	if got := reqString(risk.SecurityRequirements); got != "[[oauth]]" || !slices.Equal(risk.SecurityRequirements[0][0].Scopes, []string{"contracts.review"}) {
		t.Errorf("skill requirements = %s %+v", got, risk.SecurityRequirements)
	}
	// Inherited modes must not alias the card's slice: a consumer appending
	// to one skill's modes would otherwise change the defaults.
	risk.InputModes[0] = "changed"
	if c.DefaultInputModes[0] != "application/pdf" {
		t.Error("skill modes alias the card defaults")
	}
	oauth := c.SecuritySchemes[2]
	if ac := oauth.Flows[0]; ac.TokenURL != "https://auth.example.com/token" || ac.Scopes["contracts.review"] != "Review contracts" ||
		oauth.OAuth2MetadataURL == "" {
		t.Errorf("oauth = %+v", oauth)
	}

	c, err = Parse(mustRead(t, "v10_proto.json"), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Capabilities.ExtendedCard || len(c.Signatures) != 1 || string(c.Signatures[0].Header) != `{"note":"rotated 2025-01"}` {
		t.Errorf("v1.0 capabilities/signatures: %+v %+v", c.Capabilities, c.Signatures)
	}
	if r := c.SecurityRequirements[0][0]; !slices.Equal(r.Scopes, []string{"openid", "expenses"}) {
		t.Errorf("proto list scopes = %q", r.Scopes)
	}
	if got := reqString(c.Skills[0].SecurityRequirements); got != "[[bearer]]" {
		t.Errorf("a2a-go style skill requirements = %s", got)
	}
	if dc := c.SecuritySchemes[3].Flows[0]; dc.DeviceAuthURL != "https://login.example.com/device" || dc.TokenURL == "" {
		t.Errorf("device flow = %+v", dc)
	}
}

// TestParseJSONShape checks the normalized card marshals lists as [] rather
// than null, which API clients rely on.
func TestParseJSONShape(t *testing.T) {
	c, err := Parse([]byte(`{"name":"x","skills":[{"id":"a","name":"A"}]}`), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, frag := range []string{`"interfaces":[]`, `"protocol_versions":["unknown"]`, `"security_schemes":[]`, `"security_requirements":[]`,
		`"default_input_modes":[]`, `"tags":[]`, `"input_modes":[]`, `"output_modes":[]`} {
		if !strings.Contains(string(b), frag) {
			t.Errorf("marshalled card lacks %s: %s", frag, b)
		}
	}
}

func TestParseErrors(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 1000) + "1" + strings.Repeat("}", 1000)
	deepArr := `{"x":` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + "}"
	big := `{"name":"` + strings.Repeat("a", 2<<20) + `"}`
	manySkills := `{"skills":[` + strings.TrimSuffix(strings.Repeat(`{"id":"s"},`, 812), ",") + `]}`
	manyTags := `{"skills":[{"id":"s","tags":[` + strings.TrimSuffix(strings.Repeat(`"t",`, 65), ",") + `]}]}`
	manySchemes := `{"securitySchemes":{`
	for i := range 65 {
		if i > 0 {
			manySchemes += ","
		}
		manySchemes += `"s` + string(rune('A'+i%26)) + strings.Repeat("x", i) + `":{"type":"mutualTLS"}`
	}
	manySchemes += `}}`

	tests := []struct {
		name, in string
		lim      Limits
		code     string
		path     string
		msg      string
	}{
		{"empty", ``, Limits{}, CodeInvalidJSON, "$", "empty"},
		{"whitespace", " \n\t", Limits{}, CodeInvalidJSON, "$", "empty"},
		{"too large", big, Limits{}, CodeTooLarge, "$", "over the limit of 1048576"},
		{"too large custom", `{"name":"abcdef"}`, Limits{MaxBytes: 10}, CodeTooLarge, "$", "17 bytes"},
		{"bom", "\xEF\xBB\xBF{}", Limits{}, CodeInvalidJSON, "$", "byte order mark"},
		{"invalid utf8 in value", `{"name":"caf` + "\xE9" + `"}`, Limits{}, CodeInvalidUTF8, "$.name", "not valid UTF-8"},
		{"invalid utf8 nested", "{\"skills\":[{\"tags\":[\"ok\",\"\xff\xfe\"]}]}", Limits{}, CodeInvalidUTF8, "$.skills[0].tags[1]", ""},
		{"invalid utf8 in key", `{"na` + "\xC3" + `me":"x"}`, Limits{}, CodeInvalidUTF8, "$", ""},
		{"truncated", `{"name":"x"`, Limits{}, CodeInvalidJSON, "$", "end of input"},
		{"unterminated string", `{"name":"x`, Limits{}, CodeInvalidJSON, "$.name", "unterminated"},
		{"bad literal", `{"name":tru}`, Limits{}, CodeInvalidJSON, "$.name", "expected a value"},
		{"trailing data", `{} {}`, Limits{}, CodeInvalidJSON, "$", "after the top-level"},
		{"trailing comma", `{"a":1,}`, Limits{}, CodeInvalidJSON, "$", "string object key"},
		{"single quotes", `{'a':1}`, Limits{}, CodeInvalidJSON, "$", ""},
		{"control char", "{\"a\":\"x\x01\"}", Limits{}, CodeInvalidJSON, "$.a", "control character"},
		{"bad escape", `{"a":"\x"}`, Limits{}, CodeInvalidJSON, "$.a", "malformed escape"},
		{"top-level array", `[{"name":"x"}]`, Limits{}, CodeNotObject, "$", "not an object"},
		{"top-level string", `"card"`, Limits{}, CodeNotObject, "$", ""},
		{"top-level null", `null`, Limits{}, CodeNotObject, "$", ""},
		{"garbage", `hello`, Limits{}, CodeInvalidJSON, "$", ""},
		{"leading zero", `{"a":01}`, Limits{}, CodeInvalidJSON, "$", "expected ',' or '}'"},
		{"bare minus", `{"a":-}`, Limits{}, CodeInvalidJSON, "$.a", "expected a value"},
		{"bad exponent", `{"a":1e}`, Limits{}, CodeInvalidJSON, "$.a", "exponent"},
		{"depth 1000 objects", deep, Limits{}, CodeTooDeep, "$" + strings.Repeat(".a", 32), "limit of 32"},
		{"depth 1000 arrays", deepArr, Limits{}, CodeTooDeep, "$.x" + strings.Repeat("[0]", 31), ""},
		{"depth custom", `{"a":{"b":{}}}`, Limits{MaxDepth: 2}, CodeTooDeep, "$.a.b", ""},
		{"duplicate top", `{"name":"a","name":"b"}`, Limits{}, CodeDuplicateKey, "$.name", `"name" appears more than once`},
		{"duplicate nested", `{"skills":[{"id":"a"},{"id":"b","tags":[],"id":"c"}]}`, Limits{}, CodeDuplicateKey, "$.skills[1].id", ""},
		{"duplicate via escape", `{"url":"a","u\u0072l":"b"}`, Limits{}, CodeDuplicateKey, "$.url", ""},
		{"duplicate in big object", `{"securitySchemes":{"scopes":{` + bigObjectWithDup() + `}}}`, Limits{}, CodeDuplicateKey, `$.securitySchemes.scopes.k7`, ""},
		{"long string", `{"name":"` + strings.Repeat("x", 100) + `"}`, Limits{MaxStringLen: 50}, CodeLimitExceeded, "$.name", "100 bytes exceeds the limit of 50"},
		{"too many skills", manySkills, Limits{}, CodeLimitExceeded, "$.skills", "$.skills: 812 skills exceed the limit of 500"},
		{"too many tags", manyTags, Limits{}, CodeLimitExceeded, "$.skills[0].tags", "65 tags exceed the limit of 64"},
		{"too many schemes", manySchemes, Limits{}, CodeLimitExceeded, "$.securitySchemes", "65 security schemes"},
		{"too many modes", `{"defaultInputModes":["a/b","c/d","e/f"]}`, Limits{MaxModes: 2}, CodeLimitExceeded, "$.defaultInputModes", ""},
		{"too many signatures", `{"signatures":[{},{},{}]}`, Limits{MaxSignatures: 2}, CodeLimitExceeded, "$.signatures", ""},
		{"too many interfaces", `{"supportedInterfaces":[{},{}]}`, Limits{MaxInterfaces: 1}, CodeLimitExceeded, "$.supportedInterfaces", ""},
		{"too many additional", `{"url":"https://a.example","additionalInterfaces":[{},{}]}`, Limits{MaxInterfaces: 1}, CodeLimitExceeded, "$.additionalInterfaces", ""},
		{"too many extensions", `{"capabilities":{"extensions":[{},{}]}}`, Limits{MaxExtensions: 1}, CodeLimitExceeded, "$.capabilities.extensions", ""},
		{"too many examples", `{"skills":[{"id":"a","examples":["1","2"]}]}`, Limits{MaxExamplesPerSkill: 1}, CodeLimitExceeded, "$.skills[0].examples", ""},
		{"too many requirements", `{"security":[{},{}]}`, Limits{MaxSchemes: 1}, CodeLimitExceeded, "$.security", ""},
		{"empty object", `{}`, Limits{}, CodeNotACard, "$", "has no name but gives a caller nothing to call or choose"},
		{"package manifest", `{"name":"my-site","version":"1.0.0","description":"x","homepage":"https://a.example"}`, Limits{}, CodeNotACard, "$", "no agent card field at all"},
		{"nameless, skill-less, endpoint-less", `{"description":"an agent?","version":"1"}`, Limits{}, CodeNotACard, "$", "nothing to call or choose"},
		{"another well-known format", `{"schema_version":"v1","name_for_human":"X","api":{"type":"openapi","url":"https://a.example/openapi.yaml"}}`, Limits{}, CodeNotACard, "$", "no name"},
		{"nameless with one card word", `{"url":"https://a.example/feed","title":"Feed"}`, Limits{}, CodeNotACard, "$", "only url"},
		{"a name and MCP tools as capabilities", `{"name":"Files","capabilities":[{"name":"read_file","description":"Reads a file"}]}`, Limits{}, CodeNotACard, "$",
			"has a name but gives a caller nothing to call or choose: no endpoint (an object in supportedInterfaces or additionalInterfaces, or a url) and no skill (an object in skills); of the agent card fields it has only capabilities: it is not an A2A agent card"},
		{"a résumé's skills", `{"name":"Jane Doe","skills":["python","go"],"capabilities":{"remote":true}}`, Limits{}, CodeNotACard, "$", "nothing to call or choose"},
		{"a name and product features", `{"name":"Acme CRM","description":"CRM","capabilities":{"sso":true,"export":"csv"},"defaultInputModes":["text"]}`, Limits{}, CodeNotACard, "$", "only capabilities, defaultInputModes"},
		{"empty lists and a blank url", `{"name":"X","url":" ","skills":[],"supportedInterfaces":[],"protocolVersion":"0.3.0"}`, Limits{}, CodeNotACard, "$", "nothing to call"},
		{"null skills and nothing else", `{"name":"X","skills":null,"capabilities":{}}`, Limits{}, CodeNotACard, "$", "nothing to call"},
		{"nameless card", `{"url":"https://a.example/a2a","skills":[{"id":"s","name":"S"}]}`, Limits{}, CodeMissingName, "$.name", "$.name is missing"},
		{"null name", `{"name":null,"url":"https://a.example/a2a","capabilities":{}}`, Limits{}, CodeMissingName, "$.name", "$.name is null"},
		{"blank name", `{"name":"  ","url":"https://a.example/a2a","capabilities":{}}`, Limits{}, CodeMissingName, "$.name", "$.name is empty"},
		{"numeric name", `{"name":42,"url":"https://a.example/a2a","capabilities":{}}`, Limits{}, CodeMissingName, "$.name", "a number, not a string"},
		{"name under display_name", `{"display_name":"Weather","url":"https://a.example/a2a","skills":[{"id":"s","name":"S"}]}`, Limits{}, CodeMissingName, "$.name",
			`the card has $.display_name "Weather", which A2A clients do not read: write it as name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(tt.in), tt.lim)
			if err == nil {
				t.Fatalf("Parse succeeded: %+v", c.Findings)
			}
			if c != nil {
				t.Error("card returned with an error")
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("errors.Is(err, ErrInvalid) = false for %v", err)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T is not a *ParseError", err)
			}
			if pe.Code != tt.code || pe.Path != tt.path {
				t.Errorf("got %s at %s (%s), want %s at %s", pe.Code, pe.Path, pe.Message, tt.code, tt.path)
			}
			if !strings.Contains(pe.Message, tt.msg) {
				t.Errorf("message %q lacks %q", pe.Message, tt.msg)
			}
		})
	}
}

// bigObjectWithDup has more keys than dupMapThreshold, with "k7" repeated
// at the end, to exercise the map-based duplicate check.
func bigObjectWithDup() string {
	var b strings.Builder
	for i := range 100 {
		b.WriteString(`"k` + strconv.Itoa(i) + `":"",`)
	}
	b.WriteString(`"k7":""`)
	return b.String()
}

// TestStoredSkipsAdmission: a card stored under older, looser rules reads
// back with its faults as findings; refusing it would make its agent
// answer 500 on every read while search still lists it.
func TestStoredSkipsAdmission(t *testing.T) {
	for _, in := range []string{
		`{"url":"https://a.example/a2a","skills":[{"id":"s","name":"S"}]}`,
		`{"name":"Acme CRM","capabilities":{"sso":true},"defaultInputModes":["text"]}`,
	} {
		if _, err := Parse([]byte(in), Limits{}); err == nil {
			t.Fatalf("%s admitted", in)
		}
		c, err := Parse([]byte(in), Limits{Stored: true})
		if err != nil {
			t.Fatalf("stored %s: %v", in, err)
		}
		if !slices.ContainsFunc(c.Findings, func(f Finding) bool { return f.Severity == SeverityError }) {
			t.Errorf("stored %s read without an error finding: %+v", in, c.Findings)
		}
	}
	// Limits other than admission still hold.
	if _, err := Parse([]byte(`{"name":"`+strings.Repeat("x", 100)+`"}`), Limits{Stored: true, MaxStringLen: 50}); err == nil {
		t.Error("a stored read ignored MaxStringLen")
	}
}
