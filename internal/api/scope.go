package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/verify"
)

// scope is the scope of request c: auth.ScopeOf its caller, or everything when
// the API runs without sign-in (development on loopback, tests), where
// every route is open.
func (a *API) scope(c echo.Context) catalog.Scope {
	return a.scopeCtx(c.Request().Context())
}

func (a *API) scopeCtx(ctx context.Context) catalog.Scope {
	if a.authz == nil {
		return catalog.ScopeAll
	}
	return auth.ScopeOf(auth.FromContext(ctx))
}

// mustSee answers 404 for an agent the caller does not see, before a
// write that would otherwise tell it exists.
func (a *API) mustSee(c echo.Context, id string) error {
	sc := a.scope(c)
	if sc.All {
		return nil
	}
	_, err := a.catalog.Agent(c.Request().Context(), sc, id)
	if errors.Is(err, catalog.ErrNotFound) {
		return agentNotFound(id)
	}
	if err != nil {
		return fmt.Errorf("reading agent %s: %w", id, err)
	}
	return nil
}

// scopeReport keeps a verification report (verify.Report as JSON) inside
// the caller's scope: a content finding's related agents that the caller
// does not see are dropped (a finance-only agent whose name a public one
// imitates is not named to outsiders), the finding stays. A report that
// names no hidden agent is returned as stored.
func (a *API) scopeReport(c echo.Context, raw json.RawMessage) (json.RawMessage, error) {
	if raw == nil {
		return nil, nil
	}
	var rep struct {
		Content []verify.ContentFinding `json:"content_findings"`
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		return nil, fmt.Errorf("reading verification report: %w", err)
	}
	ids := verify.RelatedAgents(rep.Content)
	if len(ids) == 0 {
		return raw, nil
	}
	seen, err := a.catalog.VisibleAgents(c.Request().Context(), a.scope(c), ids)
	if err != nil {
		return nil, fmt.Errorf("checking related agents: %w", err)
	}
	if len(seen) == len(ids) {
		return raw, nil
	}
	// Only content_findings is rewritten; every other member keeps its
	// stored bytes.
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("reading verification report: %w", err)
	}
	kept, err := json.Marshal(verify.KeepRelated(rep.Content, func(id string) bool { return seen[id] }))
	if err != nil {
		return nil, fmt.Errorf("writing verification report: %w", err)
	}
	doc["content_findings"] = kept
	out, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("writing verification report: %w", err)
	}
	return out, nil
}
