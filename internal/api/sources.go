package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/sources"
)

// Sources is the sources application layer (*sources.Service).
type Sources interface {
	Add(ctx context.Context, actor catalog.Actor, req sources.Request) (catalog.Source, error)
	List(ctx context.Context) ([]catalog.Source, error)
	Get(ctx context.Context, id string) (catalog.Source, []catalog.SourceEntry, error)
	Delete(ctx context.Context, actor catalog.Actor, id string) ([]string, error)
	Refresh(ctx context.Context, id string) (catalog.Source, error)
}

// Provenance reads how agents came and what sources say of them
// (*catalog.Store implements it); what a caller may read of it is
// sources.AgentOrigins' to say.
type Provenance = sources.OriginReader

const maxSourceBody = 8 << 10

// SourceRequest is the body of POST /sources.
type SourceRequest struct {
	URL string `json:"url"`
	// Kind is "manifest" (the default) or "registry": a peer registry to
	// federate from (its origin or its ARD search base).
	Kind string `json:"kind,omitempty"`
	// Token is a bearer token the peer registry expects; stored
	// encrypted, never shown again.
	Token string `json:"token,omitempty"`
}

// SourcePeer is the peer registry a registry source resolved to.
type SourcePeer struct {
	// URL is its ARD search base.
	URL  string `json:"url"`
	Name string `json:"name,omitempty"`
	// RegistryID is the id it advertises (registries of this kind).
	RegistryID string `json:"registry_id,omitempty"`
}

// Source is a source as the API shows it.
type Source struct {
	ID                  string     `json:"id"`
	URL                 string     `json:"url"`
	CreatedAt           time.Time  `json:"created_at"`
	CreatedBy           string     `json:"created_by,omitempty"`
	Status              string     `json:"status"`
	Problem             string     `json:"problem,omitempty"`
	Message             string     `json:"message,omitempty"`
	ResolvedURL         string     `json:"resolved_url,omitempty"`
	ResolvedVia         string     `json:"resolved_via,omitempty"`
	CheckedAt           *time.Time `json:"checked_at,omitempty"`
	ChangedAt           *time.Time `json:"changed_at,omitempty"`
	NextCheckAt         time.Time  `json:"next_check_at"`
	ConsecutiveFailures int        `json:"consecutive_failures"`
	EntryCount          int        `json:"entry_count"`
	// Kind is manifest or registry.
	Kind string `json:"kind"`
	// TokenSet tells that a bearer token is stored for the peer (the
	// token itself is never shown).
	TokenSet bool `json:"token_set,omitempty"`
	// Cursor is the peer's change-feed seq read up to.
	Cursor string `json:"cursor,omitempty"`
	// ParentID names the manifest source whose registry entry made this
	// source.
	ParentID string      `json:"parent_id,omitempty"`
	Peer     *SourcePeer `json:"peer,omitempty"`
}

// SourceEntry is one entry of a source's last manifest and what was done
// with it.
type SourceEntry struct {
	Position              int             `json:"position"`
	ManifestURL           string          `json:"manifest_url,omitempty"`
	ManifestHost          string          `json:"manifest_host,omitempty"`
	Depth                 int             `json:"depth"`
	Identifier            string          `json:"identifier"`
	DisplayName           string          `json:"display_name,omitempty"`
	Type                  string          `json:"type,omitempty"`
	URL                   string          `json:"url,omitempty"`
	Outcome               string          `json:"outcome"`
	Reason                string          `json:"reason,omitempty"`
	Message               string          `json:"message,omitempty"`
	AgentID               string          `json:"agent_id,omitempty"`
	TrustFlag             string          `json:"trust_flag,omitempty"`
	Tags                  []string        `json:"tags"`
	RepresentativeQueries []string        `json:"representative_queries"`
	TrustManifest         json.RawMessage `json:"trust_manifest,omitempty"`
}

// SourceDetail is a source with every entry of its last manifest.
type SourceDetail struct {
	Source
	Entries []SourceEntry `json:"entries"`
}

// SourceList lists the sources, oldest first.
type SourceList struct {
	Items []Source `json:"items"`
}

