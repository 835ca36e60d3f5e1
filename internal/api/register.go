package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/crawler"
)

// maxRegisterBody bounds POST /agents: the body holds one URL.
const maxRegisterBody = 64 << 10

func (a *API) registerAgent(c echo.Context) error {
	in, err := decodeRegisterRequest(c)
	if err != nil {
		return err
	}
	res, err := a.registrar.Register(c.Request().Context(), actorOf(c), a.scope(c), in.URL)
	if errors.Is(err, crawler.ErrAlreadyCatalogued) {
		// Neutral: neither the agent's id nor its name.
		return newError(http.StatusConflict, CodeConflict, "this URL is already catalogued")
	}
	if err != nil {
		return registerFailure(in.URL, err)
	}
	a.log.Info("api: agent registered", "agent_id", res.Agent.ID, "card_url", res.Agent.CardURL,
		"created", res.Created, "new_version", res.NewVersion, "restored", res.Restored)
	d, err := a.agentDetail(c, res.Agent.ID)
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderLocation, agentPath(res.Agent.ID))
	status := http.StatusOK
	if res.Created {
		status = http.StatusCreated
	}
	return c.JSON(status, d)
}

func decodeRegisterRequest(c echo.Context) (RegisterRequest, error) {
	var in RegisterRequest
	if err := decodeJSONBody(c, &in, maxRegisterBody, `{"url": "..."}`); err != nil {
		return in, err
	}
	in.URL = strings.TrimSpace(in.URL)
	if in.URL == "" {
		e := newError(http.StatusBadRequest, CodeInvalidBody, "url is required")
		e.body.Parameter = "url"
		return in, e
	}
	// Refused before any fetch, with the crawler's own bound.
	if len(in.URL) > crawler.MaxInputURLLength {
		e := newError(http.StatusUnprocessableEntity, CodeInvalidURL, "url is longer than %d bytes", crawler.MaxInputURLLength)
		e.body.Parameter = "url"
		return in, e
	}
	return in, nil
}

// registerFailure answers a registrar error with 422 when the agent is at
// fault (the crawler's Problem says what is wrong, in words safe to show),
// or passes it on as our own fault.
func registerFailure(input string, err error) error {
	var refused *catalog.RefusedError
	if errors.As(err, &refused) {
		e := newError(http.StatusUnprocessableEntity, CodePolicyRefused, "refused by admission policy rule %q: %s",
			refused.RuleID, refused.Message)
		e.body.Rule, e.body.URL = refused.RuleID, input
		return e
	}
	p, ok := crawler.ProblemOf(err)
	if !ok {
		return fmt.Errorf("registering %q: %w", input, err)
	}
	return problemError(p, input)
}

// jsonProblem says where a request body's JSON went wrong without
// err.Error(), which names Go types (api.RegisterRequest) and, for a body
// that stopped arriving, the client's and our socket addresses.
func jsonProblem(err error) string {
	var (
		syntax *json.SyntaxError
		typ    *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &syntax):
		return fmt.Sprintf(": malformed JSON at byte %d", syntax.Offset)
	case errors.As(err, &typ) && typ.Field != "":
		return fmt.Sprintf(": field %q must be a %s", typ.Field, jsonKind(typ.Type.Kind().String()))
	case errors.As(err, &typ):
		return ": the body must be an object"
	case errors.Is(err, io.EOF):
		return ": the body is empty"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return ": the body ends in the middle of the JSON"
	}
	return ""
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "slice", "array":
		return "array"
	case "struct", "map":
		return "object"
	}
	return "number"
}
