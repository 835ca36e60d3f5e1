package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/web/view"
	"github.com/a2aregistry/registry/web/templates"
)

// AuditLog reads the audit log; *catalog.Store implements it.
type AuditLog interface {
	// AuditLog returns limit entries older than cursor ("" for the
	// newest), newest first; catalog.ErrInvalidQuery for a bad cursor.
	AuditLog(ctx context.Context, cursor string, limit int) (catalog.AuditPage, error)
	// AgentAudit returns the newest limit entries about one agent.
	AgentAudit(ctx context.Context, agentID string, limit int) ([]catalog.AuditEntry, error)
}

// agentAuditSize is the entries an agent page shows.
const agentAuditSize = 20

// auditPageSize is the entries of one console page.
const auditPageSize = 50

// mountAudit adds the audit log page; who changed what is the admin's to
// read.
func (h *Console) mountAudit(e *echo.Echo) {
	if h.opts.Audit == nil {
		return
	}
	e.GET("/audit", h.audit, h.guarded(auth.Admin)...)
}

func (h *Console) audit(c echo.Context) error {
	ctx := c.Request().Context()
	cursor := c.QueryParam("cursor")
	p, err := h.opts.Audit.AuditLog(ctx, cursor, auditPageSize)
	if errors.Is(err, catalog.ErrInvalidQuery) {
		return h.errorPage(c, http.StatusBadRequest, "Bad page link", "This link to an older page of the audit log is not valid. Start again from the newest entries.")
	}
	if err != nil {
		h.log.ErrorContext(ctx, "console audit log failed", "err", err)
		return h.errorPage(c, http.StatusInternalServerError, "Something went wrong", "The registry could not read its audit log. The failure is in its log.")
	}
	var v view.Audit
	for _, e := range p.Entries {
		v.Entries = append(v.Entries, auditEntryView(e))
	}
	if p.Next != "" {
		v.Older = "/audit?" + url.Values{"cursor": {p.Next}}.Encode()
	}
	return h.render(c, http.StatusOK, page{title: "Audit log", body: templates.AuditPage(v)})
}

func auditEntryView(e catalog.AuditEntry) view.AuditEntry {
	ve := view.AuditEntry{At: e.At, Subject: e.Subject, Role: e.Role, System: e.ActorKind == catalog.ActorSystem,
		Action: e.Action, TargetKind: e.TargetKind, TargetID: e.TargetID, Detail: string(e.Detail),
		RequestID: e.RequestID, ClientRequestID: e.ClientRequestID, ClientAddr: e.ClientAddr}
	switch {
	case e.DisplayName != "":
		ve.Who = e.DisplayName
	case e.Email != "":
		ve.Who = e.Email
	default:
		ve.Who = e.Subject
	}
	// A removed agent keeps its page (for admins, who read this log).
	if e.TargetKind == catalog.TargetAgent {
		ve.TargetURL = agentURL(e.TargetID)
	}
	return ve
}
