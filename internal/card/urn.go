package card

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The ARD v0.91 identifier of an agent (ards-project/ard-spec, spec/ard.md
// §4.2 and Appendix C) is urn:air:<publisher>[:<namespace>]:<name>. The
// registry derives it from the canonical card URL alone, so two registries
// indexing the same card name it alike, and the card URL can be read back
// from it (CardURLOfURN):
//
//	urn:air:<host>:<kind>:<segment>[:<segment>…][:<query>]
//
// <host> is the card URL's host; <kind> is "a2a" for https on the default
// port, else "a2a" followed by "-http" (an http card URL), "-p<port>" (a
// port other than the scheme's default) and "-h<host>" (a host the
// publisher pattern cannot hold: an IP v6 literal, a name with "_"; the
// publisher is then the host with every other byte turned into "-").
// Each path segment follows in order, every byte outside [A-Za-z0-9.-]
// written _XX (upper-case hex; "_" itself is _5F), an empty segment as a
// lone "_" (so the root path "/" is "_"). A query is a last segment that
// starts with _3F (a literal "?" cannot occur in a path).
//
// A card kept without a URL it is served at (an imported card file, whose
// card URL is itself a URN such as urn:a2a-registry:import:<sha256>) has
// no publisher domain: its publisher is the URN's namespace identifier
// under .invalid (RFC 2606 §2), its kind "a2a-urn", and the rest of the
// URN follows segment by segment. Examples:
//
//	https://example.com/.well-known/agent-card.json → urn:air:example.com:a2a:.well-known:agent-card.json
//	http://127.0.0.1:8080/a2a/card?v=2             → urn:air:127.0.0.1:a2a-http-p8080:a2a:card:_3Fv_3D2
//	urn:a2a-registry:import:9f86…                    → urn:air:a2a-registry.invalid:a2a-urn:import:9f86…
const (
	urnPrefix     = "urn:air:"
	urnKind       = "a2a"
	urnKindURN    = "a2a-urn"
	noDomainTLD   = ".invalid"
	cardURNPrefix = "urn:"
)

// URNPattern is the identifier pattern of the ARD conformance tool
// (conformance/bin/conformance-test, URN_REGEX).
var URNPattern = regexp.MustCompile(`^urn:air:([a-zA-Z0-9.-]+)(?::([a-zA-Z0-9._:-]+))?:([a-zA-Z0-9._-]+)$`)

// ErrNotAgentURN is wrapped by CardURLOfURN's errors for an identifier that
// is a well-formed ARD URN but not one the registry derives from a card
// URL: it names no agent here (404, not 400).
var ErrNotAgentURN = errors.New("not an agent URN of this registry")

// ErrMalformedURN is wrapped by CardURLOfURN's errors for an identifier that
// does not match URNPattern, after the urn:ai: spelling is normalised.
var ErrMalformedURN = errors.New("malformed ARD identifier")

// NormalizeURN returns id with its scheme and namespace identifier in lower
// case (RFC 8141 §3.1: they are case-insensitive) and the urn:ai: spelling
// some publishers use written urn:air: (ard-spec #88), so that every
// spelling of one identifier compares equal.
func NormalizeURN(id string) string {
	id = strings.TrimSpace(id)
	for _, p := range []string{"urn:air:", "urn:ai:"} {
		if len(id) > len(p) && strings.EqualFold(id[:len(p)], p) {
			return urnPrefix + id[len(p):]
		}
	}
	return id
}

// IsURN reports whether id looks like an ARD identifier (urn:air: or
// urn:ai:, any case) rather than a registry agent id.
func IsURN(id string) bool {
	return strings.HasPrefix(NormalizeURN(id), urnPrefix)
}

// URNOf is the ARD identifier of the agent whose card is served at
// cardURL. Errors wrap ErrInvalidURL.
func URNOf(cardURL string) (string, error) {
	if rest, ok := strings.CutPrefix(cardURL, cardURNPrefix); ok {
		return urnOfURN(cardURL, rest)
	}
	canon, err := CanonicalCardURL(cardURL)
	if err != nil {
		return "", err
	}
	u, host, err := parseHTTP(canon)
	if err != nil {
		return "", err
	}
	name, port := host, ""
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.HasSuffix(host, "]") {
		name, port = host[:i], host[i+1:]
	}
	var b strings.Builder
	b.WriteString(urnPrefix)
	kind := urnKind
	if u.Scheme == "http" {
		kind += "-http"
	}
	if port != "" {
		kind += "-p" + port
	}
	if publisherOK(name) {
		b.WriteString(name)
	} else {
		b.WriteString(foldPublisher(name))
		kind += "-h" + escapeSegment(name)
	}
	b.WriteString(":" + kind)
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	for _, seg := range strings.Split(strings.TrimPrefix(path, "/"), "/") {
		b.WriteByte(':')
		if seg == "" {
			b.WriteByte('_')
			continue
		}
		b.WriteString(escapeSegment(seg))
	}
	if u.RawQuery != "" {
		b.WriteString(":_3F" + escapeSegment(u.RawQuery))
	}
	return b.String(), nil
}

// CardURLOfURN reads the card URL back from an identifier URNOf made (in
// any spelling NormalizeURN accepts). It refuses every other identifier,
// including non-canonical spellings of one of ours, so that an agent has
// exactly one identifier: errors wrap ErrMalformedURN or ErrNotAgentURN.
func CardURLOfURN(id string) (string, error) {
	id = NormalizeURN(id)
	if !URNPattern.MatchString(id) {
		return "", fmt.Errorf("%w: %q does not match urn:air:<publisher>[:<namespace>]:<name>", ErrMalformedURN, id)
	}
	notOurs := fmt.Errorf("%w: %q", ErrNotAgentURN, id)
	parts := strings.Split(strings.TrimPrefix(id, urnPrefix), ":")
	if len(parts) < 3 || !strings.HasPrefix(parts[1], urnKind) {
		return "", notOurs
	}
	if parts[1] == urnKindURN {
		nid, ok := strings.CutSuffix(parts[0], noDomainTLD)
		if !ok {
			return "", notOurs
		}
		segs := []string{nid}
		for _, p := range parts[2:] {
			raw, err := unescapeSegment(p)
			if err != nil {
				return "", notOurs
			}
			segs = append(segs, raw)
		}
		u := cardURNPrefix + strings.Join(segs, ":")
		if back, err := URNOf(u); err != nil || back != id {
			return "", notOurs
		}
		return u, nil
	}
	host, scheme, port := parts[0], "https", ""
	opts := parts[1][len(urnKind):]
	if rest, ok := strings.CutPrefix(opts, "-http"); ok {
		scheme, opts = "http", rest
	}
	if rest, ok := strings.CutPrefix(opts, "-p"); ok {
		n := 0
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		port, opts = rest[:n], rest[n:]
		if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
			return "", notOurs
		}
	}
	if rest, ok := strings.CutPrefix(opts, "-h"); ok {
		h, err := unescapeSegment(rest)
		if err != nil {
			return "", notOurs
		}
		host, opts = h, ""
	}
	if opts != "" {
		return "", notOurs
	}
	var b strings.Builder
	b.WriteString(scheme + "://" + host)
	if port != "" {
		b.WriteString(":" + port)
	}
	segs := parts[2:]
	if q := segs[len(segs)-1]; strings.HasPrefix(q, "_3F") {
		segs = segs[:len(segs)-1]
		raw, err := unescapeSegment(q[3:])
		if err != nil || len(segs) == 0 {
			return "", notOurs
		}
		return finishURL(&b, segs, "?"+raw, id, notOurs)
	}
	return finishURL(&b, segs, "", id, notOurs)
}

