package api

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"os"
	"time"

	"github.com/labstack/echo/v4"
)

// maxRequestBody bounds every request body the API accepts: the largest
// is POST /agents's one URL.
const maxRequestBody = maxRegisterBody

// defaultBodyTimeout bounds how long a request body may take to arrive
// once the headers are in. A client that declares a body and never sends
// it would otherwise hold the request until the server's ReadTimeout.
const defaultBodyTimeout = 10 * time.Second

// guardBody answers a declared body over maxRequestBody with 413 before
// reading any of it, so `Expect: 100-continue` gets 413 instead of
// 100 Continue (net/http sends 100 only when the handler reads the body,
// RFC 9110 §10.1.1), and gives the body a read deadline of its own.
func (a *API) guardBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		limit := int64(maxRequestBody)
		if a.runs != nil && req.Method == http.MethodPost && isRunRoute(c.Path()) {
			limit = a.maxRunBody()
		}
		if req.ContentLength > limit {
			// The connection is closed after the answer: the unread body
			// would otherwise have to be drained first.
			req.Close = true
			c.Response().Header().Set(echo.HeaderConnection, "close")
			return newError(http.StatusRequestEntityTooLarge, CodePayloadTooLarge,
				"request body of %d bytes exceeds %d bytes", req.ContentLength, limit)
		}
		if req.ContentLength != 0 && req.Body != nil && req.Body != http.NoBody {
			// Errors only when the writer cannot set deadlines (tests'
			// recorders); the server's ReadTimeout then still holds.
			_ = http.NewResponseController(c.Response()).SetReadDeadline(time.Now().Add(a.bodyTimeout))
		}
		return next(c)
	}
}

// bodyReadFailed tells a body that stopped arriving (deadline, client gone)
// from a malformed one; its answer names neither socket address.
func bodyReadFailed(err error) *apiError {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return newError(http.StatusRequestTimeout, CodeTimeout, "the request body did not arrive in time")
	}
	return nil
}

// decodeJSONBody reads one JSON object of at most limit bytes into v,
// strictly (unknown fields refused); shape describes the expected body in
// the error.
func decodeJSONBody(c echo.Context, v any, limit int64, shape string) error {
	req := c.Request()
	mt, _, err := mime.ParseMediaType(req.Header.Get(echo.HeaderContentType))
	if err != nil || mt != echo.MIMEApplicationJSON {
		return newError(http.StatusUnsupportedMediaType, CodeUnsupportedMediaType, "Content-Type must be application/json")
	}
	dec := json.NewDecoder(http.MaxBytesReader(c.Response(), req.Body, limit))
	dec.DisallowUnknownFields()
	err = dec.Decode(v)
	if err == nil {
		if _, terr := dec.Token(); terr != io.EOF {
			err = errors.New("unexpected data after the JSON object")
			if terr != nil {
				err = terr
			}
		}
	}
	var tooLarge *http.MaxBytesError
	if e := bodyReadFailed(err); e != nil {
		return e
	}
	switch {
	case errors.As(err, &tooLarge):
		return newError(http.StatusRequestEntityTooLarge, CodePayloadTooLarge, "request body exceeds %d bytes", limit)
	case err != nil:
		return newError(http.StatusBadRequest, CodeInvalidBody, "body must be one JSON object %s%s", shape, jsonProblem(err))
	}
	return nil
}
