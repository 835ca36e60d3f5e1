package card

// Stable lint codes. They are part of the API (stored in reports, filtered
// on in the console); never rename one. Severity is fixed per code except
// where noted.
const (
	// LintMissingField: a required field is absent or blank. Error when the
	// card or entry is unusable without it (name, endpoint, skill id and
	// name), warning otherwise.
	LintMissingField = "missing_field"
	// LintWrongType: a field has the wrong JSON type (`"name": 42`); it is
	// treated as absent. Error: typed SDK clients fail on the whole card.
	LintWrongType = "wrong_type"
	// LintInvalidURL: not an absolute http(s) URL. Error for endpoints and
	// OAuth/OIDC URLs, warning for icon, documentation and provider URLs.
	LintInvalidURL = "invalid_url"
	// LintInsecureURL: an http:// URL where a rule requires HTTPS: an
	// interface (v0.3 §5.5.5 AgentInterface.url) or an OAuth/OIDC endpoint
	// (RFC 6749 §3.1, RFC 8414 §3, OIDC Discovery §4). Not reported for
	// icon, documentation and provider links, which no rule covers.
	// Warning.
	LintInsecureURL = "insecure_url"
	// LintEmptySkills: `skills` is an empty list or null. Warning.
	LintEmptySkills = "empty_skills"
	// LintDuplicateSkillID: two skills share an id; only the first is kept.
	// Error.
	LintDuplicateSkillID = "duplicate_skill_id"
	// LintUnknownBinding: a transport that is not JSONRPC, GRPC or
	// HTTP+JSON. Extension transports are allowed (v0.3 §5.5.5) but no
	// client we know speaks them. REST, the informal name of HTTP+JSON, is
	// reported too but matched as HTTP+JSON (Interface.Binding), so it
	// neither conflicts with HTTP+JSON at one URL nor hides from a binding
	// search. Warning.
	LintUnknownBinding = "unknown_binding"
	// LintNoncanonicalBinding: a core transport spelled in another case
	// ("jsonrpc"); normalized, but strict clients compare exactly. Warning.
	LintNoncanonicalBinding = "noncanonical_binding"
	// LintMissingPreferredTransport: a card declaring protocol 0.3 or later
	// with a `url` but no `preferredTransport`, which v0.3 §5.6.1 and §5.6.4
	// say MUST be present. Not reported for 0.2.x cards (the field did not
	// exist) nor for cards declaring no version. Warning, since the schema
	// defaults it to JSONRPC.
	LintMissingPreferredTransport = "missing_preferred_transport"
	// LintInterfaceIncomplete: `additionalInterfaces` lacks the
	// (`url`, `preferredTransport`) pair it SHOULD repeat (§5.6.2). Warning.
	LintInterfaceIncomplete = "interface_incomplete"
	// LintConflictingTransports: one URL declares two different transports;
	// §5.6.4: the same URL MUST NOT declare conflicting transports. Error.
	LintConflictingTransports = "conflicting_transports"
	// LintDuplicateInterface: the same (url, transport, version) is listed
	// twice in one list. Info.
	LintDuplicateInterface = "duplicate_interface"
	// LintNoInterfaces: endpoint fields are present but yield no usable
	// interface. Error.
	LintNoInterfaces = "no_interfaces"
	// LintMissingProtocolVersion: a v1.0 interface without
	// `protocolVersion` (required by v1.0 AgentInterface). Its version is
	// then the card's `protocolVersion` or each of its `protocolVersions`,
	// else VersionUnknown; never a guess. Warning.
	LintMissingProtocolVersion = "missing_protocol_version"
	// LintInvalidProtocolVersion: a protocol version that is not
	// major.minor[.patch] (an MCP revision date, "latest"). It is not
	// used: an interface takes the card-level declaration instead, else
	// VersionUnknown. Warning.
	LintInvalidProtocolVersion = "invalid_protocol_version"
	// LintUndeclaredScheme: a security requirement names a scheme missing
	// from `securitySchemes`. The agent is then not an anonymous one
	// (Card.SecurityTypes). Error.
	LintUndeclaredScheme = "undeclared_scheme"
	// LintInvalidScheme: a security scheme of unknown type or lacking what
	// its type needs (apiKey name/location, http scheme, oauth2 flows and
	// their URLs, openIdConnect URL). Error; unknown OAuth flow names are a
	// warning.
	LintInvalidScheme = "invalid_scheme"
	// LintInvalidMode: an input/output mode that is neither a media type
	// (RFC 6838 type/subtype) nor a known informal value such as "text".
	// Info.
	LintInvalidMode = "invalid_mode"
	// LintLegacyAuthentication: a v0.1-era `authentication` object, mapped
	// onto security schemes ("none" meaning anonymous). Info.
	LintLegacyAuthentication = "legacy_authentication"
	// LintIncompleteLegacyScheme: a v0.1 `authentication.schemes` entry
	// naming an API key or OAuth scheme, which v0.1 could not describe: no
	// key name or location, no flows or token URL. A caller cannot use it
	// without asking the provider. Warning.
	LintIncompleteLegacyScheme = "incomplete_legacy_scheme"
	// LintUnknownLegacyScheme: a v0.1 `authentication.schemes` entry that
	// names no scheme type nor HTTP authentication scheme (`x402`). No
	// scheme is made of it; its requirement is kept (see
	// SchemeUndeclared). Warning.
	LintUnknownLegacyScheme = "unknown_legacy_scheme"
	// LintMissingSupportedInterfaces: a card declaring protocol 1.0 or later
	// without `supportedInterfaces`, the only endpoint list v1.0 clients
	// read (v1.0 AgentCard). Warning: v0.3 clients may still use `url`.
	LintMissingSupportedInterfaces = "missing_supported_interfaces"
	// LintIgnoredURL: a mixed card's leftover `url` without
	// `preferredTransport`: next to `supportedInterfaces` it declares no
	// transport, so no interface is made of it. Info.
	LintIgnoredURL = "ignored_url"
	// LintMisplacedSecurity: a v1.0 requirement body (`{"schemes": …}`)
	// under the v0.3 key `security`; it is read as the v1.0 requirement it
	// is. Warning: v0.3 clients read it as a scheme named "schemes".
	LintMisplacedSecurity = "misplaced_security"
	// LintLegacySecurityKey: the v0.3 key `security` in a v1.0 card (no v0.3
	// endpoint fields). v1.0 clients read only `securityRequirements`, so
	// the requirement is invisible to them. Warning.
	LintLegacySecurityKey = "legacy_security_key"
	// LintHybridField: a field name of neither version seen in the wild,
	// read as what it evidently means: `supportsExtendedAgentCard` (v0.3
	// `supportsAuthenticatedExtendedCard`, v1.0
	// `capabilities.extendedAgentCard`). Warning: clients ignore it.
	LintHybridField = "hybrid_field"
)
