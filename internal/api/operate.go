package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/verify"
)

// Operator changes how the registry treats one agent; *catalog.Store
// implements it. Both return catalog.ErrNotFound for an unknown id
// (RemoveAgent also for one removed already), and it lists the removed
// agents.
type Operator interface {
	SetPaused(ctx context.Context, actor catalog.Actor, agentID string, paused bool) error
	RemoveAgent(ctx context.Context, actor catalog.Actor, id string) error
	RemovedAgents
}

// Keys is the trust store of pinned card-signing keys; *catalog.Store
// implements it.
type Keys interface {
	// TrustedKeys lists every key, revoked ones included, oldest first.
	TrustedKeys(ctx context.Context) ([]catalog.TrustedKey, error)
	// AddTrustedKey returns catalog.ErrConflict for an active key with the
	// same thumbprint.
	AddTrustedKey(ctx context.Context, actor catalog.Actor, k catalog.TrustedKey) (catalog.TrustedKey, error)
	// RevokeTrustedKey returns catalog.ErrNotFound for an unknown id.
	RevokeTrustedKey(ctx context.Context, actor catalog.Actor, id string, at time.Time) (catalog.TrustedKey, error)
}

// CrawlStatus reports the crawl's backlog and its failures;
// *catalog.Store implements it.
type CrawlStatus interface {
	CrawlQueue(ctx context.Context, now time.Time) (catalog.CrawlQueue, error)
	FailingHosts(ctx context.Context, limit int) ([]catalog.FailingHost, error)
}

// maxFailingHosts bounds the failing hosts GET /crawler lists.
const maxFailingHosts = 50

// maxKeyBody bounds POST /keys: a JWK, origins and a date.
const maxKeyBody = verify.DefaultMaxJWKSBytes + 16<<10

// operatorRoutes are the routes of the operator's actions; each exists
// only when the API was given what serves it. Removing an agent, trusted
// keys and the audit log are the admin's; pausing crawling is the
// editor's, like refreshing; the crawler's state is shown to editors, who
// act on it.
func (a *API) operatorRoutes() []route {
	var rs []route
	if a.audit != nil {
		rs = append(rs, route{method: http.MethodGet, path: "/audit", role: auth.Admin, handler: a.listAudit})
	}
	if a.operator != nil {
		rs = append(rs,
			route{method: http.MethodDelete, path: "/agents/:id", role: auth.Admin, handler: a.deleteAgent},
			route{method: http.MethodGet, path: "/removed-agents", role: auth.Admin, handler: a.listRemoved},
			route{method: http.MethodPost, path: "/agents/:id/pause", role: auth.Editor, handler: func(c echo.Context) error { return a.setPaused(c, true) }},
			route{method: http.MethodPost, path: "/agents/:id/resume", role: auth.Editor, handler: func(c echo.Context) error { return a.setPaused(c, false) }},
		)
	}
	if a.keys != nil {
		rs = append(rs,
			route{method: http.MethodGet, path: "/keys", role: auth.Admin, handler: a.listKeys},
			route{method: http.MethodPost, path: "/keys", role: auth.Admin, handler: a.addKey},
			route{method: http.MethodPost, path: "/keys/:id/revoke", role: auth.Admin, handler: a.revokeKey},
		)
	}
	if a.crawl != nil {
		rs = append(rs, route{method: http.MethodGet, path: "/crawler", role: auth.Editor, handler: a.crawlerStatus})
	}
	return rs
}

// setPaused stops or resumes crawling an agent and answers the agent
// (health_report.paused tells which).
func (a *API) setPaused(c echo.Context, paused bool) error {
	id, err := agentID(c)
	if err != nil {
		return err
	}
	if err := noParameters(c); err != nil {
		return err
	}
	if err := a.mustSee(c, id); err != nil {
		return err
	}
	err = a.operator.SetPaused(c.Request().Context(), actorOf(c), id, paused)
	if errors.Is(err, catalog.ErrNotFound) {
		return agentNotFound(id)
	}
	if err != nil {
		return fmt.Errorf("setting paused=%v on agent %s: %w", paused, id, err)
	}
	a.log.Info("api: agent crawling changed", "agent_id", id, "paused", paused)
	d, err := a.agentDetail(c, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, d)
}

// deleteAgent removes an agent: it leaves search and the crawl, and
// only admins see it and its history; registering its URL again restores
// it with the same id.
func (a *API) deleteAgent(c echo.Context) error {
	id, err := agentID(c)
	if err != nil {
		return err
	}
	err = a.operator.RemoveAgent(c.Request().Context(), actorOf(c), id)
	if errors.Is(err, catalog.ErrNotFound) {
		return agentNotFound(id)
	}
	if err != nil {
		return fmt.Errorf("removing agent %s: %w", id, err)
	}
	a.log.Info("api: agent removed", "agent_id", id)
	return c.NoContent(http.StatusNoContent)
}

