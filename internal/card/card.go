// Package card understands A2A agent cards of every protocol version.
//
// Parse turns the raw bytes of a card written for v0.2.x, v0.3 or v1.0 (or a
// mixed card carrying fields of several versions) into one normalized Card,
// keeps the raw bytes verbatim, and reports lint findings. The package does no
// I/O: fetching belongs to the crawler, storage to the catalog.
package card

import "encoding/json"

// Shape names the generation of card fields a card uses.
type Shape string

const (
	// ShapeV02 is a card of v0.2.2 or earlier: a bare `url`, no `protocolVersion`.
	ShapeV02 Shape = "v0.2"
	// ShapeV03 is a v0.2.5–v0.3 card: `url`, `preferredTransport`,
	// `additionalInterfaces`, `security`.
	ShapeV03 Shape = "v0.3"
	// ShapeV10 is a v1.0 card: `supportedInterfaces`, `securityRequirements`.
	ShapeV10 Shape = "v1.0"
	// ShapeMixed carries both v1.0 and v0.3 fields; both views are kept.
	ShapeMixed Shape = "mixed"
)

// Protocol bindings defined by the specification. Cards may carry other
// (extension) values; those are kept and flagged by lint.
const (
	BindingJSONRPC  = "JSONRPC"
	BindingGRPC     = "GRPC"
	BindingHTTPJSON = "HTTP+JSON"
)

// VersionUnknown is the protocol version of an interface (and of a card)
// that declares none: neither the interface, nor the card's
// protocolVersion, nor its protocolVersions. It is recorded as such, never
// guessed, so that a protocol_version search finds such cards.
const VersionUnknown = "unknown"

// Security scheme types, named as in OpenAPI 3 and the v0.3 card. v1.0's
// proto-style keys (apiKeySecurityScheme, …) are mapped onto these.
const (
	SchemeAPIKey        = "apiKey"
	SchemeHTTP          = "http"
	SchemeOAuth2        = "oauth2"
	SchemeOpenIDConnect = "openIdConnect"
	SchemeMutualTLS     = "mutualTLS"
)

// Card is the normalized view of one agent card.
type Card struct {
	// Raw is the card exactly as received. Signatures are checked over it
	// and users audit it, so it is never re-marshalled.
	Raw []byte `json:"-"`

	Shape Shape `json:"shape"`
	// ProtocolVersions lists the distinct protocol versions the card
	// declares, newest first ("1.0", "0.3", "0.2").
	ProtocolVersions []string `json:"protocol_versions"`

	Name             string    `json:"name"`
	Description      string    `json:"description"`
	Version          string    `json:"version"`
	Provider         *Provider `json:"provider,omitempty"`
	IconURL          string    `json:"icon_url,omitempty"`
	DocumentationURL string    `json:"documentation_url,omitempty"`

	Capabilities Capabilities `json:"capabilities"`
	// Interfaces are in the card's order of preference: the first one is
	// the preferred interface.
	Interfaces []Interface `json:"interfaces"`

	// SecuritySchemes are sorted by name.
	SecuritySchemes []SecurityScheme `json:"security_schemes"`
	// SecurityRequirements is an OR of ANDs: a caller satisfies one entry.
	SecurityRequirements []Requirement `json:"security_requirements"`

	DefaultInputModes  []string `json:"default_input_modes"`
	DefaultOutputModes []string `json:"default_output_modes"`
	Skills             []Skill  `json:"skills"`

	Signatures []Signature `json:"signatures,omitempty"`
	Findings   []Finding   `json:"findings"`
}

// Provider is the organization that offers the agent.
type Provider struct {
	Organization string `json:"organization"`
	URL          string `json:"url,omitempty"`
}

// Capabilities are the optional protocol features an agent declares.
type Capabilities struct {
	Streaming              bool `json:"streaming"`
	PushNotifications      bool `json:"push_notifications"`
	StateTransitionHistory bool `json:"state_transition_history"`
	// ExtendedCard is v1.0 `capabilities.extendedAgentCard` or v0.3
	// `supportsAuthenticatedExtendedCard`.
	ExtendedCard bool        `json:"extended_card"`
	Extensions   []Extension `json:"extensions,omitempty"`
}

