package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/a2aregistry/registry/internal/catalog"
)

// fakeAuditLog pages entries (newest first) as the catalog does: the
// cursor is the id of the last entry served.
type fakeAuditLog struct {
	entries []catalog.AuditEntry
}

func (f *fakeAuditLog) AuditLog(_ context.Context, cursor string, limit int) (catalog.AuditPage, error) {
	var before int64 = 1 << 62
	if cursor != "" {
		n, err := strconv.ParseInt(cursor, 10, 64)
		if err != nil || n <= 0 {
			return catalog.AuditPage{}, catalog.ErrInvalidQuery
		}
		before = n
	}
	var p catalog.AuditPage
	for _, e := range f.entries {
		if e.ID >= before {
			continue
		}
		if len(p.Entries) == limit {
			p.Next = strconv.FormatInt(p.Entries[limit-1].ID, 10)
			break
		}
		p.Entries = append(p.Entries, e)
	}
	return p, nil
}

func TestListAudit(t *testing.T) {
	log := &fakeAuditLog{}
	for id := int64(3); id >= 1; id-- {
		log.entries = append(log.entries, catalog.AuditEntry{ID: id, At: t0, ActorKind: catalog.ActorUser, Subject: "sub-ann",
			DisplayName: "Ann", Email: "ann@example.com", Role: "admin", Action: catalog.ActionPause, TargetKind: catalog.TargetAgent,
			TargetID: "a1", Detail: json.RawMessage(`{}`), RequestID: "r" + strconv.FormatInt(id, 10), ClientAddr: "192.0.2.1"})
	}
	env := newTestEnv(t, func(o *Options) { o.Audit = log })
	tests := []struct {
		target     string
		wantStatus int
		wantIDs    []int64
		wantNext   string
	}{
		{"/api/v1/audit", http.StatusOK, []int64{3, 2, 1}, ""},
		{"/api/v1/audit?limit=2", http.StatusOK, []int64{3, 2}, "2"},
		{"/api/v1/audit?limit=2&cursor=2", http.StatusOK, []int64{1}, ""},
		{"/api/v1/audit?cursor=x", http.StatusBadRequest, nil, ""},
		{"/api/v1/audit?limit=501", http.StatusBadRequest, nil, ""},
		{"/api/v1/audit?since=1", http.StatusBadRequest, nil, ""},
		{"/api/v1/audit?limit=1&limit=2", http.StatusBadRequest, nil, ""},
	}
	for _, tt := range tests {
		rec := env.do(t, http.MethodGet, tt.target, "", nil)
		if rec.Code != tt.wantStatus {
			t.Errorf("GET %s: status %d, want %d: %s", tt.target, rec.Code, tt.wantStatus, rec.Body)
			continue
		}
		if rec.Code != http.StatusOK {
			continue
		}
		var l AuditList
		if err := json.Unmarshal(rec.Body.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, e := range l.Items {
			ids = append(ids, e.ID)
		}
		if len(ids) != len(tt.wantIDs) || l.NextCursor != tt.wantNext {
			t.Errorf("GET %s: ids %v next %q, want %v next %q", tt.target, ids, l.NextCursor, tt.wantIDs, tt.wantNext)
			continue
		}
		for i := range ids {
			if ids[i] != tt.wantIDs[i] {
				t.Errorf("GET %s: ids %v, want %v", tt.target, ids, tt.wantIDs)
				break
			}
		}
		if e := l.Items[0]; e.Subject != "sub-ann" || e.Email != "ann@example.com" || e.Action != catalog.ActionPause || e.TargetID != "a1" || e.ClientAddr != "192.0.2.1" {
			t.Errorf("GET %s: first entry %+v", tt.target, e)
		}
	}
}

// A write through the API names the request it came from, so the audit
// log can find it in the server's log.
func TestWritesCarryTheRequest(t *testing.T) {
	env := newTestEnv(t, nil)
	env.e.Pre(middleware.RequestID())
	env.reg.res = catalog.UpsertResult{Agent: catalog.Agent{ID: "a1"}}
	req := map[string]string{"Content-Type": "application/json", echo.HeaderXRequestID: "req-42"}
	env.do(t, http.MethodPost, "/api/v1/agents", `{"url":"https://agent.example"}`, req)
	got := env.reg.actor
	if got.Request == nil || got.Request.ID != "req-42" || got.Request.ClientAddr != "192.0.2.1" {
		t.Fatalf("registrar got actor %+v (request %+v), want one for request req-42 from 192.0.2.1", got, got.Request)
	}
}
