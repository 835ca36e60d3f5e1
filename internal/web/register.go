package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/crawler"
	"github.com/a2aregistry/registry/internal/web/view"
	"github.com/a2aregistry/registry/web/templates"
)

// Registrar fetches, checks and stores the card behind a URL;
// *crawler.Registrar implements it.
type Registrar interface {
	Register(ctx context.Context, actor catalog.Actor, sc catalog.Scope, input string) (catalog.UpsertResult, error)
}

// maxRegisterLines bounds one paste: each line is a fetch, run one after
// another within the request.
const maxRegisterLines = 50

// maxRegisterForm bounds the form body: maxRegisterLines URLs of the
// crawler's longest, and some.
const maxRegisterForm = maxRegisterLines * (crawler.MaxInputURLLength + 2)

func (h *Console) registerForm(c echo.Context) error {
	v := view.Register{CSRFToken: h.csrfToken(c)}
	return h.render(c, http.StatusOK, page{title: "Register agents", body: templates.RegisterPage(v)})
}

// register registers every URL of the form, one per line, and reports each
// on its own: one bad URL does not stop the others.
func (h *Console) register(c echo.Context) error {
	if err := c.Request().ParseForm(); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return h.errorPage(c, http.StatusRequestEntityTooLarge, "Too much at once",
				fmt.Sprintf("Register at most %d URLs at once.", maxRegisterLines))
		}
		return h.errorPage(c, http.StatusBadRequest, "Unreadable form", "The form could not be read; reload the page and try again.")
	}
	text := c.Request().PostForm.Get("urls")
	v := view.Register{Input: text, CSRFToken: h.csrfToken(c)}
	inputs, err := registerInputs(text)
	if err != nil {
		v.Error = err.Error()
		return h.render(c, http.StatusBadRequest, page{title: "Register agents", body: templates.RegisterPage(v), fragment: templates.RegisterResults(v)})
	}
	for _, in := range inputs {
		v.Results = append(v.Results, h.registerOne(c, in))
	}
	return h.render(c, http.StatusOK, page{title: "Register agents", body: templates.RegisterPage(v), fragment: templates.RegisterResults(v)})
}

// registerInputs splits a paste into URLs: one per line, blank lines and
// # comments skipped, duplicates once.
func registerInputs(text string) ([]string, error) {
	var out []string
	seen := make(map[string]bool)
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") || seen[line] {
			continue
		}
		seen[line] = true
		out = append(out, line)
	}
	switch {
	case len(out) == 0:
		return nil, errNoURL
	case len(out) > maxRegisterLines:
		return nil, fmt.Errorf("%d URLs given; register at most %d at once", len(out), maxRegisterLines)
	}
	return out, nil
}

var errNoURL = errors.New("give at least one URL")

func (h *Console) registerOne(c echo.Context, input string) view.RegisterResult {
	r := view.RegisterResult{Input: input}
	if len(input) > crawler.MaxInputURLLength {
		r.Outcome, r.Code = view.RegisterFailed, crawler.KindInvalidURL
		r.Message = fmt.Sprintf("longer than %d bytes", crawler.MaxInputURLLength)
		return r
	}
	ctx := c.Request().Context()
	res, err := h.opts.Registrar.Register(ctx, h.actor(c), h.scope(c), input)
	if errors.Is(err, crawler.ErrAlreadyCatalogued) {
		r.Outcome, r.Code, r.Message = view.RegisterFailed, view.RegisterCatalogued, "this URL is already catalogued"
		return r
	}
	if err != nil {
		r.Outcome = view.RegisterFailed
		p, ok := crawler.ProblemOf(err)
		if !ok {
			h.log.ErrorContext(ctx, "console register failed", "input", input, "err", err,
				"request_id", c.Response().Header().Get(echo.HeaderXRequestID))
			r.Code, r.Message = view.RegisterInternal, "the registry failed; the cause is in its log"
			return r
		}
		r.Code, r.Message = p.Kind(), p.Advice()
		if k := p.Kind(); k == crawler.KindFetchFailed || k == crawler.KindBlockedAddress {
			r.Class = p.Class
		}
		return r
	}
	h.log.InfoContext(ctx, "console: agent registered", "agent_id", res.Agent.ID, "card_url", res.Agent.CardURL,
		"created", res.Created, "new_version", res.NewVersion, "restored", res.Restored)
	r.AgentURL, r.CardURL = agentURL(res.Agent.ID), res.Agent.CardURL
	if res.Agent.Card != nil {
		r.Name = res.Agent.Card.Name
	}
	switch {
	case res.Created:
		r.Outcome = view.RegisterCreated
	case res.Restored:
		r.Outcome = view.RegisterRestored
	case res.NewVersion:
		r.Outcome = view.RegisterUpdated
	default:
		r.Outcome = view.RegisterUnchanged
	}
	return r
}
