package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/web/view"
	"github.com/a2aregistry/registry/web/templates"
)

// Curator keeps the curated directory: listing transitions, the agents
// awaiting review and collections, as the API's Curator does.
// *catalog.Store implements it.
type Curator interface {
	SetListing(ctx context.Context, actor catalog.Actor, sc catalog.Scope, id string, ch catalog.ListingChange) (catalog.Agent, error)
	PendingAgents(ctx context.Context, sc catalog.Scope, limit int) ([]catalog.Agent, error)
	// PendingCount counts the agents awaiting review the scope would see
	// once approved, for a search page that finds none.
	PendingCount(ctx context.Context, sc catalog.Scope) (int, error)
	Collections(ctx context.Context, sc catalog.Scope) ([]catalog.Collection, error)
	SaveCollection(ctx context.Context, actor catalog.Actor, c catalog.Collection) (catalog.Collection, bool, error)
	AddToCollection(ctx context.Context, actor catalog.Actor, name string, agentIDs ...string) error
	RemoveFromCollection(ctx context.Context, actor catalog.Actor, name string, agentIDs ...string) error
	// AgentIDOf is the id of the agent a registry id, ARD identifier or
	// card URL names, as the scope sees it: catalog.ErrNotFound for one it
	// does not see.
	AgentIDOf(ctx context.Context, sc catalog.Scope, ref string) (string, error)
}

// Bounds of the curation pages.
const (
	maxReviewItems       = 100
	maxCollectionMembers = catalog.MaxLimit
	maxCurationForm      = 8 << 10
	// maxCandidates bounds the agents offered to add to a collection.
	maxCandidates = 8
	// maxAgentRef bounds what a curator types to name an agent: card URLs
	// run long.
	maxAgentRef = 2048
	// maxBulkForm holds maxReviewItems ids and a reason.
	maxBulkForm = 16 << 10
)

// mountCuration adds the review page and listing transitions (editor) and
// the collections page (everyone; changes are the admin's). Every change
// is a plain POST form with the CSRF token, answered 303 to the page it
// came from, so it works with and without JavaScript.
func (h *Console) mountCuration(e *echo.Echo) {
	if h.opts.Curator == nil {
		return
	}
	edit := h.guarded(auth.Editor)
	admin := h.guarded(auth.Admin)
	e.GET("/review", h.review, edit...)
	e.POST("/review", h.bulkListing, append(edit, limitBody(maxBulkForm), h.checkCSRF)...)
	e.POST("/agents/:id/listing", h.setListing, append(edit, limitBody(maxCurationForm), h.checkCSRF)...)
	e.GET("/collections", h.collections, h.guarded(auth.Viewer)...)
	e.POST("/collections", h.saveCollection, append(admin, limitBody(maxCurationForm), h.checkCSRF)...)
	e.GET("/collections/:name/candidates", h.memberCandidates, admin...)
	e.POST("/collections/:name/agents", h.addMember, append(admin, limitBody(maxCurationForm), h.checkCSRF)...)
	e.POST("/collections/:name/agents/:agent/remove", h.removeMember, append(admin, limitBody(maxCurationForm), h.checkCSRF)...)
}

func (h *Console) canReview(c echo.Context) bool {
	return h.opts.Curator != nil && h.holds(c, auth.Editor)
}

// listingView is the listing section of an agent page.
func (h *Console) listingView(c echo.Context, l catalog.Listing) view.Listing {
	v := view.Listing{State: l.State, Reason: l.Reason, Replacement: l.Replacement, By: l.By, At: l.At}
	if l.Replacement != "" {
		v.ReplacementURL = agentURL(l.Replacement)
	}
	return v
}

func (h *Console) listingForm(c echo.Context, id, from string) view.ListingForm {
	return view.ListingForm{Action: agentURL(id) + "/listing", CSRFToken: h.csrfToken(c), From: from}
}

func (h *Console) review(c echo.Context) error {
	return h.reviewPage(c, http.StatusOK, view.BulkForm{}, nil)
}