func finishURL(b *strings.Builder, segs []string, query, id string, notOurs error) (string, error) {
	for _, s := range segs {
		b.WriteByte('/')
		if s == "_" {
			continue
		}
		raw, err := unescapeSegment(s)
		if err != nil {
			return "", notOurs
		}
		b.WriteString(raw)
	}
	b.WriteString(query)
	u := b.String()
	// Only the canonical spelling names an agent: the identifier made from
	// the URL read back must be the one given.
	if back, err := URNOf(u); err != nil || back != id {
		return "", notOurs
	}
	return u, nil
}

// urnOfURN is the identifier of a card whose card URL is the URN
// "urn:"+rest.
func urnOfURN(cardURL, rest string) (string, error) {
	parts := strings.Split(rest, ":")
	if len(parts) < 2 || !publisherOK(parts[0]) || strings.Contains(parts[0], ".") {
		return "", fmt.Errorf("%w: %q is not an http(s) URL or a URN with a namespace", ErrInvalidURL, cardURL)
	}
	var b strings.Builder
	b.WriteString(urnPrefix + parts[0] + noDomainTLD + ":" + urnKindURN)
	for _, p := range parts[1:] {
		if p == "" {
			return "", fmt.Errorf("%w: %q has an empty segment", ErrInvalidURL, cardURL)
		}
		b.WriteString(":" + escapeSegment(p))
	}
	return b.String(), nil
}

func publisherOK(host string) bool {
	if host == "" {
		return false
	}
	for i := 0; i < len(host); i++ {
		if !isPublisherByte(host[i]) {
			return false
		}
	}
	return true
}

func isPublisherByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-'
}

// foldPublisher turns every byte the publisher pattern refuses into "-"
// (brackets of an IP v6 literal dropped): a readable publisher, made exact
// by the -h option of the kind.
func foldPublisher(host string) string {
	host = strings.Trim(host, "[]")
	if host == "" {
		return "-"
	}
	b := []byte(host)
	for i, c := range b {
		if !isPublisherByte(c) {
			b[i] = '-'
		}
	}
	return string(b)
}

const hexDigits = "0123456789ABCDEF"

func escapeSegment(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isPublisherByte(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('_')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}

func unescapeSegment(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '_' {
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(s) {
			return "", errors.New("truncated escape")
		}
		hi, lo := strings.IndexByte(hexDigits, s[i+1]), strings.IndexByte(hexDigits, s[i+2])
		if hi < 0 || lo < 0 {
			return "", errors.New("bad escape")
		}
		b.WriteByte(byte(hi<<4 | lo))
		i += 2
	}
	return b.String(), nil
}

// PublisherOf is the publisher segment of cardURL's identifier: the card
// URL's host, folded as URNOf folds it. Errors wrap ErrInvalidURL.
func PublisherOf(cardURL string) (string, error) {
	urn, err := URNOf(cardURL)
	if err != nil {
		return "", err
	}
	p, _, _ := strings.Cut(strings.TrimPrefix(urn, urnPrefix), ":")
	return p, nil
}
