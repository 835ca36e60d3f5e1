package card

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// ErrInvalidURL is wrapped by every error of CanonicalCardURL and
// CanonicalOrigin: the input is not an absolute http(s) URL we can name an
// agent or a key scope by.
var ErrInvalidURL = errors.New("invalid URL")

// hostProfile maps a host name the way a browser's URL parser does (UTS #46
// non-transitional processing, then Punycode, RFC 5891 §5) but without
// STD3 rules: private networks use names such as my_agent.internal, and
// refusing them would refuse agents the registry exists to list.
var hostProfile = idna.New(
	idna.MapForLookup(),
	idna.Transitional(false),
	idna.StrictDomainName(false),
)

// CanonicalCardURL is the one identity of a card URL: two spellings that
// name the same resource (RFC 3986 §6.2.2 syntax-based and §6.2.3
// scheme-based normalization) give the same string. It lower-cases the
// scheme and host, writes an internationalized host in ASCII (IDNA), drops
// a trailing dot of the host and a default port, writes an IPv4-mapped IPv6
// literal as IPv4, decodes percent-encoded
// unreserved characters and upper-cases the other escapes, collapses
// repeated slashes, resolves "." and ".." segments, and drops an empty query
// and any fragment. The path is kept: a hub serves many agents from one
// host, each at its own card URL.
//
// Errors wrap ErrInvalidURL.
func CanonicalCardURL(raw string) (string, error) {
	u, host, err := parseHTTP(raw)
	if err != nil {
		return "", err
	}
	if u.User != nil {
		// Credentials in an identity would be stored, shown and sent.
		return "", fmt.Errorf("%w: %q: user info (user:password@) is not allowed", ErrInvalidURL, raw)
	}
	path := removeDotSegments(collapseSlashes(normalizeEscapes(u.EscapedPath())))
	if path == "" {
		path = "/" // RFC 3986 §6.2.3: an empty http path is "/"
	}
	out := u.Scheme + "://" + host + path
	if u.RawQuery != "" {
		out += "?" + normalizeEscapes(u.RawQuery)
	}
	return out, nil
}

// CanonicalOrigin is the RFC 6454 origin of an http(s) URL in the same
// canonical form as CanonicalCardURL: scheme://host[:port], default port
// dropped. Path, query, fragment and userinfo do not belong to an origin.
// Errors wrap ErrInvalidURL.
func CanonicalOrigin(raw string) (string, error) {
	u, host, err := parseHTTP(raw)
	if err != nil {
		return "", err
	}
	return u.Scheme + "://" + host, nil
}

// parseHTTP parses raw as an absolute http(s) URL and returns it with its
// canonical host[:port].
func parseHTTP(raw string) (*url.URL, string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, "", fmt.Errorf("%w: %w", ErrInvalidURL, err)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, "", fmt.Errorf("%w: %q is not an http or https URL", ErrInvalidURL, raw)
	}
	if u.Opaque != "" {
		return nil, "", fmt.Errorf("%w: %q: expected scheme://host/path", ErrInvalidURL, raw)
	}
	host, err := canonicalHost(u.Hostname())
	if err != nil {
		return nil, "", fmt.Errorf("%w: %q: %w", ErrInvalidURL, raw, err)
	}
	port := u.Port()
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return nil, "", fmt.Errorf("%w: %q: port %s out of range", ErrInvalidURL, raw, port)
		}
		port = strconv.Itoa(n) // "0443" is 443
		if (u.Scheme == "https" && n == 443) || (u.Scheme == "http" && n == 80) {
			port = ""
		}
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return u, host, nil
}

// canonicalHost lower-cases a host, writes IP literals in their standard
// form (an IPv4-mapped IPv6 address, RFC 4291 §2.5.5.2, as the IPv4
// address it is), and a name in ASCII without its trailing dot.
func canonicalHost(h string) (string, error) {
	if h == "" {
		return "", errors.New("missing host")
	}
	if strings.Contains(h, ":") {
		a, err := netip.ParseAddr(h)
		if err != nil {
			return "", fmt.Errorf("bad IPv6 literal: %w", err)
		}
		return a.Unmap().String(), nil
	}
	// A fully qualified name and its trailing-dot spelling are one host
	// (RFC 1034 §3.1); TLS and HTTP Host handling strip it too.
	h = strings.TrimSuffix(h, ".")
	if h == "" {
		return "", errors.New("missing host")
	}
	if a, err := netip.ParseAddr(h); err == nil {
		return a.String(), nil
	}
	ascii, err := hostProfile.ToASCII(h)
	if err != nil {
		return "", fmt.Errorf("host %q is not a valid domain name: %w", h, err)
	}
	return strings.ToLower(ascii), nil
}

// normalizeEscapes decodes percent-encoded unreserved characters and
// upper-cases the hex digits of every other escape (RFC 3986 §6.2.2.1,
// §6.2.2.2). Reserved characters stay encoded: %2F is not a slash.
func normalizeEscapes(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '%' || i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			b.WriteByte(c)
			continue
		}
		v := unhex(s[i+1])<<4 | unhex(s[i+2])
		if isUnreserved(v) {
			b.WriteByte(v)
		} else {
			b.WriteByte('%')
			b.WriteString(strings.ToUpper(s[i+1 : i+3]))
		}
		i += 2
	}
	return b.String()
}

// collapseSlashes turns runs of "/" into one: servers route //card.json
// and /card.json to the same file, and no agent is known to serve two
// cards that differ only so.
func collapseSlashes(p string) string {
	for strings.Contains(p, "//") {
		p = strings.ReplaceAll(p, "//", "/")
	}
	return p
}

// removeDotSegments is RFC 3986 §5.2.4 for an absolute path.
func removeDotSegments(p string) string {
	if !strings.Contains(p, ".") {
		return p
	}
	segs := strings.Split(p, "/")
	out := make([]string, 0, len(segs))
	for i, s := range segs {
		last := i == len(segs)-1
		switch s {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
			if len(out) > 1 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, s)
		}
	}
	r := strings.Join(out, "/")
	if !strings.HasPrefix(r, "/") {
		r = "/" + r
	}
	return r
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// isUnreserved is RFC 3986 §2.3.
func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}
