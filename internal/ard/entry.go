package ard

import (
	"strings"
	"time"

	"github.com/a2aregistry/registry/internal/ardentry"
	"github.com/a2aregistry/registry/internal/catalog"
)

// entry is an ARD catalog entry on the wire (spec/ard.md §4,
// ai-catalog.schema.json catalogEntry).
type entry struct {
	Identifier            string   `json:"identifier"`
	DisplayName           string   `json:"displayName"`
	Type                  string   `json:"type"`
	URL                   string   `json:"url"`
	Description           string   `json:"description,omitempty"`
	Tags                  []string `json:"tags,omitempty"`
	Capabilities          []string `json:"capabilities,omitempty"`
	RepresentativeQueries []string `json:"representativeQueries,omitempty"`
	Version               string   `json:"version,omitempty"`
	UpdatedAt             string   `json:"updatedAt,omitempty"`
	// Metadata is *metadata for an agent, *registryMetadata for the
	// registry's own entry.
	Metadata      any            `json:"metadata,omitempty"`
	TrustManifest *trustManifest `json:"trustManifest,omitempty"`
}

// metadata carries the registry's facts, each under the name of its
// metadata.<field> filter. The manifest schema allows only scalar
// metadata values, so a fact of several values lists them separated by
// commas.
type metadata struct {
	AgentID         string `json:"agent_id"`
	Provider        string `json:"provider,omitempty"`
	ProtocolVersion string `json:"protocol_version,omitempty"`
	Binding         string `json:"binding,omitempty"`
	SecurityScheme  string `json:"security_scheme,omitempty"`
	InputMode       string `json:"input_mode,omitempty"`
	OutputMode      string `json:"output_mode,omitempty"`
	Signature       string `json:"signature,omitempty"`
	SignatureTrust  string `json:"signature_trust,omitempty"`
	Health          string `json:"health,omitempty"`
	Listing         string `json:"listing,omitempty"`
	// Provenance is federatedFrom alone for an agent this registry knows
	// only from a peer registry: a registry federating from this one
	// skips those (docs/sources.md#federation).
	Provenance string `json:"provenance,omitempty"`
}

// registryMetadata marks the registry's own manifest entry as a registry
// of this kind: its change feed (which a federating registry follows
// instead of paging GET /agents, so removals propagate) and its id (so a
// registry never federates from itself). docs/sources.md#federation.
type registryMetadata struct {
	ChangeFeed string `json:"change_feed,omitempty"`
	RegistryID string `json:"registry_id,omitempty"`
}

type trustManifest struct {
	Identity     string        `json:"identity"`
	IdentityType string        `json:"identityType"`
	Attestations []attestation `json:"attestations"`
}

type attestation struct {
	Type      string `json:"type"`
	URI       string `json:"uri"`
	MediaType string `json:"mediaType"`
}

func wireEntry(e ardentry.Entry) entry {
	f := e.Facts
	out := entry{Identifier: e.Identifier, DisplayName: e.DisplayName, Type: e.Type, URL: e.URL,
		Description: e.Description, Tags: e.Tags, Capabilities: e.Capabilities,
		RepresentativeQueries: e.RepresentativeQueries, Version: e.Version,
		Metadata: &metadata{AgentID: e.ID, Provider: f.Provider, ProtocolVersion: strings.Join(f.ProtocolVersions, ","),
			Binding: strings.Join(f.Bindings, ","), SecurityScheme: strings.Join(f.SecuritySchemes, ","),
			InputMode: strings.Join(f.InputModes, ","), OutputMode: strings.Join(f.OutputModes, ","),
			Signature: f.Signature, SignatureTrust: f.SignatureTrust, Health: f.Health, Listing: f.Listing,
			Provenance: strings.Join(f.Provenance, ",")}}
	if !e.UpdatedAt.IsZero() {
		out.UpdatedAt = e.UpdatedAt.UTC().Format(time.RFC3339)
	}
	if t := e.Trust; t != nil {
		tm := &trustManifest{Identity: t.Identity, IdentityType: t.IdentityType}
		for _, a := range t.Attestations {
			tm.Attestations = append(tm.Attestations, attestation{Type: a.Type, URI: a.URI, MediaType: a.MediaType})
		}
		out.TrustManifest = tm
	}
	return out
}

// entry is the wire entry of an agent whose best-scored fellow result
// scored top, its url made fetchable.
func (d *Door) entry(origin string, s catalog.Summary, top float64, examples []string) (entry, int) {
	e := ardentry.FromSummary(s, top).WithExamples(examples)
	if !e.HasCardURL() && d.cardPath != nil {
		e.URL = origin + d.cardPath(s.ID)
	}
	return wireEntry(e), e.Score
}
