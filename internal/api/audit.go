package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/catalog"
)

// AuditLog reads the audit log; *catalog.Store implements it.
type AuditLog interface {
	// AuditLog returns limit entries older than cursor ("" for the
	// newest), newest first; catalog.ErrInvalidQuery for a bad cursor.
	AuditLog(ctx context.Context, cursor string, limit int) (catalog.AuditPage, error)
}

// Audit log page bounds; the catalog caps a page at 500.
const (
	defaultAuditLimit = 100
	maxAuditLimit     = 500
	maxAuditCursor    = 19
)

// AuditEntry is one audited write in GET /audit.
type AuditEntry struct {
	ID int64     `json:"id"`
	At time.Time `json:"at"`
	// ActorKind is "user" for a signed-in person, "system" for the
	// registry acting on a request's behalf (development mode).
	ActorKind string `json:"actor_kind"`
	Subject   string `json:"subject"`
	Name      string `json:"name,omitempty"`
	Email     string `json:"email,omitempty"`
	Role      string `json:"role,omitempty"`
	Action    string `json:"action"`
	// TargetKind is "agent" or "key"; TargetID its id.
	TargetKind string          `json:"target_kind"`
	TargetID   string          `json:"target_id"`
	Detail     json.RawMessage `json:"detail"`
	// RequestID is the registry's own id of the request;
	// ClientRequestID the X-Request-Id the client sent, if any.
	RequestID       string `json:"request_id,omitempty"`
	ClientRequestID string `json:"client_request_id,omitempty"`
	ClientAddr      string `json:"client_addr,omitempty"`
}

// AuditList is a page of the audit log, newest first.
type AuditList struct {
	Items []AuditEntry `json:"items"`
	// NextCursor fetches the next (older) page; absent on the last.
	NextCursor string `json:"next_cursor,omitempty"`
}

func newAuditEntry(e catalog.AuditEntry) AuditEntry {
	detail := e.Detail
	if len(detail) == 0 {
		detail = json.RawMessage("{}")
	}
	return AuditEntry{ID: e.ID, At: e.At, ActorKind: string(e.ActorKind), Subject: e.Subject, Name: e.DisplayName,
		Email: e.Email, Role: e.Role, Action: e.Action, TargetKind: e.TargetKind, TargetID: e.TargetID,
		Detail: detail, RequestID: e.RequestID, ClientRequestID: e.ClientRequestID, ClientAddr: e.ClientAddr}
}

func (a *API) listAudit(c echo.Context) error {
	cursor, limit, err := parseAudit(c.Request().URL.RawQuery)
	if err != nil {
		return err
	}
	page, err := a.audit.AuditLog(c.Request().Context(), cursor, limit)
	if errors.Is(err, catalog.ErrInvalidQuery) {
		return invalidParameter(paramCursor, "cursor must be the next_cursor of a previous answer")
	}
	if err != nil {
		return fmt.Errorf("reading audit log: %w", err)
	}
	l := AuditList{Items: make([]AuditEntry, len(page.Entries)), NextCursor: page.Next}
	for i, e := range page.Entries {
		l.Items[i] = newAuditEntry(e)
	}
	return c.JSON(http.StatusOK, l)
}

// parseAudit is strict like parseChanges.
func parseAudit(rawQuery string) (cursor string, limit int, err error) {
	values, err := url.ParseQuery(rawQuery)
	if err != nil {
		return "", 0, newError(http.StatusBadRequest, CodeInvalidParameter, "malformed query string")
	}
	for name, vals := range values {
		switch name {
		case paramCursor, paramLimit:
			if len(vals) > 1 {
				return "", 0, invalidParameter(name, "parameter %s given %d times; give it once", name, len(vals))
			}
		default:
			return "", 0, invalidParameter(name, "unknown parameter %q", name)
		}
	}
	cursor = values.Get(paramCursor)
	if cursor != "" && (len(cursor) > maxAuditCursor || !isDigits(cursor)) {
		return "", 0, invalidParameter(paramCursor, "cursor must be the next_cursor of a previous answer")
	}
	limit = defaultAuditLimit
	if vals, ok := values[paramLimit]; ok {
		s := vals[0]
		n, perr := strconv.Atoi(s)
		if !isDigits(s) || perr != nil || n < 1 || n > maxAuditLimit {
			return "", 0, invalidParameter(paramLimit, "limit must be an integer from 1 to %d", maxAuditLimit)
		}
		limit = n
	}
	return cursor, limit, nil
}
