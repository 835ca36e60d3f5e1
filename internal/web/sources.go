package web

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/sources"
	"github.com/a2aregistry/registry/internal/web/view"
	"github.com/a2aregistry/registry/web/templates"
)

// Sources is the sources application layer (*sources.Service), the same
// the API calls.
type Sources interface {
	Add(ctx context.Context, actor catalog.Actor, req sources.Request) (catalog.Source, error)
	List(ctx context.Context) ([]catalog.Source, error)
	Get(ctx context.Context, id string) (catalog.Source, []catalog.SourceEntry, error)
	Delete(ctx context.Context, actor catalog.Actor, id string) ([]string, error)
	Refresh(ctx context.Context, id string) (catalog.Source, error)
}

// Provenance reads how an agent came (*catalog.Store); what a caller may
// read of it is sources.AgentOrigins' to say.
type Provenance = sources.OriginReader

// mountSources adds the sources pages (editor).
func (h *Console) mountSources(e *echo.Echo) {
	if h.opts.Sources == nil {
		return
	}
	e.GET("/sources", h.sourcesPage, h.guarded(auth.Editor)...)
	e.POST("/sources", h.addSource, append(h.guarded(auth.Editor), limitBody(8<<10), h.checkCSRF)...)
	e.GET("/sources/:id", h.sourcePage, h.guarded(auth.Editor)...)
	e.POST("/sources/:id/refresh", h.refreshSource, append(h.guarded(auth.Editor), limitBody(4<<10), h.checkCSRF)...)
	e.POST("/sources/:id/delete", h.deleteSource, append(h.guarded(auth.Editor), limitBody(4<<10), h.checkCSRF)...)
}

func sourceView(s catalog.Source) view.Source {
	return view.Source{ID: s.ID, URL: s.URL, CreatedBy: s.CreatedBy, Status: s.Status, Problem: s.Problem, Message: s.Message,
		ResolvedURL: s.ResolvedURL, ResolvedVia: s.ResolvedVia, CheckedAt: s.CheckedAt, ChangedAt: s.ChangedAt,
		NextCheckAt: s.NextCheckAt, Failures: s.ConsecutiveFailures, EntryCount: s.EntryCount,
		Kind: s.Kind, Cursor: s.Cursor, ParentID: s.ParentID, PeerURL: s.PeerURL, PeerName: s.PeerName, TokenSet: s.HasToken}
}

func (h *Console) sourcesPage(c echo.Context) error {
	return h.renderSources(c, http.StatusOK, view.Sources{})
}

func (h *Console) renderSources(c echo.Context, status int, v view.Sources) error {
	ss, err := h.opts.Sources.List(c.Request().Context())
	if err != nil {
		h.log.ErrorContext(c.Request().Context(), "console sources failed", "err", err)
		return h.errorPage(c, http.StatusInternalServerError, "Something went wrong", "The registry could not list its sources. The failure is in its log.")
	}
	for _, s := range ss {
		v.Items = append(v.Items, sourceView(s))
	}
	v.CSRFToken = h.csrfToken(c)
	return h.render(c, status, page{title: "Sources", body: templates.SourcesPage(v)})
}

func (h *Console) addSource(c echo.Context) error {
	if err := c.Request().ParseForm(); err != nil {
		return h.errorPage(c, http.StatusRequestEntityTooLarge, "Too large", "The form is too large or unreadable.")
	}
	form := c.Request().PostForm
	v := view.Sources{URL: strings.TrimSpace(form.Get("url")), Kind: form.Get("kind")}
	ctx := c.Request().Context()
	src, err := h.opts.Sources.Add(ctx, h.actor(c), sources.Request{URL: v.URL, Kind: v.Kind, Token: strings.TrimSpace(form.Get("token"))})
	switch {
	case errors.Is(err, sources.ErrInvalidURL):
		v.Error = "Give an absolute http(s) URL: a manifest, an origin such as https://publisher.example, or a registry's search base."
		return h.renderSources(c, http.StatusBadRequest, v)
	case errors.Is(err, sources.ErrInvalidKind):
		v.Error = "Choose a manifest or a peer registry."
		return h.renderSources(c, http.StatusBadRequest, v)
	case errors.Is(err, sources.ErrInvalidToken):
		v.Error = "A token is for a peer registry only, and must be a bearer token (letters, digits and - . _ ~ + / =, at most 4096)."
		return h.renderSources(c, http.StatusBadRequest, v)
	case errors.Is(err, catalog.ErrConflict):
		v.Error = "This URL is a source already."
		return h.renderSources(c, http.StatusConflict, v)
	case err != nil:
		h.log.ErrorContext(ctx, "console source add failed", "err", err)
		return h.errorPage(c, http.StatusInternalServerError, "Something went wrong", "The registry could not store the source. The failure is in its log.")
	}
	h.log.InfoContext(ctx, "console: source added", "source_id", src.ID, "by", h.callerName(c))
	return c.Redirect(http.StatusSeeOther, "/sources/"+src.ID)
}

