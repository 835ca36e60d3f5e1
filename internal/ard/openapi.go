package ard

import (
	_ "embed"
	"net/http"

	"github.com/labstack/echo/v4"
)

// openAPI describes the ARD routes; it is a document of its own, beside
// the JSON API's (internal/api/openapi.json), as the ARD door is a door of
// its own.
//
//go:embed openapi.json
var openAPI []byte

func serveOpenAPI(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "public, max-age=3600")
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, openAPI)
}
