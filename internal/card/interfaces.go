package card

import (
	"cmp"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// ifaceDecl is one interface as declared, before deduplication.
type ifaceDecl struct {
	Interface
	// list names the declaring list; duplicates are only reported within
	// one list, since repeating the main (url, preferredTransport) pair in
	// additionalInterfaces is what §5.6.2 asks for, and a mixed card repeats
	// its v0.3 endpoints in supportedInterfaces by design.
	list string
}

// interfaces collects the card's endpoints in order of preference: the v1.0
// view first (supportedInterfaces), then the v0.3 view (url +
// preferredTransport, then additionalInterfaces), deduplicated by (url,
// binding, version). It also returns the version the v0.3 view declares
// ("" when the card has none).
func (p *parser) interfaces(top map[string]any, shape Shape) ([]Interface, []string) {
	var decls []ifaceDecl
	endpointFields := false
	declared := p.cardVersions(top)
	if shape == ShapeV10 || shape == ShapeMixed {
		endpointFields = true
		decls = append(decls, p.supportedInterfaces(top, declared)...)
	} else if len(declared) > 0 {
		if major, _, ok := versionNums(declared[0]); ok && major >= 1 {
			// v1.0 clients read only supportedInterfaces (v1.0 AgentCard);
			// a card declaring 1.0 without it offers them no endpoint.
			p.add(LintMissingSupportedInterfaces, SeverityWarning, "$",
				"the card declares protocol %s but has no supportedInterfaces, the only endpoint list v1.0 clients read (v1.0 AgentCard.supportedInterfaces)", declared[0])
		}
	}
	if shape != ShapeV10 {
		v03, present := p.v03Interfaces(top, shape, declared)
		endpointFields = endpointFields || present
		decls = append(decls, v03...)
	}

	out := []Interface{}
	type key struct{ url, binding, version string }
	seen := map[key]string{}
	bindingOf := map[string]ifaceDecl{}
	conflicted := map[string]bool{}
	for _, d := range decls {
		k := key{d.URL, d.Binding, d.ProtocolVersion}
		if list, dup := seen[k]; dup {
			if list == d.list && d.list != "main" {
				p.add(LintDuplicateInterface, SeverityInfo, d.Path,
					"%s repeats %s %s (protocol %s) already listed", d.Path, d.URL, d.Binding, d.ProtocolVersion)
			}
			continue
		}
		seen[k] = d.list
		if first, ok := bindingOf[d.URL]; ok && first.Binding != d.Binding && !conflicted[d.URL] {
			conflicted[d.URL] = true
			p.add(LintConflictingTransports, SeverityError, d.Path,
				"%s declares %s at %s, which %s already declares as %s; one URL must not declare conflicting transports (spec §5.6.4)",
				d.Path, d.Binding, d.URL, first.Path, first.Binding)
		} else if !ok {
			bindingOf[d.URL] = d
		}
		out = append(out, d.Interface)
	}
	if len(out) == 0 && endpointFields {
		p.add(LintNoInterfaces, SeverityError, "$", "the card declares no usable interface: clients cannot reach the agent")
	}
	return out, declared
}

// cardVersions reads the card-level version declarations: v0.3's
// `protocolVersion` and the v1.0 release candidates' `protocolVersions`
// array (which the v1.0.1 migration notes still tell clients to read), in
// that order, normalized, without repeats.
func (p *parser) cardVersions(top map[string]any) []string {
	var out []string
	add := func(v, path string) {
		if strings.TrimSpace(v) == "" {
			p.add(LintInvalidProtocolVersion, SeverityWarning, path, "%s is blank; it declares no version", path)
			return
		}
		n, ok := p.protocolVersion(v, path, "it declares no version")
		if ok && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	if pv, ok := p.str(top, "protocolVersion", "$"); ok {
		add(pv, "$.protocolVersion")
	}
	list, _ := p.array(top, "protocolVersions", "$", p.lim.MaxInterfaces, "protocol versions")
	for i, v := range list {
		path := pathIndex("$.protocolVersions", i)
		s, ok := v.(string)
		if !ok {
			p.wrongType(path, "a string", v)
			continue
		}
		add(s, path)
	}
	return out
}

// supportedInterfaces reads the v1.0 endpoint list. An interface's version
// is its own protocolVersion, else each version the card declares (see
// cardVersions), else VersionUnknown: a guess would send a client the wrong
// wire format.
func (p *parser) supportedInterfaces(top map[string]any, declared []string) []ifaceDecl {
	list, _ := p.array(top, "supportedInterfaces", "$", p.lim.MaxInterfaces, "interfaces")
	var out []ifaceDecl
	for i, v := range list {
		base := pathIndex("$.supportedInterfaces", i)
		o, ok := v.(map[string]any)
		if !ok {
			p.wrongType(base, "an object", v)
			continue
		}
		rawURL := p.reqStr(o, "url", base, SeverityError)
		written := p.reqStr(o, "protocolBinding", base, SeverityError)
		binding := ""
		if written != "" {
			binding = p.binding(written, base+".protocolBinding")
		}
		versions := declared
		pv, hasPV := p.str(o, "protocolVersion", base)
		if hasPV && strings.TrimSpace(pv) != "" {
			instead := "recorded as " + VersionUnknown
			if len(declared) > 0 {
				instead = "read as the card-level " + strings.Join(declared, ", ")
			}
			if n, ok := p.protocolVersion(pv, base+".protocolVersion", instead); ok {
				versions = []string{n}
			} else if len(declared) == 0 {
				versions = []string{VersionUnknown}
			}
		} else if len(declared) > 0 {
			p.add(LintMissingProtocolVersion, SeverityWarning, base+".protocolVersion",
				"%s.protocolVersion is required (v1.0 AgentInterface); read as the card-level %s", base, strings.Join(declared, ", "))
		} else {
			versions = []string{VersionUnknown}
			p.add(LintMissingProtocolVersion, SeverityWarning, base+".protocolVersion",
				"%s.protocolVersion is required (v1.0 AgentInterface) and the card declares no version either; recorded as %s", base, VersionUnknown)
		}
		if rawURL == "" || binding == "" || !p.endpointURL(rawURL, binding, base+".url") {
			continue
		}
		tenant := p.optStr(o, "tenant", base)
		for _, v := range versions {
			out = append(out, ifaceDecl{list: "supported", Interface: Interface{
				URL: rawURL, Binding: binding, DeclaredBinding: declaredBinding(written, binding), ProtocolVersion: v,
				Tenant: tenant, Path: base,
			}})
		}
	}
	return out
}

// declaredBinding is the binding as written when it differs from its
// normalized form, for display.
func declaredBinding(written, binding string) string {
	if w := strings.TrimSpace(written); w != binding {
		return w
	}
	return ""
}

// v03Interfaces reads url, preferredTransport and additionalInterfaces
// (v0.2.5–v0.3; a v0.2 card has only url). Their version is the card's
// declared one (see cardVersions), else VersionUnknown: v0.2.2 and earlier
// had no version field, and a guess would be a wrong answer to a
// protocol_version search. present tells whether any endpoint field
// exists.
func (p *parser) v03Interfaces(top map[string]any, shape Shape, declared []string) (out []ifaceDecl, present bool) {
	versions := declared
	if len(versions) == 0 {
		versions = []string{VersionUnknown}
	}
	// preferredTransport arrived with v0.3 (§5.6.1 makes it required);
	// v0.2.x cards had only a JSON-RPC url.
	requiresPT := len(declared) > 0 && !isV02(declared[0])

	mainURL, hasURL := p.str(top, "url", "$")
	_, urlPresent := field(top, "url")
	mainURL = strings.TrimSpace(mainURL)
	preferred, writtenPT := BindingJSONRPC, ""
	pt, hasPT := p.str(top, "preferredTransport", "$")
	if hasPT && strings.TrimSpace(pt) != "" {
		writtenPT = pt
		preferred = p.binding(pt, "$.preferredTransport")
	}
	switch {
	case mainURL != "" && shape == ShapeMixed && !hasPT:
		// A mixed card's v1.0 view is supportedInterfaces; a url left
		// next to it without preferredTransport declares no transport,
		// and inventing JSONRPC there would contradict the card.
		p.add(LintIgnoredURL, SeverityInfo, "$.url",
			"$.url %q has no preferredTransport next to supportedInterfaces; it declares no interface and is ignored", mainURL)
		mainURL = ""
	case mainURL != "":
		present = true
		if !hasPT && requiresPT {
			p.add(LintMissingPreferredTransport, SeverityWarning, "$.preferredTransport",
				"$.preferredTransport must be present in a protocol %s card (v0.3 §5.6.1, §5.6.4); read as JSONRPC, the schema default", declared[0])
		}
		if p.endpointURL(mainURL, preferred, "$.url") {
			for _, v := range versions {
				out = append(out, ifaceDecl{list: "main", Interface: Interface{
					URL: mainURL, Binding: preferred, DeclaredBinding: declaredBinding(writtenPT, preferred), ProtocolVersion: v, Path: "$.url",
				}})
			}
		}
	case urlPresent:
		if hasURL {
			p.add(LintMissingField, SeverityError, "$.url", "$.url is required but empty (v0.3 §5.5)")
		}
	case shape != ShapeMixed:
		_, hasAdditional := field(top, "additionalInterfaces")
		if !hasAdditional {
			p.add(LintMissingField, SeverityError, "$.url", "$.url is required (v0.3 §5.5); the card has no supportedInterfaces either")
		} else {
			p.add(LintMissingField, SeverityError, "$.url", "$.url is required; v0.3 clients connect to it first (v0.3 §5.6.3)")
		}
	}

	list, ok := p.array(top, "additionalInterfaces", "$", p.lim.MaxInterfaces, "interfaces")
	if !ok {
		return out, present
	}
	present = true
	pairListed := false
	for i, v := range list {
		base := pathIndex("$.additionalInterfaces", i)
		o, ok := v.(map[string]any)
		if !ok {
			p.wrongType(base, "an object", v)
			continue
		}
		rawURL := strings.TrimSpace(p.reqStr(o, "url", base, SeverityError))
		written := p.reqStr(o, "transport", base, SeverityError)
		if written == "" || rawURL == "" {
			continue
		}
		binding := p.binding(written, base+".transport")
		if rawURL == mainURL && binding == preferred {
			pairListed = true
		}
		if !p.endpointURL(rawURL, binding, base+".url") {
			continue
		}
		for _, v := range versions {
			out = append(out, ifaceDecl{list: "additional", Interface: Interface{
				URL: rawURL, Binding: binding, DeclaredBinding: declaredBinding(written, binding), ProtocolVersion: v, Path: base,
			}})
		}
	}
	if len(list) > 0 && mainURL != "" && !pairListed {
		p.add(LintInterfaceIncomplete, SeverityWarning, "$.additionalInterfaces",
			"$.additionalInterfaces should include the main endpoint (%s, %s) for completeness (v0.3 §5.6.2)", mainURL, preferred)
	}
	return out, present
}

// isV02 tells a normalized 0.2.x version.
func isV02(v string) bool {
	major, minor, ok := versionNums(v)
	return ok && major == 0 && minor <= 2
}

// binding canonicalizes a transport name. Case variants of the core
// bindings are accepted with a warning; anything else is kept as an
// extension binding.
func (p *parser) binding(v, path string) string {
	t := strings.TrimSpace(v)
	for _, b := range []string{BindingJSONRPC, BindingGRPC, BindingHTTPJSON} {
		if t == b {
			return b
		}
		if strings.EqualFold(t, b) {
			p.add(LintNoncanonicalBinding, SeverityWarning, path, "%s %q should be written %q (v0.3 §5.5.5 TransportProtocol)", path, v, b)
			return b
		}
	}
	if n := NormalizeBinding(t); n != t {
		p.add(LintUnknownBinding, SeverityWarning, path,
			"%s %q is not a core transport name (JSONRPC, GRPC, HTTP+JSON; v0.3 §5.5.5); read as %s, whose informal name it is, but strict clients will not match it", path, v, n)
		return n
	}
	p.add(LintUnknownBinding, SeverityWarning, path,
		"%s %q is not a core transport (JSONRPC, GRPC, HTTP+JSON; v0.3 §5.5.5); clients may not speak it", path, v)
	return t
}

// NormalizeBinding maps a transport name onto the spec's spelling for
// matching: case variants of the core bindings and REST, the informal name
// of HTTP+JSON (v0.3 §3.5.3 "HTTP+JSON/REST"). Extension bindings come back
// trimmed, as written.
func NormalizeBinding(b string) string {
	t := strings.TrimSpace(b)
	for _, known := range []string{BindingJSONRPC, BindingGRPC, BindingHTTPJSON} {
		if strings.EqualFold(t, known) {
			return known
		}
	}
	if strings.EqualFold(t, "REST") {
		return BindingHTTPJSON
	}
	return t
}

// endpointURL checks an interface URL. gRPC targets are often written
// host:port without a scheme, which gRPC clients accept.
func (p *parser) endpointURL(raw, binding, path string) bool {
	if binding == BindingGRPC && !strings.Contains(raw, "://") && !p.placeholder(raw, path, SeverityError) {
		if host, port, err := net.SplitHostPort(raw); err == nil && host != "" {
			if n, err := strconv.Atoi(port); err == nil && n > 0 && n < 65536 {
				return true
			}
		}
	}
	return p.checkURL(raw, path, SeverityError, "the spec requires HTTPS for interfaces in production (v0.3 §5.5.5 AgentInterface.url)")
}

// checkURL reports raw unless it is an absolute http(s) URL. httpsRule,
// when not empty, is the rule a plain http URL breaks; links the spec sets
// no rule for (icon, documentation, provider) pass "" and get no
// insecure_url finding.
func (p *parser) checkURL(raw, path string, sev Severity, httpsRule string) bool {
	if p.placeholder(raw, path, sev) {
		return false
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		p.add(LintInvalidURL, sev, path, "%s %q is not an absolute http(s) URL", path, raw)
		return false
	}
	if u.Scheme == "http" && httpsRule != "" {
		p.add(LintInsecureURL, SeverityWarning, path, "%s %q is plain http; %s", path, raw, httpsRule)
	}
	return true
}

// placeholder reports raw as an invalid_url when it still holds a
// template marker: sample cards and deployment templates ship with
// `https://<LOOKER_URL>/a2a`, `{BASE_URL}/a2a` or `https://${HOST}/a2a`,
// and some of those even parse as URLs (a host named "<LOOKER_URL>"). An
// interface with one is left out of Card.Interfaces, so no probe, check or
// test run ever sends a request there.
func (p *parser) placeholder(raw, path string, sev Severity) bool {
	marker, ok := PlaceholderIn(raw)
	if !ok {
		return false
	}
	p.add(LintInvalidURL, sev, path, "%s %q holds the template placeholder %s where a real address belongs: it was never filled in", path, raw, marker)
	return true
}

// PlaceholderIn finds a template marker in a URL: {NAME}, {{name}},
// ${NAME}, $NAME, <NAME> (also percent-encoded, %7BNAME%7D), or a host
// label written like a variable name (LOOKER_URL, YOUR_HOST, REPLACE_ME:
// capitals with an underscore, which no registered host name has). It
// returns the marker as written.
func PlaceholderIn(raw string) (string, bool) {
	s := decodeMarkers(raw)
	for _, pair := range [][2]string{{"${", "}"}, {"{{", "}}"}, {"{", "}"}, {"<", ">"}} {
		if i := strings.Index(s, pair[0]); i >= 0 {
			if j := strings.Index(s[i+len(pair[0]):], pair[1]); j >= 0 {
				return s[i : i+len(pair[0])+j+len(pair[1])], true
			}
			return s[i:], true
		}
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '$' {
			continue
		}
		if n := variableLen(s[i+1:]); n > 0 {
			return s[i : i+1+n], true
		}
	}
	rest := s
	if _, after, ok := strings.Cut(s, "://"); ok {
		rest = after
	}
	host, _, _ := strings.Cut(rest, "/")
	if _, h, ok := strings.Cut(host, "@"); ok {
		host = h
	}
	for _, label := range strings.FieldsFunc(host, func(r rune) bool { return r == '.' || r == ':' }) {
		if strings.Contains(label, "_") && variableLen(label) == len(label) {
			return label, true
		}
	}
	return "", false
}

// decodeMarkers undoes the percent-encoding of the characters markers are
// made of, so an encoded marker is seen as written before encoding.
var decodeMarkers = strings.NewReplacer(
	"%7B", "{", "%7b", "{", "%7D", "}", "%7d", "}",
	"%3C", "<", "%3c", "<", "%3E", ">", "%3e", ">", "%24", "$",
).Replace

// variableLen is the length of the environment-variable-like name at the
// start of s (capitals, digits and underscores, starting with a capital or
// an underscore, at least two characters), else 0.
func variableLen(s string) int {
	n := 0
	for n < len(s) {
		c := s[n]
		if c >= 'A' && c <= 'Z' || c == '_' || n > 0 && c >= '0' && c <= '9' {
			n++
			continue
		}
		break
	}
	if n < 2 || n < len(s) && (s[n] >= 'a' && s[n] <= 'z') {
		return 0
	}
	return n
}

// optURL reads an optional URL. An invalid one is dropped, not kept: these
// end up as links and image sources in the console, where a javascript: or
// data: URL would be an injection.
func (p *parser) optURL(o map[string]any, key, base string) string {
	s, ok := p.str(o, key, base)
	if !ok || strings.TrimSpace(s) == "" {
		return ""
	}
	if !p.checkURL(s, pathKey(base, key), SeverityWarning, "") {
		return ""
	}
	return s
}

// protocolVersion normalizes a declared version. A value that is not an
// A2A version at all (an MCP revision date such as "2025-06-18", "latest")
// is reported and not used: ok is false, and instead says what the caller
// reads in its place, so that the card's own declaration stands and a
// protocol_version search never lists a value no A2A client speaks.
func (p *parser) protocolVersion(v, path, instead string) (string, bool) {
	n, ok := NormalizeProtocolVersion(v)
	if !ok {
		p.add(LintInvalidProtocolVersion, SeverityWarning, path,
			"%s %q is not an A2A protocol version (major.minor[.patch], such as 1.0 or 0.3); %s", path, v, instead)
	}
	return n, ok
}

// NormalizeProtocolVersion reduces an A2A protocol version to major.minor
// ("0.3.0" → "0.3", "v1" → "1.0"): interfaces of one major.minor speak the
// same wire format, patch releases only clarify. ok is false when v is not
// numeric; it is then returned trimmed.
func NormalizeProtocolVersion(v string) (string, bool) {
	t := strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(v), "v"), "V")
	parts := strings.Split(t, ".")
	if len(parts) > 3 || t == "" {
		return strings.TrimSpace(v), false
	}
	for _, part := range parts {
		if part == "" || strings.TrimLeft(part, "0123456789") != "" || len(part) > 9 {
			return strings.TrimSpace(v), false
		}
	}
	major, _ := strconv.Atoi(parts[0])
	minor := 0
	if len(parts) > 1 {
		minor, _ = strconv.Atoi(parts[1])
	}
	return strconv.Itoa(major) + "." + strconv.Itoa(minor), true
}

