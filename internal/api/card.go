package api

import (
	"encoding/json"

	"github.com/a2aregistry/registry/internal/card"
)

// The normalized card as the API shows it (the Card schema of
// openapi.json). It is written out apart from card.Card so that a change
// in the card package cannot change the API unnoticed: newCard copies
// field by field, and a test holds the encoding to the document.

// Card is the normalized view of an agent's current card.
type Card struct {
	Shape                string           `json:"shape"`
	ProtocolVersions     []string         `json:"protocol_versions"`
	Name                 string           `json:"name"`
	Description          string           `json:"description"`
	Version              string           `json:"version"`
	Provider             *Provider        `json:"provider,omitempty"`
	IconURL              string           `json:"icon_url,omitempty"`
	DocumentationURL     string           `json:"documentation_url,omitempty"`
	Capabilities         Capabilities     `json:"capabilities"`
	Interfaces           []Interface      `json:"interfaces"`
	SecuritySchemes      []SecurityScheme `json:"security_schemes"`
	SecurityRequirements []Requirement    `json:"security_requirements"`
	DefaultInputModes    []string         `json:"default_input_modes"`
	DefaultOutputModes   []string         `json:"default_output_modes"`
	Skills               []Skill          `json:"skills"`
	Signatures           []Signature      `json:"signatures,omitempty"`
	Findings             []Finding        `json:"findings"`
}

// Provider is the organization that offers the agent.
type Provider struct {
	Organization string `json:"organization"`
	URL          string `json:"url,omitempty"`
}

// Capabilities are the optional protocol features an agent declares.
type Capabilities struct {
	Streaming              bool        `json:"streaming"`
	PushNotifications      bool        `json:"push_notifications"`
	StateTransitionHistory bool        `json:"state_transition_history"`
	ExtendedCard           bool        `json:"extended_card"`
	Extensions             []Extension `json:"extensions,omitempty"`
}

// Extension is a protocol extension the agent supports.
type Extension struct {
	URI         string          `json:"uri"`
	Description string          `json:"description,omitempty"`
	Required    bool            `json:"required"`
	Params      json.RawMessage `json:"params,omitempty"`
}

// Interface is one endpoint of the agent.
type Interface struct {
	URL     string `json:"url"`
	Binding string `json:"binding"`
	// DeclaredBinding is the binding as the card wrote it, when that is
	// an informal name ("REST") for Binding.
	DeclaredBinding string `json:"declared_binding,omitempty"`
	ProtocolVersion string `json:"protocol_version"`
	Tenant          string `json:"tenant,omitempty"`
	Path            string `json:"path"`
}

// SecurityScheme is one entry of the card's security schemes.
type SecurityScheme struct {
	Name              string      `json:"name"`
	Type              string      `json:"type"`
	Description       string      `json:"description,omitempty"`
	In                string      `json:"in,omitempty"`
	ParamName         string      `json:"param_name,omitempty"`
	Scheme            string      `json:"scheme,omitempty"`
	BearerFormat      string      `json:"bearer_format,omitempty"`
	OpenIDConnectURL  string      `json:"open_id_connect_url,omitempty"`
	OAuth2MetadataURL string      `json:"oauth2_metadata_url,omitempty"`
	Flows             []OAuthFlow `json:"flows,omitempty"`
	Path              string      `json:"path"`
}

// OAuthFlow is one OAuth 2.0 flow of an oauth2 scheme.
type OAuthFlow struct {
	Name             string            `json:"name"`
	AuthorizationURL string            `json:"authorization_url,omitempty"`
	TokenURL         string            `json:"token_url,omitempty"`
	RefreshURL       string            `json:"refresh_url,omitempty"`
	DeviceAuthURL    string            `json:"device_authorization_url,omitempty"`
	Scopes           map[string]string `json:"scopes,omitempty"`
	PKCERequired     bool              `json:"pkce_required,omitempty"`
}

// Requirement is one alternative of a security requirement list.
type Requirement []SchemeRef

// SchemeRef names a scheme and the scopes a requirement demands of it.
type SchemeRef struct {
	Scheme string   `json:"scheme"`
	Scopes []string `json:"scopes"`
}

// Skill is one capability of the agent.
type Skill struct {
	ID                   string        `json:"id"`
	Name                 string        `json:"name"`
	Description          string        `json:"description"`
	Tags                 []string      `json:"tags"`
	Examples             []string      `json:"examples,omitempty"`
	InputModes           []string      `json:"input_modes"`
	OutputModes          []string      `json:"output_modes"`
	InheritsInputModes   bool          `json:"inherits_input_modes"`
	InheritsOutputModes  bool          `json:"inherits_output_modes"`
	SecurityRequirements []Requirement `json:"security_requirements,omitempty"`
}

// Signature is one JWS entry of the card's signatures, kept as written.
type Signature struct {
	Protected string          `json:"protected"`
	Signature string          `json:"signature"`
	Header    json.RawMessage `json:"header,omitempty"`
}

