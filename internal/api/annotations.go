package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/catalog"
)

// Annotator replaces the operator's annotations of one agent;
// *catalog.Store implements it. Errors: catalog.ErrNotFound for an
// unknown id, a *catalog.AnnotationError for refused input.
type Annotator interface {
	SetAnnotations(ctx context.Context, actor catalog.Actor, sc catalog.Scope, agentID string, a catalog.Annotations) (catalog.Annotations, error)
}

// maxAnnotationsBody bounds PUT /agents/{id}/annotations: the notes at
// their longest in four-byte characters, and every label.
const maxAnnotationsBody = 4*catalog.MaxNotesLen + catalog.MaxLabels*(catalog.MaxLabelKeyLen+4*catalog.MaxLabelValueLen+8) + 4<<10

// AnnotationsRequest is the body of PUT /agents/{id}/annotations: the
// whole set, replacing what is stored (a field left out is cleared).
type AnnotationsRequest struct {
	OwnerTeam      string            `json:"owner_team"`
	Contact        string            `json:"contact"`
	Classification string            `json:"classification"`
	Labels         map[string]string `json:"labels"`
	Notes          string            `json:"notes"`
}

// Annotations are the operator's facts about an agent, never part of its
// card. Notes are present only for editors and admins.
type Annotations struct {
	OwnerTeam      string            `json:"owner_team"`
	Contact        string            `json:"contact"`
	Classification string            `json:"classification"`
	Labels         map[string]string `json:"labels"`
	Notes          *string           `json:"notes,omitempty"`
	// ChangedAt and ChangedBy (the actor's subject) are absent when the
	// agent was never annotated.
	ChangedAt *time.Time `json:"changed_at,omitempty"`
	ChangedBy *string    `json:"changed_by,omitempty"`
}

// newAnnotations is the wire form of a; notes only when withNotes.
func newAnnotations(a catalog.Annotations, withNotes bool) Annotations {
	out := Annotations{OwnerTeam: a.OwnerTeam, Contact: a.Contact, Classification: a.Classification,
		Labels: a.Labels}
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	if withNotes {
		notes := a.Notes
		out.Notes = &notes
	}
	if !a.ChangedAt.IsZero() {
		at, by := a.ChangedAt, a.ChangedBy
		out.ChangedAt, out.ChangedBy = &at, &by
	}
	return out
}

// seesNotes reports whether the caller of c may read internal notes:
// editors and admins, and everyone when sign-in is off.
func (a *API) seesNotes(c echo.Context) bool {
	return a.authz == nil || auth.FromContext(c.Request().Context()).Role.Includes(auth.Editor)
}

func (a *API) setAnnotations(c echo.Context) error {
	id, err := agentID(c)
	if err != nil {
		return err
	}
	var in AnnotationsRequest
	if err := decodeJSONBody(c, &in, maxAnnotationsBody,
		`{"owner_team": "...", "contact": "...", "classification": "...", "labels": {"key": "value"}, "notes": "..."}`); err != nil {
		return err
	}
	got, err := a.annotator.SetAnnotations(c.Request().Context(), actorOf(c), a.scope(c), id, catalog.Annotations{
		OwnerTeam: in.OwnerTeam, Contact: in.Contact, Classification: in.Classification, Labels: in.Labels, Notes: in.Notes})
	var ae *catalog.AnnotationError
	switch {
	case errors.As(err, &ae):
		e := newError(http.StatusBadRequest, CodeInvalidBody, "%s %s", ae.Field, ae.Reason)
		e.body.Parameter = ae.Field
		return e
	case errors.Is(err, catalog.ErrNotFound):
		return agentNotFound(id)
	case err != nil:
		return fmt.Errorf("annotating agent %s: %w", id, err)
	}
	a.log.Info("api: agent annotated", "agent_id", id)
	return c.JSON(http.StatusOK, newAnnotations(got, true))
}
