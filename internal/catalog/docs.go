package catalog

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/a2aregistry/registry/internal/card"
)

// docFacets lists the filterable (field, value) pairs of an agent for the
// search index, from what the agents row holds: the stored summary, the
// signature status and trust, the health, the works verdict of the latest
// check and the audit codes. Skills' ids, names and media types are not
// among them: they are the parts of the document (skillParts). Writers
// and the index build both use it, so a document is the same whichever
// way it reached the index. With skillParts it yields the same pairs as
// facetsOf on the card the summary was made from (a test holds them
// together), plus the audit codes and their severities. Values keep their display form;
// matching is case-insensitive (termKey).
func docFacets(sum summaryRecord, signature, trust, pubVerified, health, works string, audit, severities []string, keyChanged string, pl placement) []facetRecord {
	out := make([]facetRecord, 0, 8+4*len(sum.Skills)+len(sum.InputModes)+len(sum.OutputModes))
	seen := make(map[[2]string]struct{}, cap(out))
	add := func(field, value string) {
		value = strings.TrimSpace(value)
		if value == "" {
			return
		}
		k := [2]string{field, strings.ToLower(value)}
		if _, ok := seen[k]; ok {
			return
		}
		seen[k] = struct{}{}
		out = append(out, facetRecord{Field: field, Value: value})
	}
	for _, sk := range sum.Skills {
		for _, t := range sk.Tags {
			add(FieldTag, t)
		}
	}
	for _, b := range sum.Bindings {
		add(FieldBinding, b)
	}
	for _, v := range sum.ProtocolVersions {
		add(FieldProtocolVersion, v)
	}
	for _, t := range sum.SecuritySchemes {
		add(FieldSecurityScheme, t)
	}
	if len(sum.SecuritySchemes) == 0 {
		add(FieldSecurityScheme, schemeNone)
	}
	add(FieldProvider, sum.Provider)
	add(FieldSignature, signature)
	add(FieldSignatureTrust, trust)
	add(FieldPublisherVerified, publisherVerifiedValue(pubVerified))
	add(FieldHealth, health)
	add(FieldWorks, works)
	for _, c := range audit {
		add(FieldAudit, c)
	}
	for _, v := range severities {
		add(FieldSeverity, v)
	}
	add(FilterKeyChangedDay, keyChanged)
	add(FieldListing, pl.listing)
	for _, c := range pl.collections {
		add(FieldCollection, c)
	}
	for _, v := range pl.visibility {
		add(fieldVisibility, v)
	}
	return out
}

// partFields are the index fields of an agent's skills: filters on them
// must be met by one skill (search.Options.PartFields), so that an agent
// whose one skill takes a PDF and whose other is the skill asked for is
// not found by both filters together.
var partFields = []string{FieldSkill, fieldSkillName, FieldInputMode, FieldOutputMode}

// skillParts lists the parts of an agent's search document, one a skill:
// its id, its name and its effective media types (card.Skill's: a skill
// without its own inherits the card's defaults). An agent without skills
// is one part of the card's default media types, as the summary lists
// them (summaryOf). Media types are normalized as the summary's are.
func skillParts(skills []indexedSkill, sum summaryRecord) [][]facetRecord {
	if len(skills) == 0 {
		var part []facetRecord
		for _, m := range sum.InputModes {
			part = append(part, facetRecord{Field: FieldInputMode, Value: m})
		}
		for _, m := range sum.OutputModes {
			part = append(part, facetRecord{Field: FieldOutputMode, Value: m})
		}
		if part == nil {
			return nil
		}
		return [][]facetRecord{part}
	}
	out := make([][]facetRecord, 0, len(skills))
	for _, sk := range skills {
		part := make([]facetRecord, 0, 2+len(sk.inputModes)+len(sk.outputModes))
		add := func(field, value string) {
			if value = strings.TrimSpace(value); value != "" {
				part = append(part, facetRecord{Field: field, Value: value})
			}
		}
		add(FieldSkill, sk.id)
		add(fieldSkillName, sk.name)
		for _, m := range dedupe(sk.inputModes, card.NormalizeMode) {
			add(FieldInputMode, m)
		}
		for _, m := range dedupe(sk.outputModes, card.NormalizeMode) {
			add(FieldOutputMode, m)
		}
		out = append(out, part)
	}
	return out
}

// placement is where an agent stands in the curated directory: its
// listing state, the collections it is in and the visibility tokens those
// give it (see collections.go).
type placement struct {
	listing                 string
	collections, visibility []string
}

// placementValues are the index fields a placement sets, for in-place
// updates (Index.SetFields).
func (pl placement) values() map[string][]string {
	return map[string][]string{FieldListing: {pl.listing}, FieldCollection: pl.collections, fieldVisibility: pl.visibility}
}

// storedPlacement reads a placement from the agents columns.
func storedPlacement(listing, collections, visibility string) (placement, error) {
	cols, err := decodeStrings(collections)
	if err != nil {
		return placement{}, fmt.Errorf("decoding collections: %w", err)
	}
	vis, err := decodeStrings(visibility)
	if err != nil {
		return placement{}, fmt.Errorf("decoding visibility: %w", err)
	}
	return placement{listing: listing, collections: cols, visibility: vis}, nil
}

// decodeAuditCodes reads agents.audit_codes.
func decodeAuditCodes(raw string) ([]string, error) {
	if raw == "" {
		return nil, nil
	}
	codes, err := unmarshalStrings(raw)
	if err != nil {
		return nil, fmt.Errorf("decoding audit codes: %w", err)
	}
	return codes, nil
}

// storedDocFacets is docFacets and skillParts over the stored columns of
// one agent and its skills.
// received is when the current card version came (zero when unknown).
func storedDocFacets(summary, signature, trust, pubVerified, health, works, auditCodes, severities string, received time.Time, pl placement,
	skills []indexedSkill) ([]facetRecord, [][]facetRecord, error) {
	sum, err := decodeSummaryRecord(summary)
	if err != nil {
		return nil, nil, err
	}
	audit, err := decodeAuditCodes(auditCodes)
	if err != nil {
		return nil, nil, err
	}
	sevs, err := decodeStrings(severities)
	if err != nil {
		return nil, nil, fmt.Errorf("decoding finding severities: %w", err)
	}
	return docFacets(sum, signature, trust, pubVerified, health, works, audit, sevs, keyChangedDay(audit, received), pl), skillParts(skills, sum), nil
}

// Values of agents.publisher_verified and of the publisher_verified facet.
const (
	publisherVerifiedTrue  = "true"
	publisherVerifiedFalse = "false"
)

// publisherVerifiedValue is the facet value of a stored
// agents.publisher_verified: anything but "true" is "false", so an agent
// never verified is counted with the unverified.
func publisherVerifiedValue(stored string) string {
	if stored == publisherVerifiedTrue {
		return publisherVerifiedTrue
	}
	return publisherVerifiedFalse
}

// severitiesColumn is a stored agents.finding_severities, "[]" for a row
// written without one (a new agent's, before its first verification).
func severitiesColumn(stored string) string {
	if stored == "" {
		return "[]"
	}
	return stored
}

// findingSeverities is the sorted set of known severities (card.Severity)
// among sevs; anything else is dropped, so the facet holds only the values
// the severity filter accepts.
func findingSeverities(sevs []string) []string {
	out := make([]string, 0, len(Severities))
	for _, s := range Severities {
		if slices.Contains(sevs, s) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}