// reviewPage renders the review page with the bulk form as given (a
// refused post shows it again: its reason, its error and the ticked
// agents).
func (h *Console) reviewPage(c echo.Context, status int, bulk view.BulkForm, checked map[string]bool) error {
	ctx := c.Request().Context()
	sc := h.scope(c)
	agents, err := h.opts.Curator.PendingAgents(ctx, sc, maxReviewItems)
	if err != nil {
		h.log.ErrorContext(ctx, "console review page failed", "err", err)
		return h.errorPage(c, http.StatusInternalServerError, "Something went wrong", "The registry could not list the agents awaiting review. The failure is in its log.")
	}
	bulk.Action, bulk.CSRFToken = "/review", h.csrfToken(c)
	v := view.Review{Bulk: bulk}
	for _, ag := range agents {
		it := view.ReviewItem{ID: ag.ID, URL: agentURL(ag.ID), Name: ag.ID, CardURL: ag.CardURL, Current: ag.CurrentVersion,
			Approved: ag.Listing.ApprovedVersion, Reason: ag.Listing.Reason, Form: h.listingForm(c, ag.ID, "review"),
			Checked: checked[ag.ID]}
		if ag.Card != nil && ag.Card.Name != "" {
			it.Name = ag.Card.Name
		}
		if err := h.reviewSummary(ctx, sc, &it); err != nil {
			h.log.ErrorContext(ctx, "console review summary failed", "agent_id", ag.ID, "err", err)
			it.Findings = []view.ReviewFinding{{Severity: "error", Code: "unavailable", Message: "The registry could not read this agent's card and report."}}
		}
		if it.Approved > 0 && it.Approved != it.Current {
			d := view.Diff{From: it.Approved, To: it.Current, Shown: true}
			from, err := h.opts.Agents.Version(ctx, sc, ag.ID, it.Approved)
			var to catalog.Version
			if err == nil {
				to, err = h.opts.Agents.Version(ctx, sc, ag.ID, it.Current)
			}
			if err != nil {
				h.log.ErrorContext(ctx, "console review diff failed", "agent_id", ag.ID, "err", err)
				d.Error = "The registry could not load these versions."
			} else {
				d.Rows, d.Same = sideBySide(prettyJSON(from.Raw)+"\n", prettyJSON(to.Raw)+"\n")
			}
			it.Diff = &d
		}
		v.Items = append(v.Items, it)
	}
	return h.render(c, status, page{title: "Review", body: templates.ReviewPage(v)})
}

// reviewSummary fills it with what a reviewer decides on, as the agent
// page shows it: the card's summary, the signature verdict and the
// findings (lint, security audit, content scan) of the current version.
func (h *Console) reviewSummary(ctx context.Context, sc catalog.Scope, it *view.ReviewItem) error {
	av, err := h.opts.Agents.AgentView(ctx, sc, it.ID, h.now())
	if err != nil {
		return fmt.Errorf("reading agent %s: %w", it.ID, err)
	}
	if av.Agent.Card == nil {
		return nil
	}
	a, err := h.agentView(av.Agent, nil, av.Health, av.Verification)
	if err != nil {
		return err
	}
	it.Description, it.Provider, it.CardVersion = a.Description, a.Provider, a.Version
	for _, sk := range a.Skills {
		it.Skills = append(it.Skills, sk.Name)
	}
	it.Signature = a.Signature
	for _, f := range a.Lint {
		it.Findings = append(it.Findings, view.ReviewFinding{Severity: string(f.Severity), Code: f.Code, Message: f.Message})
	}
	if vr := a.Verification; vr != nil {
		it.Signature = vr.Status
		for _, f := range vr.Audit {
			it.Findings = append(it.Findings, view.ReviewFinding{Severity: string(f.Severity), Code: f.Code, Message: f.Message})
		}
		for _, f := range vr.Content {
			it.Findings = append(it.Findings, view.ReviewFinding{Severity: f.Severity, Code: f.Code, Message: f.Message})
		}
	}
	rank := map[string]int{"error": 0, "warning": 1, "info": 2}
	slices.SortStableFunc(it.Findings, func(x, y view.ReviewFinding) int { return rank[x.Severity] - rank[y.Severity] })
	return nil
}

