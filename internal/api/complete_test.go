package api

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/a2aregistry/registry/internal/catalog"
)

func TestComplete(t *testing.T) {
	sample := []catalog.Completion{{Field: catalog.FieldTag, Value: "invoices", Count: 3}, {Field: catalog.FieldSkill, Value: "Invoice reader", Count: 1}}
	withSample := func(c *fakeCatalog, _ *fakeRegistrar) { c.completions = sample }
	asked := func(typed string, limit int) func(*testing.T, *httptest.ResponseRecorder, *fakeCatalog, *fakeRegistrar) {
		return func(t *testing.T, _ *httptest.ResponseRecorder, c *fakeCatalog, _ *fakeRegistrar) {
			if got := c.lastCompletion; got.typed != typed || got.limit != limit || !got.sc.All {
				t.Errorf("Complete asked %+v, want %q limit %d in the caller's scope", got, typed, limit)
			}
		}
	}
	runCases(t, []apiCase{
		{name: "completions", target: "/api/v1/completions?q=inv", setup: withSample, wantStatus: http.StatusOK,
			check: func(t *testing.T, rec *httptest.ResponseRecorder, c *fakeCatalog, r *fakeRegistrar) {
				asked("inv", 0)(t, rec, c, r)
				got := decodeJSON[CompletionsResponse](t, rec).Completions
				want := []Completion{{"tag", "invoices", 3}, {"skill", "Invoice reader", 1}}
				if !slices.Equal(got, want) {
					t.Errorf("completions = %+v, want %+v", got, want)
				}
			}},
		{name: "none", target: "/api/v1/completions?q=zzz", wantStatus: http.StatusOK,
			check: func(t *testing.T, rec *httptest.ResponseRecorder, _ *fakeCatalog, _ *fakeRegistrar) {
				if !strings.Contains(rec.Body.String(), `"completions":[]`) {
					t.Errorf("body %s, want an empty list", rec.Body)
				}
			}},
		{name: "empty text", target: "/api/v1/completions?q=", wantStatus: http.StatusOK, check: asked("", 0)},
		{name: "limit", target: "/api/v1/completions?q=in&limit=3", wantStatus: http.StatusOK, check: asked("in", 3)},
		{name: "limit too large", target: "/api/v1/completions?q=in&limit=51", wantStatus: http.StatusBadRequest, wantCode: CodeInvalidParameter},
		{name: "limit not a number", target: "/api/v1/completions?q=in&limit=x", wantStatus: http.StatusBadRequest, wantCode: CodeInvalidParameter},
		{name: "unknown parameter", target: "/api/v1/completions?q=in&tag=x", wantStatus: http.StatusBadRequest, wantCode: CodeInvalidParameter},
		{name: "repeated q", target: "/api/v1/completions?q=in&q=out", wantStatus: http.StatusBadRequest, wantCode: CodeInvalidParameter},
		{name: "malformed query string", target: "/api/v1/completions?q=%zz", wantStatus: http.StatusBadRequest, wantCode: CodeInvalidQuery},
		{name: "catalog refuses the text", target: "/api/v1/completions?q=in",
			setup: func(c *fakeCatalog, _ *fakeRegistrar) {
				c.err = fmt.Errorf("%w: q is too long", catalog.ErrInvalidQuery)
			},
			wantStatus: http.StatusBadRequest, wantCode: CodeInvalidQuery},
		{name: "index not ready", target: "/api/v1/completions?q=in",
			setup:      func(c *fakeCatalog, _ *fakeRegistrar) { c.err = catalog.ErrIndexNotReady },
			wantStatus: http.StatusServiceUnavailable, wantCode: CodeUnavailable},
	}, nil)
}
