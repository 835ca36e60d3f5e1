package verify

import (
	"context"
	"slices"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/contentscan"
)

// ContentFinding is a content-scan finding (contentscan.Finding): hidden
// Unicode, text addressed to the reading model, a foreign link or a
// confusable name. Its codes join the security-audit codes in the audit
// facet.
type ContentFinding = contentscan.Finding

// ScanContent runs the content scan of c against the card's origins,
// comparing its name and provider with the catalogue's when
// Options.Names is set. A failed name lookup is logged and leaves the
// text findings.
func (v *Verifier) ScanContent(ctx context.Context, c *card.Card, origins []string) []ContentFinding {
	fs, err := contentscan.Scanner{Names: v.opts.Names}.Scan(ctx, c, origins)
	if err != nil {
		v.log.Warn("content scan: comparing names with the catalogue", "card_name", c.Name, "err", err)
	}
	return fs
}

// NameKeyLookup is the part of the catalog CatalogNames reads.
type NameKeyLookup interface {
	AgentsByNameKey(ctx context.Context, keys []string) ([]catalog.NameKeyMatch, error)
}

// CatalogNames gives the content scan the catalogue's agents by
// confusable key (table agent_name_keys, filled by the Runner).
type CatalogNames struct {
	Store NameKeyLookup
}

// AgentsByNameKey implements contentscan.Names.
func (c CatalogNames) AgentsByNameKey(ctx context.Context, keys []string) ([]contentscan.Match, error) {
	ms, err := c.Store.AgentsByNameKey(ctx, keys)
	if err != nil {
		return nil, err
	}
	out := make([]contentscan.Match, len(ms))
	for i, m := range ms {
		out[i] = contentscan.Match{Key: m.Key, AgentID: m.AgentID, CardURL: m.CardURL, Text: m.Text}
	}
	return out, nil
}

// nameKeys are the catalog rows of c's confusable keys.
func nameKeys(c *card.Card) []catalog.NameKey {
	keys := contentscan.Keys(c)
	out := make([]catalog.NameKey, len(keys))
	for i, k := range keys {
		out[i] = catalog.NameKey{Key: k.Key, Text: k.Text}
	}
	return out
}

// RelatedAgents lists the agents content findings name as related, each
// once, in order of appearance.
func RelatedAgents(fs []ContentFinding) []string {
	var out []string
	for _, f := range fs {
		for _, r := range f.Related {
			if !slices.Contains(out, r.AgentID) {
				out = append(out, r.AgentID)
			}
		}
	}
	return out
}

// KeepRelated returns a copy of fs whose findings name only the related
// agents keep accepts: a reader is shown the finding, but no agent their
// scope hides. A finding left with none stays (its message names no other
// agent). fs is not changed.
func KeepRelated(fs []ContentFinding, keep func(agentID string) bool) []ContentFinding {
	if fs == nil {
		return nil
	}
	out := make([]ContentFinding, len(fs))
	for i, f := range fs {
		out[i] = f
		out[i].Related = nil
		for _, r := range f.Related {
			if keep(r.AgentID) {
				out[i].Related = append(out[i].Related, r)
			}
		}
	}
	return out
}