// SourceDeleted answers DELETE /sources/{id}.
type SourceDeleted struct {
	// WithdrawnAgents are the agents only this source vouched for.
	WithdrawnAgents []string `json:"withdrawn_agents"`
}

// Provenance is one way an agent came to the catalog.
type ProvenanceEntry struct {
	Kind        string `json:"kind"`
	By          string `json:"by,omitempty"`
	SourceID    string `json:"source_id,omitempty"`
	SourceURL   string `json:"source_url,omitempty"`
	ManifestURL string `json:"manifest_url,omitempty"`
	// ManifestHost is all of the manifest's URL a viewer reads.
	ManifestHost string     `json:"manifest_host,omitempty"`
	EntryID      string     `json:"entry_id,omitempty"`
	Relation     string     `json:"relation,omitempty"`
	FirstAt      time.Time  `json:"first_at"`
	LastAt       time.Time  `json:"last_at"`
	EndedAt      *time.Time `json:"ended_at,omitempty"`
}

func (a *API) sourceRoutes() []route {
	if a.sources == nil {
		return nil
	}
	return []route{
		{method: http.MethodGet, path: "/sources", role: auth.Editor, handler: a.listSources},
		{method: http.MethodPost, path: "/sources", role: auth.Editor, handler: a.createSource},
		{method: http.MethodGet, path: "/sources/:id", role: auth.Editor, handler: a.getSource},
		{method: http.MethodDelete, path: "/sources/:id", role: auth.Editor, handler: a.deleteSource},
		{method: http.MethodPost, path: "/sources/:id/refresh", role: auth.Editor, handler: a.refreshSource},
	}
}

func newSource(s catalog.Source) Source {
	out := Source{ID: s.ID, URL: s.URL, CreatedAt: s.CreatedAt, CreatedBy: s.CreatedBy, Status: s.Status, Problem: s.Problem,
		Message: s.Message, ResolvedURL: s.ResolvedURL, ResolvedVia: s.ResolvedVia, CheckedAt: s.CheckedAt, ChangedAt: s.ChangedAt,
		NextCheckAt: s.NextCheckAt, ConsecutiveFailures: s.ConsecutiveFailures, EntryCount: s.EntryCount,
		Kind: s.Kind, TokenSet: s.HasToken, Cursor: s.Cursor, ParentID: s.ParentID}
	if s.PeerURL != "" {
		out.Peer = &SourcePeer{URL: s.PeerURL, Name: s.PeerName, RegistryID: s.PeerID}
	}
	return out
}