// bulkListing approves or rejects the ticked agents, one reason for the
// batch. Each transition is the catalog's SetListing, audited on its
// own, as from an agent's page. A rejection without a reason, or no
// agent ticked, shows the form again as sent, saying what is missing.
func (h *Console) bulkListing(c echo.Context) error {
	form, err := c.FormParams()
	if err != nil {
		return h.errorPage(c, http.StatusBadRequest, "Listing not changed", "The form could not be read.")
	}
	ids := form["agent"]
	state, reason := form.Get("state"), strings.TrimSpace(form.Get("reason"))
	checked := make(map[string]bool, len(ids))
	for _, id := range ids {
		checked[id] = true
	}
	bulk := view.BulkForm{Reason: form.Get("reason")}
	switch {
	case state != catalog.ListingApproved && state != catalog.ListingRejected:
		bulk.Error = "Choose Approve or Reject."
	case len(ids) == 0:
		bulk.Error = "Tick the agents to " + map[string]string{catalog.ListingApproved: "approve", catalog.ListingRejected: "reject"}[state] + "."
	case len(ids) > maxReviewItems:
		bulk.Error = fmt.Sprintf("Tick at most %d agents at once.", maxReviewItems)
	case state == catalog.ListingRejected && reason == "":
		bulk.Error = "A rejection needs a reason: say why these agents are rejected."
	}
	if bulk.Error != "" {
		return h.reviewPage(c, http.StatusBadRequest, bulk, checked)
	}
	ctx := c.Request().Context()
	var failed []string
	for _, id := range ids {
		_, err := h.opts.Curator.SetListing(ctx, h.actor(c), h.scope(c), id, catalog.ListingChange{State: state, Reason: reason})
		switch {
		case errors.Is(err, catalog.ErrInvalidListing) || errors.Is(err, catalog.ErrNotFound):
			failed = append(failed, id)
		case err != nil:
			h.log.ErrorContext(ctx, "console bulk listing failed", "agent_id", id, "err", err)
			failed = append(failed, id)
		default:
			delete(checked, id)
			h.log.InfoContext(ctx, "console: agent listing changed", "agent_id", id, "state", state, "by", h.callerName(c))
		}
	}
	if len(failed) > 0 {
		// The others are done; the agents still ticked are those left.
		bulk.Error = fmt.Sprintf("%d of %d agents were not changed (no longer awaiting review, or the change is not allowed); they stay ticked.", len(failed), len(ids))
		return h.reviewPage(c, http.StatusConflict, bulk, checked)
	}
	return c.Redirect(http.StatusSeeOther, "/review")
}

func (h *Console) setListing(c echo.Context) error {
	id, ok := pathID(c)
	if !ok {
		return h.agentError(c, errAgentGone)
	}
	ctx := c.Request().Context()
	ch := catalog.ListingChange{State: c.FormValue("state"), Reason: c.FormValue("reason"), Replacement: c.FormValue("replacement")}
	_, err := h.opts.Curator.SetListing(ctx, h.actor(c), h.scope(c), id, ch)
	if errors.Is(err, catalog.ErrInvalidListing) {
		return h.errorPage(c, http.StatusBadRequest, "Listing not changed",
			strings.TrimPrefix(err.Error(), catalog.ErrInvalidListing.Error()+": ")+".")
	}
	if err != nil {
		return h.agentError(c, fmt.Errorf("setting listing of agent %s: %w", id, err))
	}
	h.log.InfoContext(ctx, "console: agent listing changed", "agent_id", id, "state", ch.State, "by", h.callerName(c))
	if c.FormValue("from") == "review" {
		return c.Redirect(http.StatusSeeOther, "/review")
	}
	return c.Redirect(http.StatusSeeOther, agentURL(id)+"#listing")
}

func (h *Console) collections(c echo.Context) error {
	return h.collectionsPage(c, http.StatusOK, nil)
}

// memberSearch is an admin's search for an agent to add to a collection,
// shown under that collection's form when the page is rendered without
// htmx (a typed name submitted, or the candidates' address opened).
type memberSearch struct {
	collection string
	candidates view.Candidates
}

