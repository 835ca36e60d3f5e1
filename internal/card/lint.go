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
	// LintInsecureURL: an http:// URL; the spec requires HTTPS in
	// production (v0.3 §5.5.5 AgentInterface.url). Warning.
	LintInsecureURL = "insecure_url"
	// LintEmptySkills: `skills` is an empty list. Warning.
	LintEmptySkills = "empty_skills"
	// LintDuplicateSkillID: two skills share an id; only the first is kept.
	// Error.
	LintDuplicateSkillID = "duplicate_skill_id"
	// LintUnknownBinding: a transport that is not JSONRPC, GRPC or
	// HTTP+JSON. Extension transports are allowed (v0.3 §5.5.5) but no
	// client we know speaks them. Warning.
	LintUnknownBinding = "unknown_binding"
	// LintNoncanonicalBinding: a core transport spelled in another case
	// ("jsonrpc"); normalized, but strict clients compare exactly. Warning.
	LintNoncanonicalBinding = "noncanonical_binding"
	// LintMissingPreferredTransport: a v0.3 card without
	// `preferredTransport`, which §5.6.4 says MUST be present. Warning,
	// since the schema defaults it to JSONRPC.
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
	// `protocolVersion`; "1.0" is assumed. Warning.
	LintMissingProtocolVersion = "missing_protocol_version"
	// LintInvalidProtocolVersion: a protocol version that is not
	// major.minor[.patch]; kept as written. Warning.
	LintInvalidProtocolVersion = "invalid_protocol_version"
	// LintUndeclaredScheme: a security requirement names a scheme missing
	// from `securitySchemes`. Error.
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
	// onto security schemes. Info.
	LintLegacyAuthentication = "legacy_authentication"
)
