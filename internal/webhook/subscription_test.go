package webhook_test

import (
	"strings"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/webhook"
)

// TestRequestCheck: each rule names its field, and every problem of a
// request is said at once, in field order.
func TestRequestCheck(t *testing.T) {
	ok := webhook.Request{URL: "https://hooks.example.com/in", EventTypes: []string{webhook.EventRegistered}, Filter: "q=translate"}
	tests := []struct {
		name   string
		edit   func(*webhook.Request)
		fields string
	}{
		{name: "valid", edit: func(*webhook.Request) {}},
		{name: "no filter", edit: func(r *webhook.Request) { r.Filter = "" }},
		{name: "relative URL", edit: func(r *webhook.Request) { r.URL = "/in" }, fields: "url"},
		{name: "ftp URL", edit: func(r *webhook.Request) { r.URL = "ftp://hooks.example.com/" }, fields: "url"},
		{name: "credentials", edit: func(r *webhook.Request) { r.URL = "https://u:p@hooks.example.com/" }, fields: "url"},
		{name: "long URL", edit: func(r *webhook.Request) { r.URL = "https://h.example/" + strings.Repeat("a", webhook.MaxURLLen) }, fields: "url"},
		{name: "no event type", edit: func(r *webhook.Request) { r.EventTypes = nil }, fields: "event_types"},
		{name: "unknown event type", edit: func(r *webhook.Request) { r.EventTypes = []string{"agent.exploded"} }, fields: "event_types"},
		{name: "bad filter", edit: func(r *webhook.Request) { r.Filter = "nope=1" }, fields: "filter"},
		{name: "long filter", edit: func(r *webhook.Request) { r.Filter = "q=" + strings.Repeat("a", webhook.MaxFilterLen) }, fields: "filter"},
		{name: "all wrong", edit: func(r *webhook.Request) { *r = webhook.Request{URL: "x", Filter: "nope=1"} }, fields: "url event_types filter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ok
			tt.edit(&r)
			var fields []string
			for _, p := range r.Check() {
				fields = append(fields, p.Field)
				if p.Message == "" {
					t.Errorf("%s: no message", p.Field)
				}
			}
			if got := strings.Join(fields, " "); got != tt.fields {
				t.Errorf("problems in %q, want %q", got, tt.fields)
			}
		})
	}
}

func TestNewSubscription(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6789, time.FixedZone("x", 3600))
	w, secret, problems := webhook.NewSubscription(webhook.Request{URL: "https://hooks.example.com/in",
		EventTypes: []string{webhook.EventHealth}}, "ada", at)
	if len(problems) != 0 || !strings.HasPrefix(w.ID, "wh_") || !strings.HasPrefix(secret, "whsec_") || w.CreatedBy != "ada" ||
		!w.CreatedAt.Equal(at.Truncate(time.Microsecond)) || w.CreatedAt.Location() != time.UTC {
		t.Errorf("NewSubscription = %+v, %q, %v", w, secret, problems)
	}
	if _, secret, problems := webhook.NewSubscription(webhook.Request{URL: "x"}, "ada", at); len(problems) == 0 || secret != "" {
		t.Errorf("a bad request got secret %q, problems %v", secret, problems)
	}
}
