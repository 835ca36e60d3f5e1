package webhook

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/query"
)

// Bounds of a subscription request.
const (
	MaxURLLen    = 2048
	MaxFilterLen = 1000
)

// Request is a subscription as a caller asks for it (the API's JSON body,
// the console's form).
type Request struct {
	URL        string
	EventTypes []string
	// Filter is a search query string (as GET /api/v1/agents takes): only
	// events of agents it matches are delivered.
	Filter string
}

// FieldError is one problem of a Request: the field it is in ("url",
// "event_types", "filter") and a message saying what the field must be.
type FieldError struct {
	Field, Message string
}

func (e FieldError) Error() string { return e.Message }

// Check returns every problem of r, in the order url, event_types,
// filter; none when r may be subscribed.
func (r Request) Check() []FieldError {
	var out []FieldError
	u, err := url.Parse(r.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || len(r.URL) > MaxURLLen {
		out = append(out, FieldError{"url", fmt.Sprintf("url must be an absolute http(s) URL without credentials, at most %d bytes", MaxURLLen)})
	}
	if err := ValidEventTypes(r.EventTypes); err != nil {
		out = append(out, FieldError{"event_types", "event_types must name one or more of " + strings.Join(EventTypes(), ", ")})
	}
	if len(r.Filter) > MaxFilterLen {
		out = append(out, FieldError{"filter", fmt.Sprintf("filter is at most %d bytes", MaxFilterLen)})
	} else if _, err := query.ParseString(r.Filter); err != nil {
		out = append(out, FieldError{"filter", "filter is not a valid search query: " + err.Error()})
	}
	return out
}

// NewSubscription checks r and returns the subscription to store and its
// new signing secret, or r's problems. by names the caller, at its
// creation time.
func NewSubscription(r Request, by string, at time.Time) (catalog.Webhook, string, []FieldError) {
	if problems := r.Check(); len(problems) > 0 {
		return catalog.Webhook{}, "", problems
	}
	w := catalog.Webhook{ID: NewID(), URL: r.URL, EventTypes: r.EventTypes, Filter: r.Filter,
		CreatedAt: at.UTC().Truncate(time.Microsecond), CreatedBy: by}
	return w, NewSecret(), nil
}
