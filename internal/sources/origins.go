package sources

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/a2aregistry/registry/internal/catalog"
)

// Who reads an agent's provenance decides how much of it they read.
// Sources are the editors' (their API and pages are editor-only), and a
// source's URL may carry what its editor must not publish: a token in its
// query, a private path, a user in its authority. So a reader who may
// only see the agent learns how it came (the kind, the relation, the
// entry's identifier, when) and the host of the manifest that listed it,
// never a source's or a manifest's URL, the source's id, who registered
// the agent, or a skipped entry's message (which quotes URLs). Every door
// that shows provenance (the API's agent, the console's agent page) reads
// it through AgentOrigins; the other doors (MCP, A2A, ARD) show only the
// provenance facet, whose values are the registry's own words.

// Audience is who reads an agent's provenance.
type Audience int

const (
	// AudienceViewer may see the agent, and no more.
	AudienceViewer Audience = iota
	// AudienceOperator manages sources: editors and admins.
	AudienceOperator
)

// OriginReader reads how agents came (*catalog.Store implements it).
type OriginReader interface {
	AgentProvenance(ctx context.Context, id string) ([]catalog.Provenance, error)
	AgentSourceEntries(ctx context.Context, id string) ([]catalog.SourceEntry, error)
}

// Origin is one way an agent came, as its reader may see it.
type Origin struct {
	catalog.Provenance
	// ManifestHost is the host of the manifest that listed the entry
	// (Kind source), the part of its URL every reader sees.
	ManifestHost string
}

// EntryView is an entry of a source's manifest that names the agent, as
// its reader may see it.
type EntryView struct {
	catalog.SourceEntry
	ManifestHost string
}

// Origins is how an agent came and what sources' entries say of it.
type Origins struct {
	Provenance []Origin
	Entries    []EntryView
}

// AgentOrigins reads how agent id came and the entries that name it, as
// who may see them. The caller has checked that who sees the agent.
func AgentOrigins(ctx context.Context, r OriginReader, id string, who Audience) (Origins, error) {
	ps, err := r.AgentProvenance(ctx, id)
	if err != nil {
		return Origins{}, fmt.Errorf("provenance of agent %s: %w", id, err)
	}
	es, err := r.AgentSourceEntries(ctx, id)
	if err != nil {
		return Origins{}, fmt.Errorf("source entries of agent %s: %w", id, err)
	}
	return originsFor(ps, es, who), nil
}

// originsFor is the rule of AgentOrigins, apart from its reads.
func originsFor(ps []catalog.Provenance, es []catalog.SourceEntry, who Audience) Origins {
	out := Origins{Provenance: make([]Origin, len(ps)), Entries: make([]EntryView, len(es))}
	for i, p := range ps {
		o := Origin{Provenance: p, ManifestHost: urlHost(p.ManifestURL)}
		if who != AudienceOperator {
			o.By, o.SourceID, o.SourceURL, o.ManifestURL = "", "", "", ""
		}
		out.Provenance[i] = o
	}
	for i, e := range es {
		v := EntryView{SourceEntry: e, ManifestHost: urlHost(e.ManifestURL)}
		if who != AudienceOperator {
			v.ManifestURL, v.URL, v.Message = "", "", ""
		}
		out.Entries[i] = v
	}
	return out
}

// urlHost is the host name of an http(s) URL, lower case, without
// user, port, path or query; "" for anything else.
func urlHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return ""
	}
	return strings.ToLower(u.Hostname())
}
