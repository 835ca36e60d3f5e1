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
func (p *parser) interfaces(top map[string]any, shape Shape) ([]Interface, string) {
	var decls []ifaceDecl
	endpointFields := false
	if shape == ShapeV10 || shape == ShapeMixed {
		endpointFields = true
		decls = append(decls, p.supportedInterfaces(top)...)
	}
	declared := ""
	if shape != ShapeV10 {
		var v03 []ifaceDecl
		var present bool
		v03, declared, present = p.v03Interfaces(top, shape)
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

func (p *parser) supportedInterfaces(top map[string]any) []ifaceDecl {
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
		binding := p.reqStr(o, "protocolBinding", base, SeverityError)
		if binding != "" {
			binding = p.binding(binding, base+".protocolBinding")
		}
		version := "1.0"
		if pv, ok := p.str(o, "protocolVersion", base); !ok || strings.TrimSpace(pv) == "" {
			p.add(LintMissingProtocolVersion, SeverityWarning, base+".protocolVersion",
				"%s.protocolVersion is required; assuming 1.0", base)
		} else {
			version = p.protocolVersion(pv, base+".protocolVersion")
		}
		if rawURL == "" || binding == "" || !p.endpointURL(rawURL, binding, base+".url") {
			continue
		}
		out = append(out, ifaceDecl{list: "supported", Interface: Interface{
			URL: rawURL, Binding: binding, ProtocolVersion: version,
			Tenant: p.optStr(o, "tenant", base), Path: base,
		}})
	}
	return out
}

// v03Interfaces reads url, preferredTransport and additionalInterfaces
// (v0.2.5–v0.3; a v0.2 card has only url). present tells whether any
// endpoint field exists.
func (p *parser) v03Interfaces(top map[string]any, shape Shape) (out []ifaceDecl, version string, present bool) {
	version = "0.2"
	if shape != ShapeV02 {
		version = "0.3" // the v0.3 schema default of protocolVersion is "0.3.0"
		if pv, ok := p.str(top, "protocolVersion", "$"); ok {
			if strings.TrimSpace(pv) == "" {
				p.add(LintInvalidProtocolVersion, SeverityWarning, "$.protocolVersion", "$.protocolVersion is blank; assuming 0.3")
			} else {
				version = p.protocolVersion(pv, "$.protocolVersion")
			}
		}
	}

	mainURL, hasURL := p.str(top, "url", "$")
	_, urlPresent := field(top, "url")
	mainURL = strings.TrimSpace(mainURL)
	preferred := BindingJSONRPC
	pt, hasPT := p.str(top, "preferredTransport", "$")
	if hasPT && strings.TrimSpace(pt) != "" {
		preferred = p.binding(pt, "$.preferredTransport")
	}
	switch {
	case mainURL != "":
		present = true
		if !hasPT && shape != ShapeV02 {
			p.add(LintMissingPreferredTransport, SeverityWarning, "$.preferredTransport",
				"$.preferredTransport must be present (spec §5.6.4); assuming JSONRPC")
		}
		if p.endpointURL(mainURL, preferred, "$.url") {
			out = append(out, ifaceDecl{list: "main", Interface: Interface{
				URL: mainURL, Binding: preferred, ProtocolVersion: version, Path: "$.url",
			}})
		}
	case urlPresent:
		if hasURL {
			p.add(LintMissingField, SeverityError, "$.url", "$.url is required but empty")
		}
	case shape != ShapeMixed:
		_, hasAdditional := field(top, "additionalInterfaces")
		if !hasAdditional {
			p.add(LintMissingField, SeverityError, "$.url", "$.url is required (the card has no supportedInterfaces either)")
		} else {
			p.add(LintMissingField, SeverityError, "$.url", "$.url is required; v0.3 clients connect to it first")
		}
	}

	list, ok := p.array(top, "additionalInterfaces", "$", p.lim.MaxInterfaces, "interfaces")
	if !ok {
		return out, version, present
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
		binding := p.reqStr(o, "transport", base, SeverityError)
		if binding != "" {
			binding = p.binding(binding, base+".transport")
		}
		if rawURL == "" || binding == "" {
			continue
		}
		if rawURL == mainURL && binding == preferred {
			pairListed = true
		}
		if !p.endpointURL(rawURL, binding, base+".url") {
			continue
		}
		out = append(out, ifaceDecl{list: "additional", Interface: Interface{
			URL: rawURL, Binding: binding, ProtocolVersion: version, Path: base,
		}})
	}
	if len(list) > 0 && mainURL != "" && !pairListed {
		p.add(LintInterfaceIncomplete, SeverityWarning, "$.additionalInterfaces",
			"$.additionalInterfaces should include the main endpoint (%s, %s) for completeness (spec §5.6.2)", mainURL, preferred)
	}
	return out, version, present
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
			p.add(LintNoncanonicalBinding, SeverityWarning, path, "%s %q should be written %q", path, v, b)
			return b
		}
	}
	p.add(LintUnknownBinding, SeverityWarning, path,
		"%s %q is not a core transport (JSONRPC, GRPC, HTTP+JSON); clients may not speak it", path, v)
	return t
}

// endpointURL checks an interface URL. gRPC targets are often written
// host:port without a scheme, which gRPC clients accept.
func (p *parser) endpointURL(raw, binding, path string) bool {
	if binding == BindingGRPC && !strings.Contains(raw, "://") {
		if host, port, err := net.SplitHostPort(raw); err == nil && host != "" {
			if n, err := strconv.Atoi(port); err == nil && n > 0 && n < 65536 {
				return true
			}
		}
	}
	return p.checkURL(raw, path, SeverityError)
}

// checkURL reports raw unless it is an absolute http(s) URL, and warns about
// plain http.
func (p *parser) checkURL(raw, path string, sev Severity) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		p.add(LintInvalidURL, sev, path, "%s %q is not an absolute http(s) URL", path, raw)
		return false
	}
	if u.Scheme == "http" {
		p.add(LintInsecureURL, SeverityWarning, path, "%s %q is plain http; the spec requires HTTPS in production", path, raw)
	}
	return true
}

// optURL reads an optional URL. An invalid one is dropped, not kept: these
// end up as links and image sources in the console, where a javascript: or
// data: URL would be an injection.
func (p *parser) optURL(o map[string]any, key, base string) string {
	s, ok := p.str(o, key, base)
	if !ok || strings.TrimSpace(s) == "" {
		return ""
	}
	if !p.checkURL(s, pathKey(base, key), SeverityWarning) {
		return ""
	}
	return s
}

// protocolVersion normalizes a declared version, reporting malformed ones.
func (p *parser) protocolVersion(v, path string) string {
	n, ok := NormalizeProtocolVersion(v)
	if !ok {
		p.add(LintInvalidProtocolVersion, SeverityWarning, path, "%s %q is not a major.minor[.patch] version", path, v)
	}
	return n
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

// protocolVersions lists the distinct versions of the interfaces and the
// declared v0.3 version, newest first; non-numeric versions sort last.
func protocolVersions(ifaces []Interface, declared string) []string {
	out := []string{}
	add := func(v string) {
		if v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	for _, i := range ifaces {
		add(i.ProtocolVersion)
	}
	add(declared)
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