// TrustedKey is a pinned card-signing key.
type TrustedKey struct {
	ID  string `json:"id"`
	KID string `json:"kid"`
	// JWK is the public key (a private one is reduced before it is
	// stored).
	JWK        json.RawMessage `json:"jwk"`
	Thumbprint string          `json:"thumbprint"`
	Origins    []string        `json:"origins"`
	// State is active, expired or revoked.
	State     string     `json:"state"`
	NotAfter  *time.Time `json:"not_after,omitempty"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
}

// TrustedKeyList is GET /keys.
type TrustedKeyList struct {
	// Items are oldest first, revoked keys included.
	Items []TrustedKey `json:"items"`
}

// AddKeyRequest is the body of POST /keys.
type AddKeyRequest struct {
	JWK json.RawMessage `json:"jwk"`
	// KID defaults to the JWK's own and must agree with it.
	KID      string     `json:"kid,omitempty"`
	Origins  []string   `json:"origins"`
	NotAfter *time.Time `json:"not_after,omitempty"`
}

func newTrustedKey(k catalog.TrustedKey, now time.Time) TrustedKey {
	out := TrustedKey{ID: k.ID, KID: k.KID, JWK: json.RawMessage(k.JWK), Thumbprint: k.Thumbprint, Origins: k.Origins,
		NotAfter: k.NotAfter, RevokedAt: k.RevokedAt, CreatedAt: k.CreatedAt, State: k.State(now)}
	if out.Origins == nil {
		out.Origins = []string{}
	}
	return out
}

func (a *API) listKeys(c echo.Context) error {
	keys, err := a.keys.TrustedKeys(c.Request().Context())
	if err != nil {
		return fmt.Errorf("listing trusted keys: %w", err)
	}
	now := a.now()
	l := TrustedKeyList{Items: make([]TrustedKey, len(keys))}
	for i, k := range keys {
		l.Items[i] = newTrustedKey(k, now)
	}
	return c.JSON(http.StatusOK, l)
}

func (a *API) addKey(c echo.Context) error {
	var in AddKeyRequest
	if err := decodeJSONBody(c, &in, maxKeyBody, `{"jwk": {...}, "origins": ["https://..."]}`); err != nil {
		return err
	}
	if len(in.Origins) == 0 {
		e := newError(http.StatusBadRequest, CodeInvalidBody, `origins is required: the origins the key may sign for, or ["*"]`)
		e.body.Parameter = "origins"
		return e
	}
	var notAfter time.Time
	if in.NotAfter != nil {
		notAfter = *in.NotAfter
	}
	k, err := verify.NewTrustedKey(in.JWK, strings.TrimSpace(in.KID), in.Origins, notAfter)
	if err != nil {
		// verify's message says what is wrong with the given key.
		e := newError(http.StatusUnprocessableEntity, CodeInvalidKey, "%s", err.Error())
		e.body.Parameter = "jwk"
		return e
	}
	added, err := a.keys.AddTrustedKey(c.Request().Context(), actorOf(c), k)
	if errors.Is(err, catalog.ErrConflict) {
		return newError(http.StatusConflict, CodeConflict, "a key with thumbprint %s is pinned already; revoke it first to change it", k.Thumbprint)
	}
	if err != nil {
		return fmt.Errorf("adding trusted key: %w", err)
	}
	a.log.Info("api: trusted key added", "key_id", added.ID, "kid", added.KID)
	return c.JSON(http.StatusCreated, newTrustedKey(added, a.now()))
}

func (a *API) revokeKey(c echo.Context) error {
	id, err := url.PathUnescape(c.Param("id"))
	if err != nil || id == "" || len(id) > maxIDLen {
		return newError(http.StatusNotFound, CodeNotFound, "trusted key not found")
	}
	if err := noParameters(c); err != nil {
		return err
	}
	k, err := a.keys.RevokeTrustedKey(c.Request().Context(), actorOf(c), id, a.now())
	if errors.Is(err, catalog.ErrNotFound) {
		return newError(http.StatusNotFound, CodeNotFound, "no trusted key with id %q", id)
	}
	if err != nil {
		return fmt.Errorf("revoking trusted key %s: %w", id, err)
	}
	a.log.Info("api: trusted key revoked", "key_id", k.ID, "kid", k.KID)
	return c.JSON(http.StatusOK, newTrustedKey(k, a.now()))
}

// CrawlerStatus is GET /crawler.
type CrawlerStatus struct {
	// Due counts agents whose check is due and that no replica is
	// checking.
	Due int `json:"due"`
	// OldestDue is when the most overdue of them was due; LagSeconds how
	// far the crawl is behind its schedule (0 when nothing is due).
	OldestDue    *time.Time    `json:"oldest_due,omitempty"`
	LagSeconds   float64       `json:"lag_seconds"`
	FailingHosts []FailingHost `json:"failing_hosts"`
}

// FailingHost is a host whose agents' last checks failed.
type FailingHost struct {
	Host   string `json:"host"`
	Agents int    `json:"agents"`
	// LastErrorClass is the failure class of its most recent failure.
	LastErrorClass string    `json:"last_error_class"`
	LastErrorAt    time.Time `json:"last_error_at"`
}

func (a *API) crawlerStatus(c echo.Context) error {
	ctx := c.Request().Context()
	now := a.now()
	q, err := a.crawl.CrawlQueue(ctx, now)
	if err != nil {
		return fmt.Errorf("reading crawl queue: %w", err)
	}
	hosts, err := a.crawl.FailingHosts(ctx, maxFailingHosts)
	if err != nil {
		return fmt.Errorf("reading failing hosts: %w", err)
	}
	s := CrawlerStatus{Due: q.Due, FailingHosts: make([]FailingHost, len(hosts))}
	if !q.OldestDue.IsZero() {
		t := q.OldestDue.UTC()
		s.OldestDue = &t
		s.LagSeconds = max(now.Sub(t).Seconds(), 0)
	}
	for i, h := range hosts {
		s.FailingHosts[i] = FailingHost{Host: h.Host, Agents: h.Agents, LastErrorClass: h.LastErrorClass, LastErrorAt: h.LastErrorAt}
	}
	return c.JSON(http.StatusOK, s)
}
