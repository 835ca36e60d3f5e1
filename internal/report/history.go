package report

import (
	"context"
	"fmt"
	"time"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
)

// HistoryStore is where the daily history of the security report is
// kept; *catalog.Store implements it.
type HistoryStore interface {
	HasSecurityDay(ctx context.Context, day, scope string) (bool, error)
	RecordSecurityDay(ctx context.Context, d catalog.SecurityDay) (bool, error)
	SecurityHistory(ctx context.Context, scope, from string) ([]catalog.SecurityDay, error)
}

// HistoryDays is how far back the history a report shows goes.
const HistoryDays = 90

// historyScopes are the scopes a day is recorded in.
var historyScopes = []string{catalog.HistoryScopeAll, catalog.HistoryScopePublic}

// Snapshot records today's (now's UTC date) headline numbers in every
// history scope that lacks them, and says how many rows it wrote. Any
// number of replicas may run it at once: the day's key keeps the first
// row written, and the others write nothing.
func Snapshot(ctx context.Context, s Searcher, h HistoryStore, now time.Time) (int, error) {
	day, written := catalog.DayOf(now), 0
	for _, scope := range historyScopes {
		have, err := h.HasSecurityDay(ctx, day, scope)
		if err != nil {
			return written, err
		}
		if have {
			continue
		}
		r, err := SecurityReport(ctx, s, catalog.ScopeOfHistory(scope), now)
		if err != nil {
			return written, err
		}
		ok, err := h.RecordSecurityDay(ctx, dayOf(r, day, scope, now))
		if err != nil {
			return written, err
		}
		if ok {
			written++
		}
	}
	return written, nil
}

// dayOf is the history row of report r.
func dayOf(r Security, day, scope string, now time.Time) catalog.SecurityDay {
	d := catalog.SecurityDay{Day: day, Scope: scope, TakenAt: now.UTC(), Agents: r.Agents,
		Anonymous: r.Anonymous.Count, KeyChanges: r.KeyChanges.Count, PublisherVerified: r.PublisherVerified.Count,
		PlainHTTP: r.PlainHTTP.Count, KeyChanges30d: r.RecentKeyChanges.Count}
	for _, c := range r.Severity {
		switch card.Severity(c.Value) {
		case card.SeverityError:
			d.FindingsError = c.Count
		case card.SeverityWarning:
			d.FindingsWarning = c.Count
		case card.SeverityInfo:
			d.FindingsInfo = c.Count
		}
	}
	for _, c := range r.Signature {
		switch c.Value {
		case catalog.SignatureVerified:
			d.SignatureVerified = c.Count
		case catalog.SignatureInvalid:
			d.SignatureInvalid = c.Count
		case catalog.SignatureUnsigned:
			d.Unsigned = c.Count
		case catalog.SignatureKeyUnavailable:
			d.KeyUnavailable = c.Count
		case catalog.SignatureUnchecked:
			d.Unchecked = c.Count
		}
	}
	return d
}

// History is the report's daily history a caller who sees sc may read
// (catalog.HistoryScopeOf), over the HistoryDays up to now, oldest first.
func History(ctx context.Context, h HistoryStore, sc catalog.Scope, now time.Time) ([]catalog.SecurityDay, error) {
	from := catalog.DayOf(now.AddDate(0, 0, -(HistoryDays - 1)))
	days, err := h.SecurityHistory(ctx, catalog.HistoryScopeOf(sc), from)
	if err != nil {
		return nil, fmt.Errorf("reading the report's history: %w", err)
	}
	return days, nil
}
