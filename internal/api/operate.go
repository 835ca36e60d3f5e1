package api

import (
	"net/http"

	"github.com/a2aregistry/registry/internal/auth"
)

// operatorRoutes are the routes of the operator's actions; each exists
// only when the API was given what serves it.
func (a *API) operatorRoutes() []route {
	var rs []route
	if a.audit != nil {
		rs = append(rs, route{method: http.MethodGet, path: "/audit", role: auth.Admin, handler: a.listAudit})
	}
	return rs
}