func newSourceEntry(e catalog.SourceEntry) SourceEntry {
	out := SourceEntry{Position: e.Position, ManifestURL: e.ManifestURL, Depth: e.Depth, Identifier: e.Identifier,
		DisplayName: e.DisplayName, Type: e.Type, URL: e.URL, Outcome: e.Outcome, Reason: e.Reason, Message: e.Message,
		AgentID: e.AgentID, TrustFlag: e.TrustFlag, Tags: nonNilStrings(e.Tags), RepresentativeQueries: nonNilStrings(e.RepresentativeQueries)}
	if e.TrustManifest != "" && json.Valid([]byte(e.TrustManifest)) {
		out.TrustManifest = json.RawMessage(e.TrustManifest)
	}
	return out
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// newEntryView is an entry naming an agent as its reader may see it.
func newEntryView(e sources.EntryView) SourceEntry {
	out := newSourceEntry(e.SourceEntry)
	out.ManifestHost = e.ManifestHost
	return out
}

func newProvenance(ps []sources.Origin) []ProvenanceEntry {
	out := make([]ProvenanceEntry, len(ps))
	for i, p := range ps {
		out[i] = ProvenanceEntry{Kind: p.Kind, By: p.By, SourceID: p.SourceID, SourceURL: p.SourceURL, ManifestURL: p.ManifestURL,
			ManifestHost: p.ManifestHost, EntryID: p.EntryID, Relation: p.Relation, FirstAt: p.FirstAt, LastAt: p.LastAt, EndedAt: p.EndedAt}
	}
	return out
}

func sourceNotFound() error { return newError(http.StatusNotFound, CodeNotFound, "source not found") }

func sourceID(c echo.Context) (string, error) {
	id, err := url.PathUnescape(c.Param("id"))
	if err != nil || id == "" || len(id) > maxIDLen {
		return "", sourceNotFound()
	}
	return id, nil
}

func (a *API) createSource(c echo.Context) error {
	var in SourceRequest
	if err := decodeJSONBody(c, &in, maxSourceBody, `{"url": "https://publisher.example"}`); err != nil {
		return err
	}
	src, err := a.sources.Add(c.Request().Context(), actorOf(c), sources.Request{URL: in.URL, Kind: in.Kind, Token: in.Token})
	switch {
	case errors.Is(err, sources.ErrInvalidURL):
		e := newError(http.StatusBadRequest, CodeInvalidURL, "url must be an absolute http(s) URL of a manifest, an origin or a registry")
		e.body.Parameter = "url"
		return e
	case errors.Is(err, sources.ErrInvalidKind):
		return invalidParameter("kind", "kind must be manifest or registry")
	case errors.Is(err, sources.ErrInvalidToken):
		// The message never repeats the token.
		return invalidParameter("token", "token is for kind registry only, and must be an RFC 6750 bearer token of at most 4096 characters")
	case errors.Is(err, catalog.ErrConflict):
		return newError(http.StatusConflict, CodeConflict, "a source with this URL exists already")
	case err != nil:
		return fmt.Errorf("adding source: %w", err)
	}
	a.log.Info("api: source added", "source_id", src.ID)
	c.Response().Header().Set("Location", BasePath+"/sources/"+url.PathEscape(src.ID))
	return c.JSON(http.StatusCreated, newSource(src))
}

func (a *API) listSources(c echo.Context) error {
	if err := noQuery(c); err != nil {
		return err
	}
	ss, err := a.sources.List(c.Request().Context())
	if err != nil {
		return fmt.Errorf("listing sources: %w", err)
	}
	l := SourceList{Items: make([]Source, len(ss))}
	for i, s := range ss {
		l.Items[i] = newSource(s)
	}
	return c.JSON(http.StatusOK, l)
}

func (a *API) sourceDetail(c echo.Context, id string) (SourceDetail, error) {
	src, entries, err := a.sources.Get(c.Request().Context(), id)
	if errors.Is(err, catalog.ErrNotFound) {
		return SourceDetail{}, sourceNotFound()
	}
	if err != nil {
		return SourceDetail{}, fmt.Errorf("reading source: %w", err)
	}
	d := SourceDetail{Source: newSource(src), Entries: make([]SourceEntry, len(entries))}
	for i, e := range entries {
		d.Entries[i] = newSourceEntry(e)
	}
	return d, nil
}

func (a *API) getSource(c echo.Context) error {
	id, err := sourceID(c)
	if err != nil {
		return err
	}
	if err := noQuery(c); err != nil {
		return err
	}
	d, err := a.sourceDetail(c, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, d)
}

func (a *API) deleteSource(c echo.Context) error {
	id, err := sourceID(c)
	if err != nil {
		return err
	}
	if err := noQuery(c); err != nil {
		return err
	}
	withdrawn, err := a.sources.Delete(c.Request().Context(), actorOf(c), id)
	if errors.Is(err, catalog.ErrNotFound) {
		return sourceNotFound()
	}
	if err != nil {
		return fmt.Errorf("deleting source: %w", err)
	}
	a.log.Info("api: source deleted", "source_id", id, "withdrawn", len(withdrawn))
	return c.JSON(http.StatusOK, SourceDeleted{WithdrawnAgents: nonNilStrings(withdrawn)})
}

// refreshSource checks the source now and answers with what the check
// found; the request waits for it.
func (a *API) refreshSource(c echo.Context) error {
	id, err := sourceID(c)
	if err != nil {
		return err
	}
	if err := noQuery(c); err != nil {
		return err
	}
	_, err = a.sources.Refresh(c.Request().Context(), id)
	switch {
	case errors.Is(err, catalog.ErrNotFound):
		return sourceNotFound()
	case errors.Is(err, sources.ErrBusy):
		return newError(http.StatusConflict, CodeSourceBusy, "a check of this source is under way; try again when it ends")
	case err != nil:
		return fmt.Errorf("refreshing source: %w", err)
	}
	d, err := a.sourceDetail(c, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, d)
}