// Extension is a protocol extension the agent supports.
type Extension struct {
	URI         string          `json:"uri"`
	Description string          `json:"description,omitempty"`
	Required    bool            `json:"required"`
	Params      json.RawMessage `json:"params,omitempty"`
}

// Interface is one endpoint: a URL speaking one binding of one protocol version.
type Interface struct {
	URL string `json:"url"`
	// Binding is JSONRPC, GRPC, HTTP+JSON or an extension value,
	// normalized for matching (see NormalizeBinding).
	Binding string `json:"binding"`
	// DeclaredBinding is the binding as the card wrote it ("REST",
	// "jsonrpc") when that differs from Binding; empty otherwise.
	DeclaredBinding string `json:"declared_binding,omitempty"`
	// ProtocolVersion is major.minor, or VersionUnknown.
	ProtocolVersion string `json:"protocol_version"`
	Tenant          string `json:"tenant,omitempty"`
	// Path is the JSON path of the declaration this interface came from.
	Path string `json:"path"`
}

// SecurityScheme is one entry of `securitySchemes`, whatever its card version.
type SecurityScheme struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Description string `json:"description,omitempty"`

	// apiKey
	In        string `json:"in,omitempty"`
	ParamName string `json:"param_name,omitempty"`
	// http
	Scheme       string `json:"scheme,omitempty"`
	BearerFormat string `json:"bearer_format,omitempty"`
	// openIdConnect
	OpenIDConnectURL string `json:"open_id_connect_url,omitempty"`
	// oauth2
	OAuth2MetadataURL string      `json:"oauth2_metadata_url,omitempty"`
	Flows             []OAuthFlow `json:"flows,omitempty"`

	Path string `json:"path"`
}

// OAuthFlow is one OAuth 2.0 flow of an oauth2 scheme.
type OAuthFlow struct {
	// Name is authorizationCode, clientCredentials, implicit, password or deviceCode.
	Name             string            `json:"name"`
	AuthorizationURL string            `json:"authorization_url,omitempty"`
	TokenURL         string            `json:"token_url,omitempty"`
	RefreshURL       string            `json:"refresh_url,omitempty"`
	DeviceAuthURL    string            `json:"device_authorization_url,omitempty"`
	Scopes           map[string]string `json:"scopes,omitempty"`
	PKCERequired     bool              `json:"pkce_required,omitempty"`
}

// Requirement is one alternative of a security requirement list: every
// scheme in it must be satisfied together.
type Requirement []SchemeRef

// SchemeRef names a scheme and the scopes a requirement demands of it.
type SchemeRef struct {
	Scheme string   `json:"scheme"`
	Scopes []string `json:"scopes"`
}

// Skill is one capability of the agent.
type Skill struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
	Examples    []string `json:"examples,omitempty"`
	// InputModes and OutputModes are effective: the skill's own when it
	// declares some, the card's defaults otherwise.
	InputModes  []string `json:"input_modes"`
	OutputModes []string `json:"output_modes"`
	// InheritsInputModes and InheritsOutputModes tell that the skill
	// declared none and took the card's defaults.
	InheritsInputModes   bool          `json:"inherits_input_modes"`
	InheritsOutputModes  bool          `json:"inherits_output_modes"`
	SecurityRequirements []Requirement `json:"security_requirements,omitempty"`
}

// Signature is one JWS entry of `signatures`, kept as written.
type Signature struct {
	Protected string          `json:"protected"`
	Signature string          `json:"signature"`
	Header    json.RawMessage `json:"header,omitempty"`
}

// Severity ranks a lint finding.
type Severity string

const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityInfo    Severity = "info"
)

// Finding is one lint result. Code is stable and documented; Path is a JSON
// path into the raw card ("$.skills[2].id").
type Finding struct {
	Code     string   `json:"code"`
	Severity Severity `json:"severity"`
	Path     string   `json:"path"`
	Message  string   `json:"message"`
}