func (h *Console) sourcePage(c echo.Context) error {
	return h.renderSource(c, http.StatusOK, "")
}

func (h *Console) renderSource(c echo.Context, status int, notice string) error {
	id, ok := pathID(c)
	if !ok {
		return h.notFound(c)
	}
	ctx := c.Request().Context()
	src, entries, err := h.opts.Sources.Get(ctx, id)
	if errors.Is(err, catalog.ErrNotFound) {
		return h.errorPage(c, http.StatusNotFound, "Source not found", "No source has this id.")
	}
	if err != nil {
		h.log.ErrorContext(ctx, "console source failed", "source_id", id, "err", err)
		return h.errorPage(c, http.StatusInternalServerError, "Something went wrong", "The registry could not read the source. The failure is in its log.")
	}
	d := view.SourceDetail{Source: sourceView(src), Notice: notice, CSRFToken: h.csrfToken(c)}
	for _, e := range entries {
		ve := view.SourceEntry{Identifier: e.Identifier, DisplayName: e.DisplayName, Type: e.Type, URL: e.URL, ManifestURL: e.ManifestURL,
			Depth: e.Depth, Outcome: e.Outcome, Reason: e.Reason, Message: e.Message, AgentID: e.AgentID, TrustFlag: e.TrustFlag,
			Tags: e.Tags, Queries: e.RepresentativeQueries}
		if e.AgentID != "" {
			ve.AgentURL = agentURL(e.AgentID)
		}
		d.Entries = append(d.Entries, ve)
	}
	return h.render(c, status, page{title: "Source", body: templates.SourcePage(d)})
}

func (h *Console) refreshSource(c echo.Context) error {
	id, ok := pathID(c)
	if !ok {
		return h.notFound(c)
	}
	ctx := c.Request().Context()
	_, err := h.opts.Sources.Refresh(ctx, id)
	switch {
	case errors.Is(err, catalog.ErrNotFound):
		return h.errorPage(c, http.StatusNotFound, "Source not found", "No source has this id.")
	case errors.Is(err, sources.ErrBusy):
		return h.renderSource(c, http.StatusConflict, "A check of this source is under way; try again when it ends.")
	case err != nil:
		h.log.ErrorContext(ctx, "console source refresh failed", "source_id", id, "err", err)
		return h.errorPage(c, http.StatusInternalServerError, "Something went wrong", "The registry could not check the source. The failure is in its log.")
	}
	return c.Redirect(http.StatusSeeOther, "/sources/"+id)
}

func (h *Console) deleteSource(c echo.Context) error {
	id, ok := pathID(c)
	if !ok {
		return h.notFound(c)
	}
	ctx := c.Request().Context()
	withdrawn, err := h.opts.Sources.Delete(ctx, h.actor(c), id)
	if errors.Is(err, catalog.ErrNotFound) {
		return h.errorPage(c, http.StatusNotFound, "Source not found", "No source has this id.")
	}
	if err != nil {
		h.log.ErrorContext(ctx, "console source delete failed", "source_id", id, "err", err)
		return h.errorPage(c, http.StatusInternalServerError, "Something went wrong", "The registry could not delete the source. The failure is in its log.")
	}
	h.log.InfoContext(ctx, "console: source deleted", "source_id", id, "withdrawn", len(withdrawn), "by", h.callerName(c))
	return c.Redirect(http.StatusSeeOther, "/sources")
}

// provenanceView is how an agent came, for its page, as the caller may
// see it (sources.AgentOrigins).
func (h *Console) provenanceView(c echo.Context, id string) ([]view.Provenance, error) {
	if h.opts.Provenance == nil {
		return nil, nil
	}
	who := sources.AudienceViewer
	if h.canOperate(c) {
		who = sources.AudienceOperator
	}
	o, err := sources.AgentOrigins(c.Request().Context(), h.opts.Provenance, id, who)
	if err != nil {
		return nil, err
	}
	out := make([]view.Provenance, len(o.Provenance))
	for i, p := range o.Provenance {
		out[i] = view.Provenance{Kind: p.Kind, By: p.By, Relation: p.Relation, SourceURL: p.SourceURL, EntryID: p.EntryID,
			ManifestURL: p.ManifestURL, ManifestHost: p.ManifestHost, FirstAt: p.FirstAt, EndedAt: p.EndedAt}
		if who == sources.AudienceOperator && h.opts.Sources != nil && p.SourceID != "" && p.EndedAt == nil {
			out[i].SourcePageURL = "/sources/" + p.SourceID
		}
	}
	return out, nil
}
