package card

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// sdkCard is what a real v1.0 agent built on a2a-go serves.
func sdkCard() *a2a.AgentCard {
	return &a2a.AgentCard{
		Name:        "SDK Agent",
		Description: "Built with a2a-go.",
		Version:     "0.9.0",
		SupportedInterfaces: []*a2a.AgentInterface{
			a2a.NewAgentInterface("https://sdk.example.com/a2a", a2a.TransportProtocolJSONRPC),
			{URL: "https://sdk.example.com/rest", ProtocolBinding: a2a.TransportProtocolHTTPJSON, ProtocolVersion: "1.0", Tenant: "t1"},
			{URL: "https://sdk.example.com/v03", ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: "0.3"},
		},
		Provider:     &a2a.AgentProvider{Org: "Example SDK Co", URL: "https://example.com"},
		Capabilities: a2a.AgentCapabilities{Streaming: true, ExtendedAgentCard: true},
		SecuritySchemes: a2a.NamedSecuritySchemes{
			"oauth": a2a.OAuth2SecurityScheme{Flows: a2a.AuthorizationCodeOAuthFlow{
				AuthorizationURL: "https://auth.example.com/authorize", TokenURL: "https://auth.example.com/token",
				Scopes: map[string]string{"read": "Read"}, PKCERequired: true,
			}},
			"key":    a2a.APIKeySecurityScheme{Location: a2a.APIKeySecuritySchemeLocationHeader, Name: "X-Key"},
			"bearer": a2a.HTTPAuthSecurityScheme{Scheme: "Bearer", BearerFormat: "JWT"},
			"oidc":   a2a.OpenIDConnectSecurityScheme{OpenIDConnectURL: "https://auth.example.com/.well-known/openid-configuration"},
			"mtls":   a2a.MutualTLSSecurityScheme{},
		},
		SecurityRequirements: a2a.SecurityRequirementsOptions{{"oauth": {"read"}}, {"key": {}, "mtls": {}}},
		DefaultInputModes:    []string{"text/plain"},
		DefaultOutputModes:   []string{"text/plain", "application/json"},
		Skills: []a2a.AgentSkill{{
			ID: "echo", Name: "Echo", Description: "Echoes.", Tags: []string{"test"},
			InputModes:           []string{"application/json"},
			SecurityRequirements: a2a.SecurityRequirementsOptions{{"bearer": {}}},
		}},
	}
}

func checkSDKCard(t *testing.T, c *Card, wantShape Shape, wantIfaces []string) {
	t.Helper()
	if c.Shape != wantShape {
		t.Errorf("Shape = %s, want %s", c.Shape, wantShape)
	}
	for _, f := range c.Findings {
		t.Errorf("unexpected finding %s at %s: %s", f.Code, f.Path, f.Message)
	}
	if got := ifaceStrings(c.Interfaces); !slices.Equal(got, wantIfaces) {
		t.Errorf("interfaces = %q, want %q", got, wantIfaces)
	}
	if !slices.Equal(c.ProtocolVersions, []string{"1.0", "0.3"}) {
		t.Errorf("versions = %q", c.ProtocolVersions)
	}
	var types []string
	for _, s := range c.SecuritySchemes {
		types = append(types, s.Name+":"+s.Type)
	}
	if !slices.Equal(types, []string{"bearer:http", "key:apiKey", "mtls:mutualTLS", "oauth:oauth2", "oidc:openIdConnect"}) {
		t.Errorf("schemes = %q", types)
	}
	if s := c.SecuritySchemes[0]; s.Scheme != "bearer" || s.BearerFormat != "JWT" {
		t.Errorf("bearer = %+v", s)
	}
	if s := c.SecuritySchemes[1]; s.In != "header" || s.ParamName != "X-Key" {
		t.Errorf("key = %+v", s)
	}
	if f := c.SecuritySchemes[3].Flows; len(f) != 1 || f[0].Name != "authorizationCode" || f[0].TokenURL == "" || f[0].Scopes["read"] != "Read" {
		t.Errorf("oauth flows = %+v", f)
	}
	if got := reqString(c.SecurityRequirements); got != "[[oauth] [key mtls]]" {
		t.Errorf("requirements = %s", got)
	}
	if !c.Capabilities.Streaming || !c.Capabilities.ExtendedCard {
		t.Errorf("capabilities = %+v", c.Capabilities)
	}
	if len(c.Skills) != 1 || c.Skills[0].InheritsInputModes || !c.Skills[0].InheritsOutputModes ||
		reqString(c.Skills[0].SecurityRequirements) != "[[bearer]]" {
		t.Errorf("skills = %+v", c.Skills)
	}
	if c.Provider == nil || c.Provider.Organization != "Example SDK Co" {
		t.Errorf("provider = %+v", c.Provider)
	}
}

// TestParseSDKv1 proves we read the card a v1.0 a2a-go server serves.
func TestParseSDKv1(t *testing.T) {
	raw, err := json.Marshal(sdkCard())
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse(raw, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	checkSDKCard(t, c, ShapeV10, []string{
		"https://sdk.example.com/a2a JSONRPC 1.0 ",
		"https://sdk.example.com/rest HTTP+JSON 1.0 t1",
		"https://sdk.example.com/v03 JSONRPC 0.3 ",
	})
	if f := c.SecuritySchemes[3].Flows[0]; !f.PKCERequired {
		t.Error("pkceRequired lost")
	}
}

// TestParseSDKCompat reads the mixed card a2a-go v2.4.0 serves with its
// v0.3 compatibility layer on (v1.0 fields plus url/preferredTransport/
// protocolVersion/security and OpenAPI-style schemes that also carry the
// v1.0 members). testdata/sdk_a2av0_compat.json is the output of
// a2av0.NewStaticAgentCardProducer(sdkCard()).CardJSON, generated in a
// scratch module: importing a2av0 here would pull a2a-go v0.3 and gRPC into
// go.mod for one test.
func TestParseSDKCompat(t *testing.T) {
	c, err := Parse(mustRead(t, "sdk_a2av0_compat.json"), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	checkSDKCard(t, c, ShapeMixed, []string{
		"https://sdk.example.com/a2a JSONRPC 1.0 ",
		"https://sdk.example.com/rest HTTP+JSON 1.0 t1",
		"https://sdk.example.com/v03 JSONRPC 0.3 ",
	})
}