func (h *Console) collectionsPage(c echo.Context, status int, ms *memberSearch) error {
	ctx := c.Request().Context()
	sc := h.scope(c)
	cols, err := h.opts.Curator.Collections(ctx, sc)
	if err != nil {
		h.log.ErrorContext(ctx, "console collections page failed", "err", err)
		return h.errorPage(c, http.StatusInternalServerError, "Something went wrong", "The registry could not list the collections. The failure is in its log.")
	}
	v := view.Collections{Admin: h.holds(c, auth.Admin)}
	if v.Admin {
		v.CSRFToken = h.csrfToken(c)
	}
	for _, col := range cols {
		cv := view.Collection{Name: col.Name, Description: col.Description, Groups: col.Groups, Agents: col.Agents,
			Action: collectionURL(col.Name) + "/agents", Candidates: collectionURL(col.Name) + "/candidates",
			CandidatesID: fmt.Sprintf("candidates-%d", len(v.Items))}
		if ms != nil && strings.EqualFold(ms.collection, col.Name) {
			cv.Search = ms.candidates
		}
		// Members come from search, which applies the caller's scope.
		page, err := h.opts.Searcher.Search(ctx, catalog.Query{Filters: map[string][]string{catalog.FieldCollection: {col.Name}},
			Limit: maxCollectionMembers, Scope: sc})
		if err != nil {
			h.log.ErrorContext(ctx, "console collection members failed", "collection", col.Name, "err", err)
			return h.errorPage(c, http.StatusInternalServerError, "Something went wrong", "The registry could not list the collections. The failure is in its log.")
		}
		for _, s := range page.Items {
			m := view.Member{ID: s.ID, Name: s.Name, URL: agentURL(s.ID)}
			if m.Name == "" {
				m.Name = s.ID
			}
			if v.Admin {
				m.Remove = cv.Action + "/" + url.PathEscape(s.ID) + "/remove"
			}
			cv.Members = append(cv.Members, m)
		}
		v.Items = append(v.Items, cv)
	}
	return h.render(c, status, page{title: "Collections", body: templates.CollectionsPage(v)})
}

func collectionURL(name string) string { return "/collections/" + url.PathEscape(name) }

func (h *Console) saveCollection(c echo.Context) error {
	var groups []string
	for g := range strings.SplitSeq(c.FormValue("groups"), ",") {
		if g = strings.TrimSpace(g); g != "" {
			groups = append(groups, g)
		}
	}
	col := catalog.Collection{Name: c.FormValue("name"), Description: c.FormValue("description"), Groups: groups}
	_, _, err := h.opts.Curator.SaveCollection(c.Request().Context(), h.actor(c), col)
	if errors.Is(err, catalog.ErrInvalidCollection) {
		return h.errorPage(c, http.StatusBadRequest, "Collection not saved",
			strings.TrimPrefix(err.Error(), catalog.ErrInvalidCollection.Error()+": ")+".")
	}
	if err != nil {
		h.log.ErrorContext(c.Request().Context(), "console saving collection failed", "err", err)
		return h.errorPage(c, http.StatusInternalServerError, "Something went wrong", "The registry could not save the collection. The failure is in its log.")
	}
	return c.Redirect(http.StatusSeeOther, "/collections")
}

// memberCandidates answers an admin typing in a collection's add form:
// the agents their words name, among those they see, each with a button
// that adds it (a fragment for htmx, else the page with them shown).
func (h *Console) memberCandidates(c echo.Context) error {
	name, err := url.PathUnescape(c.Param("name"))
	if err != nil || name == "" {
		return h.errorPage(c, http.StatusNotFound, "Not found", "No such collection.")
	}
	cs, err := h.findCandidates(c, c.QueryParam("agent"))
	if err != nil {
		return h.candidatesFailed(c, err)
	}
	if isFragmentRequest(c.Request()) {
		return h.render(c, http.StatusOK, page{body: templates.MemberCandidates(cs)})
	}
	return h.collectionsPage(c, http.StatusOK, &memberSearch{collection: name, candidates: cs})
}

// findCandidates finds the agents ref names among those the caller sees:
// the one an ARD identifier, a card URL or a registry id names, else the
// best matches of a search of its words (an agent's name). Nothing is
// said of agents the caller does not see: they are not found.
func (h *Console) findCandidates(c echo.Context, ref string) (view.Candidates, error) {
	ref = strings.TrimSpace(ref)
	cs := view.Candidates{Query: ref}
	if ref == "" {
		return cs, nil
	}
	cs.Asked = true
	if len(ref) > maxAgentRef {
		cs.Error = fmt.Sprintf("That is longer than an agent's name, identifier or card URL (at most %d characters).", maxAgentRef)
		return cs, nil
	}
	ctx, sc := c.Request().Context(), h.scope(c)
	id, err := h.opts.Curator.AgentIDOf(ctx, sc, ref)
	switch {
	case err == nil:
		av, err := h.opts.Agents.AgentView(ctx, sc, id, h.now())
		if err == nil {
			cand := view.Candidate{ID: id, Name: id, CardAt: cardAt(av.Agent.CardURL)}
			if av.Agent.Card != nil && av.Agent.Card.Name != "" {
				cand.Name = av.Agent.Card.Name
			}
			cs.Items = []view.Candidate{cand}
			return cs, nil
		}
		if !errors.Is(err, catalog.ErrNotFound) {
			return cs, fmt.Errorf("reading agent %s: %w", id, err)
		}
	case catalog.IsAgentRef(ref) && !errors.Is(err, catalog.ErrNotFound):
		cs.Error = "That is neither an agent's ARD identifier (urn:air:…) nor a card URL the registry can read."
		return cs, nil
	case catalog.IsAgentRef(ref):
		return cs, nil // names no agent the caller sees
	case !errors.Is(err, catalog.ErrNotFound):
		return cs, fmt.Errorf("resolving %q: %w", ref, err)
	}
	page, err := h.opts.Searcher.Search(ctx, catalog.Query{Text: ref, Limit: maxCandidates, Scope: sc})
	if errors.Is(err, catalog.ErrInvalidQuery) {
		cs.Error = "Type an agent's name, its ARD identifier (urn:air:…) or its card URL."
		return cs, nil
	}
	if err != nil {
		return cs, fmt.Errorf("searching for %q: %w", ref, err)
	}
	for _, s := range page.Items {
		cand := view.Candidate{ID: s.ID, Name: s.Name, CardAt: cardAt(s.CardURL)}
		if cand.Name == "" {
			cand.Name = s.ID
		}
		cs.Items = append(cs.Items, cand)
	}
	return cs, nil
}

