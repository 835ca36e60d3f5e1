package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/catalog"
)

// Curator keeps the curated directory (issue 13): listing states and
// collections. *catalog.Store implements it.
type Curator interface {
	// SetListing returns catalog.ErrNotFound for an agent the scope does
	// not see, catalog.ErrInvalidListing for a bad change.
	SetListing(ctx context.Context, actor catalog.Actor, sc catalog.Scope, id string, ch catalog.ListingChange) (catalog.Agent, error)
	// Collections lists the collections the scope sees.
	Collections(ctx context.Context, sc catalog.Scope) ([]catalog.Collection, error)
	// SaveCollection creates or updates a collection; it reports whether
	// it created one.
	SaveCollection(ctx context.Context, actor catalog.Actor, c catalog.Collection) (catalog.Collection, bool, error)
	// AddToCollection and RemoveFromCollection return catalog.ErrNotFound
	// for an unknown collection or agent.
	AddToCollection(ctx context.Context, actor catalog.Actor, name string, agentIDs ...string) error
	RemoveFromCollection(ctx context.Context, actor catalog.Actor, name string, agentIDs ...string) error
}

// Body bounds of the curation routes.
const (
	maxListingBody    = 8 << 10
	maxCollectionBody = 32 << 10
)

// curationRoutes exist when the API was given a Curator. Listing
// transitions are the editor's; collections are read by everyone (each
// caller sees those open to it) and changed by the admin.
func (a *API) curationRoutes() []route {
	if a.curator == nil {
		return nil
	}
	return []route{
		{method: http.MethodPost, path: "/agents/:id/listing", role: auth.Editor, handler: a.setListing},
		{method: http.MethodGet, path: "/collections", role: auth.Viewer, handler: a.listCollections},
		{method: http.MethodPost, path: "/collections", role: auth.Admin, handler: a.saveCollection},
		{method: http.MethodPut, path: "/collections/:name/agents/:agent_id", role: auth.Admin, handler: func(c echo.Context) error { return a.setMember(c, true) }},
		{method: http.MethodDelete, path: "/collections/:name/agents/:agent_id", role: auth.Admin, handler: func(c echo.Context) error { return a.setMember(c, false) }},
	}
}

// ListingRequest is the body of POST /agents/{id}/listing.
type ListingRequest struct {
	State       string `json:"state"`
	Reason      string `json:"reason,omitempty"`
	Replacement string `json:"replacement,omitempty"`
}

// Listing is where an agent stands in the listing lifecycle.
type Listing struct {
	State       string `json:"state"`
	Reason      string `json:"reason,omitempty"`
	Replacement string `json:"replacement,omitempty"`
	// By names who made the last transition (a user's subject, or
	// "system:…"); At when. Absent for an agent never reviewed.
	By string     `json:"by,omitempty"`
	At *time.Time `json:"at,omitempty"`
	// ApprovedVersion is the card version last approved, 0 when none was.
	ApprovedVersion int `json:"approved_version"`
}

func newListing(l catalog.Listing) Listing {
	return Listing{State: l.State, Reason: l.Reason, Replacement: l.Replacement, By: l.By, At: l.At,
		ApprovedVersion: l.ApprovedVersion}
}

// Collection is a named group of agents.
type Collection struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Groups      []string `json:"groups"`
	// Agents counts the members the caller sees.
	Agents    int       `json:"agents"`
	CreatedAt time.Time `json:"created_at"`
}

// CollectionRequest is the body of POST /collections.
type CollectionRequest struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Groups      []string `json:"groups,omitempty"`
}

// CollectionList is the body of GET /collections.
type CollectionList struct {
	Items []Collection `json:"items"`
}

func newCollection(c catalog.Collection) Collection {
	return Collection{Name: c.Name, Description: c.Description, Groups: nonNil(c.Groups), Agents: c.Agents, CreatedAt: c.CreatedAt}
}

