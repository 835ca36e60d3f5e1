package auth

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/catalog"
)

// maxClientRequestID caps the X-Request-Id a client sends, as the audit
// log keeps it: enough for a UUID or a trace id, not a payload.
const maxClientRequestID = 128

type clientRequestIDKey struct{}

// RequestIDs gives every request an id of the registry's own, in the
// X-Request-Id response header (where loggers and the audit log read it),
// whatever the client sent: a client-chosen id could collide with another
// request's or forge one operators search for. The client's own
// X-Request-Id, if it sent one, is kept apart (printable ASCII, capped at
// 128 bytes) for RequestOf.
func RequestIDs() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			if client := clientRequestID(req.Header.Get(echo.HeaderXRequestID)); client != "" {
				c.SetRequest(req.WithContext(context.WithValue(req.Context(), clientRequestIDKey{}, client)))
			}
			id := newRequestID()
			c.Request().Header.Set(echo.HeaderXRequestID, id)
			c.Response().Header().Set(echo.HeaderXRequestID, id)
			return next(c)
		}
	}
}

func newRequestID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24)
	return hex.EncodeToString(b)
}

// clientRequestID keeps the printable ASCII of v, at most
// maxClientRequestID bytes of it.
func clientRequestID(v string) string {
	v = strings.Map(func(r rune) rune {
		if r < 0x21 || r > 0x7e {
			return -1
		}
		return r
	}, v)
	if len(v) > maxClientRequestID {
		v = v[:maxClientRequestID]
	}
	return v
}

// RequestOf is what the audit log records of request c besides its
// caller: the registry's request id, the client's own X-Request-Id and the
// client's address. Every door passes it to ActorOf.
func RequestOf(c echo.Context) catalog.Request {
	client, _ := c.Request().Context().Value(clientRequestIDKey{}).(string)
	return catalog.Request{
		ID:         c.Response().Header().Get(echo.HeaderXRequestID),
		ClientID:   client,
		ClientAddr: c.RealIP(),
	}
}