func (h *Console) candidatesFailed(c echo.Context, err error) error {
	h.log.ErrorContext(c.Request().Context(), "console member candidates failed", "err", err)
	return h.errorPage(c, http.StatusInternalServerError, "Something went wrong", "The registry could not look for agents. The failure is in its log.")
}

// addMember adds the agent picked from the candidates (agent_id), or the
// one the typed words name exactly (an id, ARD identifier or card URL).
// Other words show the page with the agents they find, to pick from.
func (h *Console) addMember(c echo.Context) error {
	if id := strings.TrimSpace(c.FormValue("agent_id")); id != "" {
		return h.changeMember(c, id, true)
	}
	name, err := url.PathUnescape(c.Param("name"))
	if err != nil || name == "" {
		return h.errorPage(c, http.StatusNotFound, "Not found", "No such collection or agent.")
	}
	ref := strings.TrimSpace(c.FormValue("agent"))
	if ref != "" && len(ref) <= maxAgentRef {
		id, err := h.opts.Curator.AgentIDOf(c.Request().Context(), h.scope(c), ref)
		if err == nil {
			return h.changeMember(c, id, true)
		}
	}
	cs, err := h.findCandidates(c, ref)
	if err != nil {
		return h.candidatesFailed(c, err)
	}
	status := http.StatusOK
	if !cs.Asked {
		cs.Error = "Type an agent's name, its ARD identifier (urn:air:…) or its card URL."
		status = http.StatusBadRequest
	}
	return h.collectionsPage(c, status, &memberSearch{collection: name, candidates: cs})
}

func (h *Console) removeMember(c echo.Context) error {
	id, err := url.PathUnescape(c.Param("agent"))
	if err != nil {
		return h.agentError(c, errAgentGone)
	}
	return h.changeMember(c, id, false)
}

func (h *Console) changeMember(c echo.Context, id string, in bool) error {
	name, err := url.PathUnescape(c.Param("name"))
	if err != nil || name == "" || id == "" || len(id) > maxIDLen {
		return h.errorPage(c, http.StatusNotFound, "Not found", "No such collection or agent.")
	}
	ctx := c.Request().Context()
	if in {
		// Only an agent the caller sees: a forged id of a hidden one is
		// as unknown as any.
		if id, err = h.opts.Curator.AgentIDOf(ctx, h.scope(c), id); err == nil {
			err = h.opts.Curator.AddToCollection(ctx, h.actor(c), name, id)
		}
	} else {
		err = h.opts.Curator.RemoveFromCollection(ctx, h.actor(c), name, id)
	}
	if errors.Is(err, catalog.ErrNotFound) {
		return h.errorPage(c, http.StatusNotFound, "Not found", "No such collection or agent.")
	}
	if err != nil {
		h.log.ErrorContext(ctx, "console collection change failed", "collection", name, "agent_id", id, "err", err)
		return h.errorPage(c, http.StatusInternalServerError, "Something went wrong", "The registry could not change the collection. The failure is in its log.")
	}
	h.log.InfoContext(ctx, "console: collection members changed", "collection", name, "agent_id", id, "added", in, "by", h.callerName(c))
	return c.Redirect(http.StatusSeeOther, "/collections")
}
