package api

import (
	_ "embed"
	"net/http"

	"github.com/labstack/echo/v4"
)

// openAPIDoc is written by hand; openapi_test.go validates it and checks
// every response of the handler tests against it.
//
//go:embed openapi.json
var openAPIDoc []byte

func serveOpenAPI(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "no-cache")
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, openAPIDoc)
}
