package sources

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/net/html"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/safehttp"
)

// How a source was resolved (catalog.Source.ResolvedVia).
const (
	ViaManifest   = "manifest"
	ViaARD        = "ard.json"
	ViaAICatalog  = "ai-catalog.json"
	ViaLink       = "link"
	ViaAgentmap   = "agentmap"
	ViaAgentCard  = "agent-card"
	ardPath       = "/.well-known/ard.json"
	aiCatalogPath = "/.well-known/ai-catalog.json"
	// discoveryBytes caps the home page and robots.txt read for a link.
	discoveryBytes = 256 << 10
)

// isOrigin tells an origin ("https://host" or "https://host/") from a URL
// with a path.
func isOrigin(raw string) (string, bool) {
	canon, err := card.CanonicalCardURL(raw)
	if err != nil {
		return "", false
	}
	origin, err := card.CanonicalOrigin(canon)
	if err != nil {
		return "", false
	}
	return origin, canon == origin+"/"
}

// discoverLinks is the manifest an origin points to when neither
// well-known path serves one: a Link header or <link> of its home page,
// then robots.txt Agentmap (spec/ard.md §3).
func (s *Service) discoverLinks(ctx context.Context, origin string) (string, string) {
	if u := s.homePageLink(ctx, origin); u != "" {
		return u, ViaLink
	}
	if u := s.agentmap(ctx, origin); u != "" {
		return u, ViaAgentmap
	}
	return "", ""
}

// homePageLink is the target of a Link header (RFC 8288) or an HTML
// <link> with rel "ard" or "ai-catalog" on the origin's home page.
func (s *Service) homePageLink(ctx context.Context, origin string) string {
	resp, body, err := s.get(ctx, origin+"/")
	if err != nil {
		return ""
	}
	for _, v := range resp.Header.Values("Link") {
		if u := linkHeaderTarget(v); u != "" {
			return resolveRef(resp.Request.URL, u)
		}
	}
	if u := htmlLinkTarget(body); u != "" {
		return resolveRef(resp.Request.URL, u)
	}
	return ""
}

// agentmap is the first Agentmap: line of the origin's robots.txt.
func (s *Service) agentmap(ctx context.Context, origin string) string {
	resp, body, err := s.get(ctx, origin+"/robots.txt")
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.EqualFold(strings.TrimSpace(k), "agentmap") {
			return resolveRef(resp.Request.URL, strings.TrimSpace(v))
		}
	}
	return ""
}

// get reads a small discovery document through the guarded client.
func (s *Service) get(ctx context.Context, u string) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, nil, err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.CopyN(io.Discard, resp.Body, 4<<10)
		return nil, nil, errors.New(resp.Status)
	}
	body, err := safehttp.ReadBody(resp, discoveryBytes)
	if err != nil && !errors.Is(err, safehttp.ErrBodyTooLarge) {
		return nil, nil, err
	}
	return resp, body, nil
}

// linkHeaderTarget is the target of the first link in a Link header value
// whose rel names ard or ai-catalog.
func linkHeaderTarget(v string) string {
	for _, link := range strings.Split(v, ",") {
		target, params, ok := strings.Cut(link, ";")
		if !ok {
			continue
		}
		target = strings.TrimSpace(target)
		if !strings.HasPrefix(target, "<") || !strings.HasSuffix(target, ">") {
			continue
		}
		for _, p := range strings.Split(params, ";") {
			k, val, _ := strings.Cut(strings.TrimSpace(p), "=")
			if strings.EqualFold(strings.TrimSpace(k), "rel") && relNamesManifest(strings.Trim(strings.TrimSpace(val), `"`)) {
				return target[1 : len(target)-1]
			}
		}
	}
	return ""
}

// htmlLinkTarget is the href of the first <link> whose rel names ard or
// ai-catalog.
func htmlLinkTarget(body []byte) string {
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return ""
		case html.StartTagToken, html.SelfClosingTagToken:
			t := z.Token()
			if t.Data != "link" {
				continue
			}
			var rel, href string
			for _, a := range t.Attr {
				switch strings.ToLower(a.Key) {
				case "rel":
					rel = a.Val
				case "href":
					href = a.Val
				}
			}
			if href != "" && relNamesManifest(rel) {
				return href
			}
		}
	}
}

// relNamesManifest tells whether a space-separated rel list names a
// manifest.
func relNamesManifest(rel string) bool {
	for _, r := range strings.Fields(rel) {
		if strings.EqualFold(r, "ard") || strings.EqualFold(r, "ai-catalog") {
			return true
		}
	}
	return false
}

func resolveRef(base *url.URL, ref string) string {
	u, err := base.Parse(ref)
	if err != nil {
		return ""
	}
	return u.String()
}
