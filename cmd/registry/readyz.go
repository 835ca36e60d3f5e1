package main

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// readyTimeout bounds the database round trips of one readiness check, so
// a hung database makes the probe fail rather than hang.
const readyTimeout = 2 * time.Second

// Reasons /readyz gives for not being ready; stable, for dashboards and
// runbooks.
const (
	notReadyDatabase      = "database_unreachable"
	notReadySchemaUnknown = "schema_version_unknown"
	notReadySchemaBehind  = "schema_behind"
	notReadySchemaAhead   = "schema_ahead"
	notReadyIndex         = "index_building"
)

// readinessStore is what readiness asks the catalog.
type readinessStore interface {
	Ping(ctx context.Context) error
	// SchemaVersion is the database's migration version and the highest
	// one this binary embeds.
	SchemaVersion(ctx context.Context) (have, want int64, err error)
}

// readiness answers /readyz: whether this replica should get traffic. It
// is ready when its database answers, the schema is exactly the one this
// binary was built for (a replica of an older release must not write to a
// schema a newer one migrated, nor a new one serve before its migrations
// ran), and its search index is built (searches answer 503 until then).
type readiness struct {
	store      readinessStore
	indexReady func() bool
	// semantic reports search's semantic layer; nil when it is off. Its
	// state never makes the replica unready: search answers by words
	// alone while the embeddings API is down.
	semantic func() *readySemantic
	log      *slog.Logger
	// policy is the admission policy's state; nil without --policy.
	policy func() *readyPolicy
}

// readySemantic is the semantic layer in /readyz's answer.
type readySemantic struct {
	Model     string `json:"model"`
	Dimension int    `json:"dimension"`
	// Embedded of Agents indexed have a vector of the model.
	Embedded int `json:"embedded"`
	Agents   int `json:"agents"`
	// Degraded is set while the last request to the API failed.
	Degraded    bool       `json:"degraded"`
	LastError   string     `json:"last_error,omitempty"`
	LastErrorAt *time.Time `json:"last_error_at,omitempty"`
}

// readyBody is /readyz's answer.
type readyBody struct {
	Status string `json:"status"`           // "ready" or "not_ready"
	Reason string `json:"reason,omitempty"` // one of the notReady* codes
	// Schema versions, when the database answered.
	SchemaVersion int64 `json:"schema_version,omitempty"`
	BinaryVersion int64 `json:"binary_schema_version,omitempty"`
	// Semantic is search's semantic layer, when configured.
	Semantic *readySemantic `json:"semantic,omitempty"`
	// Policy is the admission policy in force, and why the file as it
	// is now was refused, if it was (the replica stays ready: the policy
	// in force still holds).
	Policy *readyPolicy `json:"policy,omitempty"`
}

// check returns the body and whether the replica is ready.
func (r *readiness) check(ctx context.Context) (readyBody, bool) {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	notReady := func(reason string) (readyBody, bool) {
		return readyBody{Status: "not_ready", Reason: reason}, false
	}
	if err := r.store.Ping(ctx); err != nil {
		r.log.Warn("not ready: database unreachable", "err", err)
		return notReady(notReadyDatabase)
	}
	have, want, err := r.store.SchemaVersion(ctx)
	if err != nil {
		r.log.Warn("not ready: reading the schema version", "err", err)
		return notReady(notReadySchemaUnknown)
	}
	body := readyBody{Status: "ready", SchemaVersion: have, BinaryVersion: want}
	if r.semantic != nil {
		body.Semantic = r.semantic()
	}
	if r.policy != nil {
		body.Policy = r.policy()
	}
	switch {
	case have < want:
		body.Status, body.Reason = "not_ready", notReadySchemaBehind
	case have > want:
		body.Status, body.Reason = "not_ready", notReadySchemaAhead
	case !r.indexReady():
		body.Status, body.Reason = "not_ready", notReadyIndex
	}
	return body, body.Reason == ""
}

func (r *readiness) serve(c echo.Context) error {
	body, ok := r.check(c.Request().Context())
	code := http.StatusOK
	if !ok {
		code = http.StatusServiceUnavailable
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(code, body)
}

// readySemantic is the semantic layer's state for /readyz, nil when off.
func (a *app) readySemantic() *readySemantic {
	if a.semantic == nil {
		return nil
	}
	st := a.semantic.State(a.store.EmbeddingCoverage())
	out := &readySemantic{Model: st.Model, Dimension: st.Dimension, Embedded: st.Embedded, Agents: st.Agents,
		Degraded: st.Degraded, LastError: st.LastError}
	if !st.LastErrorAt.IsZero() {
		t := st.LastErrorAt.UTC()
		out.LastErrorAt = &t
	}
	return out
}
