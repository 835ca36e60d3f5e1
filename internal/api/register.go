package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/crawler"
	"github.com/a2aregistry/registry/internal/safehttp"
)

// maxRegisterBody bounds POST /agents: the body holds one URL.
const maxRegisterBody = 64 << 10

func (a *API) registerAgent(c echo.Context) error {
	in, err := decodeRegisterRequest(c)
	if err != nil {
		return err
	}
	res, err := a.registrar.Register(c.Request().Context(), in.URL)
	if err != nil {
		return registerFailure(in.URL, err)
	}
	a.log.Info("api: agent registered", "agent_id", res.Agent.ID, "card_url", res.Agent.CardURL,
		"created", res.Created, "new_version", res.NewVersion)
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
	req := c.Request()
	mt, _, err := mime.ParseMediaType(req.Header.Get(echo.HeaderContentType))
	if err != nil || mt != echo.MIMEApplicationJSON {
		return in, newError(http.StatusUnsupportedMediaType, CodeUnsupportedMediaType, "Content-Type must be application/json")
	}
	dec := json.NewDecoder(http.MaxBytesReader(c.Response(), req.Body, maxRegisterBody))
	dec.DisallowUnknownFields()
	err = dec.Decode(&in)
	if err == nil {
		// Exactly one JSON value: trailing bytes mean a confused client.
		if _, terr := dec.Token(); terr != io.EOF {
			err = errors.New("unexpected data after the JSON object")
			if terr != nil {
				err = terr
			}
		}
	}
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return in, newError(http.StatusRequestEntityTooLarge, CodePayloadTooLarge, "request body exceeds %d bytes", maxRegisterBody)
	case err != nil:
		return in, newError(http.StatusBadRequest, CodeInvalidBody, `body must be one JSON object {"url": "..."}: %v`, err)
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

// registerFailure turns a registrar error into the 422 answer that tells the
// user what is wrong with the agent, or passes it on as our own fault.
func registerFailure(input string, err error) error {
	var (
		perr    *card.ParseError
		fe      *crawler.FetchError
		blocked *safehttp.BlockedError
	)
	isFetch := errors.As(err, &fe)
	switch {
	case errors.As(err, &perr):
		e := newError(http.StatusUnprocessableEntity, CodeInvalidCard, "the card is not a readable agent card: %s", perr.Message)
		e.body.ParseCode = perr.Code
		e.body.Path = perr.Path
		return e
	case errors.Is(err, safehttp.ErrBlockedAddress):
		// The resolved address stays out of the message: it would let
		// any editor map internal DNS through the registry.
		msg := "refusing to fetch from a non-public address"
		if errors.As(err, &blocked) {
			msg = fmt.Sprintf("refusing to fetch from %s: it resolves to a %s address", blocked.Host, blocked.Reason)
		}
		e := newError(http.StatusUnprocessableEntity, CodeBlockedAddress,
			"%s; an operator can allow the range with --allow-networks (REGISTRY_ALLOW_NETWORKS)", msg)
		e.body.Class = crawler.ClassBlockedAddress
		e.body.URL = input
		if isFetch && fe.URL != "" {
			e.body.URL = fe.URL
		}
		return e
	case errors.Is(err, crawler.ErrInvalidURL), errors.Is(err, safehttp.ErrUnsupportedScheme),
		isFetch && fe.Class == crawler.ClassInvalidURL:
		msg := err.Error()
		if isFetch && fe.Err != nil {
			msg = fe.Err.Error()
		}
		e := newError(http.StatusUnprocessableEntity, CodeInvalidURL, "%s", msg)
		e.body.Parameter = "url"
		return e
	case isFetch:
		e := newError(http.StatusUnprocessableEntity, CodeFetchFailed, "fetching %s: %s: %v", fe.URL, fe.Class, fe.Err)
		e.body.Class = fe.Class
		e.body.URL = fe.URL
		e.body.HTTPStatus = fe.Status
		return e
	}
	return fmt.Errorf("registering %q: %w", input, err)
}
