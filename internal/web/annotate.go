package web

import (
	"context"
	"errors"
	"fmt"
	"maps"
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

// Annotator replaces the operator's annotations of one agent;
// *catalog.Store implements it. Errors: catalog.ErrNotFound for an
// unknown id, a *catalog.AnnotationError for refused input.
type Annotator interface {
	SetAnnotations(ctx context.Context, actor catalog.Actor, sc catalog.Scope, agentID string, a catalog.Annotations) (catalog.Annotations, error)
}

// maxAnnotationsForm bounds the annotations form: the notes at their
// longest, every label, URL-encoded (up to three bytes per byte).
const maxAnnotationsForm = 3 * (4*catalog.MaxNotesLen + catalog.MaxLabels*(catalog.MaxLabelKeyLen+4*catalog.MaxLabelValueLen+2) + 4<<10)

func (h *Console) mountAnnotations(e *echo.Echo) {
	if h.opts.Annotator == nil {
		return
	}
	e.POST("/agents/:id/annotations", h.annotate, append(h.guarded(auth.Editor), limitBody(maxAnnotationsForm), h.checkCSRF)...)
}

// annotationsView is what the agent page shows of a's annotations to the
// caller of c: notes for editors and admins, the form for those who may
// change them.
func (h *Console) annotationsView(c echo.Context, id string, a catalog.Annotations) view.Annotations {
	v := view.Annotations{OwnerTeam: a.OwnerTeam, Contact: a.Contact, Classification: a.Classification,
		ChangedAt: a.ChangedAt, ChangedBy: a.ChangedBy}
	for _, k := range slices.Sorted(maps.Keys(a.Labels)) {
		v.Labels = append(v.Labels, view.Label{Key: k, Value: a.Labels[k],
			SearchURL: searchURL(url.Values{catalog.FieldLabel: {k + ":" + a.Labels[k]}})})
	}
	if h.holds(c, auth.Editor) {
		v.Notes, v.ShowNotes = a.Notes, true
	}
	if h.opts.Annotator != nil && h.canOperate(c) {
		f := &view.AnnotationsForm{Action: agentURL(id) + "/annotations", CSRFToken: h.csrfToken(c),
			OwnerTeam: a.OwnerTeam, Contact: a.Contact, Classification: a.Classification, Notes: a.Notes}
		var lines []string
		for _, l := range v.Labels {
			lines = append(lines, l.Key+"="+l.Value)
		}
		f.LabelsText = strings.Join(lines, "\n")
		v.Form = f
	}
	return v
}

// annotate replaces an agent's annotations from the form. htmx gets the
// annotations section back (with the refused field explained, or saved);
// a plain form is sent back to the agent page, or shown it with the error.
func (h *Console) annotate(c echo.Context) error {
	id, ok := pathID(c)
	if !ok {
		return h.agentError(c, errAgentGone)
	}
	if err := c.Request().ParseForm(); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return h.errorPage(c, http.StatusRequestEntityTooLarge, "Too much at once",
				fmt.Sprintf("Notes hold at most %d characters, and an agent at most %d labels.", catalog.MaxNotesLen, catalog.MaxLabels))
		}
		return h.errorPage(c, http.StatusBadRequest, "Unreadable form", "The form could not be read; reload the page and try again.")
	}
	form := c.Request().PostForm
	in := catalog.Annotations{OwnerTeam: form.Get("owner_team"), Contact: form.Get("contact"),
		Classification: form.Get("classification"), Notes: form.Get("notes")}
	labels, err := parseLabelLines(form.Get("labels"))
	if err == nil {
		in.Labels = labels
		_, err = h.opts.Annotator.SetAnnotations(c.Request().Context(), h.actor(c), h.scope(c), id, in)
	}
	var (
		ae      *catalog.AnnotationError
		refused string
	)
	switch {
	case errors.As(err, &ae):
		refused = fmt.Sprintf("%s: %s.", annotationFieldNames[ae.Field], ae.Reason)
	case errors.Is(err, errLabelLine):
		refused = err.Error()
	case err != nil:
		return h.agentError(c, fmt.Errorf("annotating agent %s: %w", id, err))
	default:
		h.log.InfoContext(c.Request().Context(), "console: agent annotated", "agent_id", id, "by", h.callerName(c))
		if !isFragmentRequest(c.Request()) {
			return c.Redirect(http.StatusSeeOther, agentURL(id)+"#annotations")
		}
	}
	a, err := h.loadAgent(c)
	if err != nil {
		return h.agentError(c, err)
	}
	status := http.StatusOK
	if f := a.Annotations.Form; f != nil {
		if refused != "" {
			// The form shows what was sent, so it can be corrected.
			f.OwnerTeam, f.Contact, f.Classification = in.OwnerTeam, in.Contact, in.Classification
			f.LabelsText, f.Notes, f.Error, f.Open = form.Get("labels"), in.Notes, refused, true
			status = http.StatusBadRequest
		} else {
			f.Saved = true
		}
	}
	return h.render(c, status, page{title: a.Name, body: templates.AgentPage(a), fragment: templates.AnnotationsSection(a.Annotations)})
}

// annotationFieldNames name the annotation fields in the form's words.
var annotationFieldNames = map[string]string{
	"owner_team": "Owner team", "contact": "Contact", "classification": "Classification",
	"labels": "Labels", "notes": "Notes",
}

// errLabelLine marks a labels line that is not key=value.
var errLabelLine = errors.New("labels")

// parseLabelLines reads the labels field: one key=value per line, blank
// lines ignored. Keys and values are checked by the catalog.
func parseLabelLines(text string) (map[string]string, error) {
	labels := map[string]string{}
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		if !ok {
			return nil, fmt.Errorf("%w: line %d: write each label as key=value", errLabelLine, i+1)
		}
		if _, dup := labels[k]; dup {
			return nil, fmt.Errorf("%w: line %d: the key %q is given twice", errLabelLine, i+1, k)
		}
		labels[k] = strings.TrimSpace(v)
	}
	return labels, nil
}