// setListing moves an agent to another listing state and answers the
// agent as the caller now sees it.
func (a *API) setListing(c echo.Context) error {
	id, err := agentID(c)
	if err != nil {
		return err
	}
	var in ListingRequest
	if err := decodeJSONBody(c, &in, maxListingBody, `{"state": "approved", "reason": "...", "replacement": "<agent id>"}`); err != nil {
		return err
	}
	_, err = a.curator.SetListing(c.Request().Context(), actorOf(c), a.scope(c),
		id, catalog.ListingChange{State: in.State, Reason: in.Reason, Replacement: in.Replacement})
	switch {
	case errors.Is(err, catalog.ErrNotFound):
		return agentNotFound(id)
	case errors.Is(err, catalog.ErrInvalidListing):
		// The catalog's message says what is wrong with the change.
		return newError(http.StatusBadRequest, CodeInvalidBody, "%s", strings.TrimPrefix(err.Error(), catalog.ErrInvalidListing.Error()+": "))
	case err != nil:
		return fmt.Errorf("setting listing of agent %s: %w", id, err)
	}
	a.log.Info("api: agent listing changed", "agent_id", id, "state", in.State)
	d, err := a.agentDetail(c, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, d)
}

func (a *API) listCollections(c echo.Context) error {
	cs, err := a.curator.Collections(c.Request().Context(), a.scope(c))
	if err != nil {
		return fmt.Errorf("listing collections: %w", err)
	}
	out := CollectionList{Items: make([]Collection, len(cs))}
	for i, col := range cs {
		out.Items[i] = newCollection(col)
	}
	return c.JSON(http.StatusOK, out)
}

func (a *API) saveCollection(c echo.Context) error {
	var in CollectionRequest
	if err := decodeJSONBody(c, &in, maxCollectionBody, `{"name": "Finance", "description": "...", "groups": ["finance"]}`); err != nil {
		return err
	}
	col, created, err := a.curator.SaveCollection(c.Request().Context(), actorOf(c),
		catalog.Collection{Name: in.Name, Description: in.Description, Groups: in.Groups})
	switch {
	case errors.Is(err, catalog.ErrInvalidCollection):
		return newError(http.StatusBadRequest, CodeInvalidBody, "%s", strings.TrimPrefix(err.Error(), catalog.ErrInvalidCollection.Error()+": "))
	case err != nil:
		return fmt.Errorf("saving collection: %w", err)
	}
	a.log.Info("api: collection saved", "collection", col.Name, "created", created)
	status := http.StatusOK
	if created {
		status = http.StatusCreated
		c.Response().Header().Set(echo.HeaderLocation, BasePath+"/collections")
	}
	return c.JSON(status, newCollection(col))
}

// setMember puts an agent in a collection or takes it out; both are
// idempotent and answer 204.
func (a *API) setMember(c echo.Context, in bool) error {
	name, err := url.PathUnescape(c.Param("name"))
	if err != nil || name == "" {
		return newError(http.StatusNotFound, CodeNotFound, "collection not found")
	}
	id, err := url.PathUnescape(c.Param("agent_id"))
	if err != nil || id == "" || len(id) > maxIDLen {
		return newError(http.StatusNotFound, CodeNotFound, "agent not found")
	}
	if in {
		err = a.curator.AddToCollection(c.Request().Context(), actorOf(c), name, id)
	} else {
		err = a.curator.RemoveFromCollection(c.Request().Context(), actorOf(c), name, id)
	}
	if errors.Is(err, catalog.ErrNotFound) {
		return newError(http.StatusNotFound, CodeNotFound, "collection %s or agent %s not found", name, id)
	}
	if err != nil {
		return fmt.Errorf("changing members of collection %s: %w", name, err)
	}
	a.log.Info("api: collection members changed", "collection", name, "agent_id", id, "added", in)
	return c.NoContent(http.StatusNoContent)
}
