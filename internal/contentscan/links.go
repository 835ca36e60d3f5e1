package contentscan

import (
	"net"
	"net/url"
	"regexp"
	"strings"

	"golang.org/x/net/publicsuffix"

	"github.com/a2aregistry/registry/internal/card"
)

// linkRE finds absolute http(s) URLs in prose.
var linkRE = regexp.MustCompile(`(?i)\bhttps?://[^\s<>"'\x60(){}\[\]]+`)

// linkFindings reports links in one field whose origin is not one of the
// card's own, nor on the same registrable domain (docs.example.com for a
// card on agents.example.com is the operator's own). One finding per
// foreign origin.
func linkFindings(f field, origins []string) []Finding {
	if !strings.Contains(f.text, "://") {
		// What linkRE matches holds it; most prose does not.
		return nil
	}
	var out []Finding
	seen := map[string]bool{}
	for _, loc := range linkRE.FindAllStringIndex(f.text, -1) {
		raw := strings.TrimRight(f.text[loc[0]:loc[1]], ".,;:!?")
		o, err := card.CanonicalOrigin(strings.Map(dropInvisible, raw))
		if err != nil {
			continue
		}
		if seen[o] || ownOrigin(o, origins) {
			continue
		}
		seen[o] = true
		out = append(out, newFinding(CodeForeignLink, card.SeverityInfo, f.path,
			excerpt(f.text, loc[0], loc[0]+len(raw)), "a link to %s, which is not the card's origin (%s)",
			Visible(o), strings.Join(origins, ", ")))
	}
	return out
}

func dropInvisible(r rune) rune {
	if invisible(r) || isTag(r) {
		return -1
	}
	return r
}

func ownOrigin(o string, origins []string) bool {
	host := hostOf(o)
	site := registrable(host)
	for _, own := range origins {
		oh := hostOf(own)
		if oh == host || site != "" && registrable(oh) == site {
			return true
		}
	}
	return false
}

// registrable is host's eTLD+1 ("example.co.uk"), "" for IP addresses and
// hosts without one.
func registrable(host string) string {
	if net.ParseIP(strings.Trim(host, "[]")) != nil {
		return ""
	}
	s, err := publicsuffix.EffectiveTLDPlusOne(host)
	if err != nil {
		return ""
	}
	return s
}

func hostOf(origin string) string {
	u, err := url.Parse(origin)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Hostname())
}
