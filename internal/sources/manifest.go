package sources

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/a2aregistry/registry/internal/card"
)

// Entry types (ARD v0.91 spec/ard.md §4.1, and the AI Catalog's).
const (
	TypeA2ACard      = "application/a2a-agent-card+json"
	TypeAgentCard    = "application/agent-card+json"
	TypeCatalog      = "application/ai-catalog+json"
	TypeRegistry     = "application/ai-registry+json"
	TypeMCPServerRef = "application/mcp-server-card+json"
)

// Reasons an entry is skipped or flagged; stored and shown, so stable.
const (
	ReasonNotA2A            = "not_a2a"
	ReasonInvalidURN        = "invalid_urn"
	ReasonInvalidEntry      = "invalid_entry"
	ReasonDepthLimit        = "depth_limit"
	ReasonLoop              = "catalog_loop"
	ReasonDuplicate         = "duplicate"
	ReasonPublisherMismatch = "publisher_mismatch"
	ReasonRegistry          = "registry_not_followed"
	ReasonRemovedByAdmin    = "removed_by_admin"
	ReasonHidden            = "hidden"
)

// Problems of a whole source; stored and shown, so stable. A fetch's
// failure is its crawler class (http_404, too_large, not_json,
// blocked_address…).
const (
	ProblemNotManifest    = "not_a_manifest"
	ProblemTooManyEntries = "too_many_entries"
	ProblemNothingFound   = "nothing_found"
)

// rawEntry is an ARD v0.91 entry (spec/ard.md §4.2) or an AI Catalog one
// as read: only the members the registry uses.
type rawEntry struct {
	Identifier            string          `json:"identifier"`
	DisplayName           string          `json:"displayName"`
	Name                  string          `json:"name"`
	Type                  string          `json:"type"`
	MediaType             string          `json:"mediaType"`
	URL                   string          `json:"url"`
	Data                  json.RawMessage `json:"data"`
	Tags                  []string        `json:"tags"`
	RepresentativeQueries []string        `json:"representativeQueries"`
	TrustManifest         json.RawMessage `json:"trustManifest"`
	// TrustManifests is the AI Catalog's array form.
	TrustManifests []json.RawMessage `json:"trustManifests"`
}

// parseManifest reads a manifest's entries: a JSON object whose entries
// member is an array (other members are ignored, spec/ard.md §4.1). An
// object without entries is no manifest (ok false; it may be a card).
// More than maxEntries entries is an error before any is read.
func parseManifest(body []byte, maxEntries int) (entries []json.RawMessage, ok bool, err error) {
	var m struct {
		Entries json.RawMessage `json:"entries"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, false, fmt.Errorf("%s: the manifest is not valid JSON: %w", ProblemNotManifest, err)
	}
	if m.Entries == nil {
		return nil, false, nil
	}
	dec := json.NewDecoder(bytes.NewReader(m.Entries))
	tok, err := dec.Token()
	if d, isDelim := tok.(json.Delim); err != nil || !isDelim || d != '[' {
		return nil, false, fmt.Errorf("%s: entries is not an array", ProblemNotManifest)
	}
	for dec.More() {
		if len(entries) == maxEntries {
			return nil, true, &tooManyError{max: maxEntries}
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, true, fmt.Errorf("%s: entry %d: %w", ProblemNotManifest, len(entries), err)
		}
		entries = append(entries, raw)
	}
	return entries, true, nil
}

type tooManyError struct{ max int }

func (e *tooManyError) Error() string {
	return fmt.Sprintf("the manifest lists more than %d entries (the cap per source, --source-max-entries)", e.max)
}

// decodeEntry reads one entry; an entry that is not an object of the
// expected shape is an error.
func decodeEntry(raw json.RawMessage) (rawEntry, error) {
	var e rawEntry
	if err := json.Unmarshal(raw, &e); err != nil {
		return rawEntry{}, fmt.Errorf("the entry is not an ARD entry: %w", err)
	}
	if e.Type == "" {
		e.Type = e.MediaType
	}
	if e.DisplayName == "" {
		e.DisplayName = e.Name
	}
	if e.TrustManifest == nil && len(e.TrustManifests) > 0 {
		e.TrustManifest = e.TrustManifests[0]
	}
	return e, nil
}

// mediaType is an entry type without parameters, in lower case.
func mediaType(t string) string {
	t, _, _ = strings.Cut(t, ";")
	return strings.ToLower(strings.TrimSpace(t))
}

// publisherOf is the publisher of a well-formed identifier.
func publisherOf(urn string) string {
	m := card.URNPattern.FindStringSubmatch(urn)
	if m == nil {
		return ""
	}
	return strings.ToLower(m[1])
}

// identityDomain is the trust domain of a trustManifest identity: the
// host of a URL (https://, spiffe://), the host of did:web, or the value
// itself when it is a bare domain.
func identityDomain(identity string) string {
	identity = strings.TrimSpace(identity)
	if rest, ok := strings.CutPrefix(identity, "did:web:"); ok {
		host, _, _ := strings.Cut(rest, ":")
		host, _ = url.PathUnescape(host)
		h, _, _ := strings.Cut(host, ":")
		return strings.ToLower(h)
	}
	if u, err := url.Parse(identity); err == nil && u.Host != "" {
		return strings.ToLower(u.Hostname())
	}
	if strings.ContainsAny(identity, "/:@ ") {
		return ""
	}
	return strings.ToLower(identity)
}

// trustDisagrees applies ARD's publisher-authority rule (spec/ard.md
// §4.5.1): a trustManifest identity whose trust domain is not the
// identifier's publisher (or a name under it) disagrees with it.
func trustDisagrees(trustManifest json.RawMessage, urn string) bool {
	if len(trustManifest) == 0 || string(trustManifest) == "null" {
		return false
	}
	var tm struct {
		Identity string `json:"identity"`
	}
	if err := json.Unmarshal(trustManifest, &tm); err != nil || tm.Identity == "" {
		return false
	}
	pub, dom := publisherOf(urn), identityDomain(tm.Identity)
	if dom == "" {
		return true
	}
	return dom != pub && !strings.HasSuffix(dom, "."+pub)
}