// protocolVersions lists the distinct versions of the interfaces, newest
// first; non-numeric versions sort last. A card-level declaration no
// interface carries (a mixed card's leftover protocolVersion next to an
// ignored url) is not a version a client can speak to the agent, so the
// card-level versions count only when the card has no interface at all.
// A card that declares none anywhere is VersionUnknown, so that
// `protocol_version=unknown` finds it.
func protocolVersions(ifaces []Interface, declared []string) []string {
	out := []string{}
	add := func(v string) {
		if v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	for _, i := range ifaces {
		add(i.ProtocolVersion)
	}
	if len(ifaces) == 0 {
		for _, v := range declared {
			add(v)
		}
	}
	if len(out) == 0 {
		out = append(out, VersionUnknown)
	}
	slices.SortFunc(out, func(a, b string) int {
		am, an, aok := versionNums(a)
		bm, bn, bok := versionNums(b)
		switch {
		case aok && bok:
			if c := cmp.Compare(bm, am); c != 0 {
				return c
			}
			return cmp.Compare(bn, an)
		case aok:
			return -1
		case bok:
			return 1
		}
		return strings.Compare(a, b)
	})
	return out
}

func versionNums(v string) (major, minor int, ok bool) {
	a, b, found := strings.Cut(v, ".")
	if !found {
		return 0, 0, false
	}
	major, err1 := strconv.Atoi(a)
	minor, err2 := strconv.Atoi(b)
	return major, minor, err1 == nil && err2 == nil
}