// Finding is one lint result; Code is stable.
type Finding struct {
	Code     string `json:"code"`
	Severity string `json:"severity"`
	Path     string `json:"path"`
	Message  string `json:"message"`
}

// newCard is the wire form of c. The arrays the document requires are
// never null, even for a card stored by an older parser that left them out.
func newCard(c *card.Card) *Card {
	if c == nil {
		return nil
	}
	out := &Card{
		Shape:                string(c.Shape),
		ProtocolVersions:     nonNil(c.ProtocolVersions),
		Name:                 c.Name,
		Description:          c.Description,
		Version:              c.Version,
		IconURL:              c.IconURL,
		DocumentationURL:     c.DocumentationURL,
		Capabilities:         newCapabilities(c.Capabilities),
		Interfaces:           make([]Interface, len(c.Interfaces)),
		SecuritySchemes:      make([]SecurityScheme, len(c.SecuritySchemes)),
		SecurityRequirements: newRequirements(c.SecurityRequirements),
		DefaultInputModes:    nonNil(c.DefaultInputModes),
		DefaultOutputModes:   nonNil(c.DefaultOutputModes),
		Skills:               make([]Skill, len(c.Skills)),
		Findings:             newFindings(c.Findings),
	}
	if c.Provider != nil {
		out.Provider = &Provider{Organization: c.Provider.Organization, URL: c.Provider.URL}
	}
	for i, it := range c.Interfaces {
		out.Interfaces[i] = Interface{URL: it.URL, Binding: it.Binding, DeclaredBinding: it.DeclaredBinding, ProtocolVersion: it.ProtocolVersion,
			Tenant: it.Tenant, Path: it.Path}
	}
	for i, sc := range c.SecuritySchemes {
		out.SecuritySchemes[i] = newSecurityScheme(sc)
	}
	for i, sk := range c.Skills {
		out.Skills[i] = Skill{
			ID: sk.ID, Name: sk.Name, Description: sk.Description,
			Tags: nonNil(sk.Tags), Examples: sk.Examples,
			InputModes: nonNil(sk.InputModes), OutputModes: nonNil(sk.OutputModes),
			InheritsInputModes: sk.InheritsInputModes, InheritsOutputModes: sk.InheritsOutputModes,
			SecurityRequirements: newRequirements(sk.SecurityRequirements),
		}
	}
	if c.Signatures != nil {
		out.Signatures = make([]Signature, len(c.Signatures))
		for i, s := range c.Signatures {
			out.Signatures[i] = Signature{Protected: s.Protected, Signature: s.Signature, Header: s.Header}
		}
	}
	return out
}

func newCapabilities(c card.Capabilities) Capabilities {
	out := Capabilities{Streaming: c.Streaming, PushNotifications: c.PushNotifications,
		StateTransitionHistory: c.StateTransitionHistory, ExtendedCard: c.ExtendedCard}
	if c.Extensions != nil {
		out.Extensions = make([]Extension, len(c.Extensions))
		for i, e := range c.Extensions {
			out.Extensions[i] = Extension{URI: e.URI, Description: e.Description, Required: e.Required, Params: e.Params}
		}
	}
	return out
}

func newSecurityScheme(sc card.SecurityScheme) SecurityScheme {
	out := SecurityScheme{Name: sc.Name, Type: sc.Type, Description: sc.Description, In: sc.In, ParamName: sc.ParamName,
		Scheme: sc.Scheme, BearerFormat: sc.BearerFormat, OpenIDConnectURL: sc.OpenIDConnectURL,
		OAuth2MetadataURL: sc.OAuth2MetadataURL, Path: sc.Path}
	if sc.Flows != nil {
		out.Flows = make([]OAuthFlow, len(sc.Flows))
		for i, f := range sc.Flows {
			out.Flows[i] = OAuthFlow{Name: f.Name, AuthorizationURL: f.AuthorizationURL, TokenURL: f.TokenURL,
				RefreshURL: f.RefreshURL, DeviceAuthURL: f.DeviceAuthURL, Scopes: f.Scopes, PKCERequired: f.PKCERequired}
		}
	}
	return out
}

// newRequirements copies reqs with every scope list non-null. The list
// itself is never null (a skill's empty list is omitted).
func newRequirements(reqs []card.Requirement) []Requirement {
	out := make([]Requirement, len(reqs))
	for i, r := range reqs {
		refs := make(Requirement, len(r))
		for j, ref := range r {
			refs[j] = SchemeRef{Scheme: ref.Scheme, Scopes: nonNil(ref.Scopes)}
		}
		out[i] = refs
	}
	return out
}

func newFindings(fs []card.Finding) []Finding {
	out := make([]Finding, len(fs))
	for i, f := range fs {
		out[i] = Finding{Code: f.Code, Severity: string(f.Severity), Path: f.Path, Message: f.Message}
	}
	return out
}
