package api

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

// TestBadTextAgainstStore: whatever text a client sends — none, 10,000
// characters, control characters, bytes that are not UTF-8, a question
// in a script written without spaces — search, explanations and
// completions answer it clearly over a real catalog: results or a 400
// naming q, never a 500.
func TestBadTextAgainstStore(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, store *catalog.Store) {
		ctx := context.Background()
		for i, raw := range []string{
			`{"name": "Thai Translator", "description": "แปลภาษาไทยเป็นภาษาอังกฤษ", "skills": [{"id": "th", "name": "แปลภาษา", "description": "แปลข้อความ", "tags": ["thai"]}]}`,
			`{"name": "Kanji Tutor", "description": "漢字を勉強するためのエージェント", "skills": [{"id": "kanji", "name": "漢字の練習", "description": "毎日の漢字", "tags": ["japanese"]}]}`,
			`{"name": "Invoice Reader", "description": "Reads invoices.", "skills": [{"id": "inv", "name": "Invoices", "description": "Totals.", "tags": ["invoices"]}]}`,
		} {
			full := strings.Replace(raw, `{"name"`, `{"url": "https://a.example/a2a", "version": "1", "protocolVersion": "0.3.0",
				"capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "name"`, 1)
			c, err := card.Parse([]byte(full), card.DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := store.Upsert(ctx, testActor, catalog.UpsertInput{CardURL: "https://a" + string(rune('0'+i)) + ".example/card.json",
				Card: c, Source: catalog.SourceURL, ReceivedAt: t0}); err != nil {
				t.Fatal(err)
			}
		}
		env := testEnv{e: echo.New()}
		New(Options{Catalog: store}).Mount(env.e)
		for _, tc := range []struct {
			name, q string
			// wantStatus is 200 or 400; first is the first hit's name
			// when there must be one.
			wantStatus int
			first      string
		}{
			{"empty", "", http.StatusOK, ""},
			{"spaces only", "   \t ", http.StatusOK, ""},
			{"10,000 characters", strings.Repeat("invoice ", 1250), http.StatusBadRequest, ""},
			{"500 characters of words", strings.Repeat("invoices ", 60)[:catalog.MaxQueryTextLen], http.StatusOK, "Invoice Reader"},
			{"control characters", "invoices\x00\x07\x1b[31m\r\n\u202e\u200b", http.StatusOK, "Invoice Reader"},
			{"only control characters", "\x00\x01\x02\x7f", http.StatusOK, ""},
			{"not UTF-8", "invoices \xff\xfe", http.StatusBadRequest, ""},
			{"Thai, no spaces", "แปลภาษาไทย", http.StatusOK, "Thai Translator"},
			{"Japanese, no spaces", "漢字を勉強したい", http.StatusOK, "Kanji Tutor"},
			{"one character of a script without spaces", "漢", http.StatusOK, ""},
			{"punctuation only", "?!… — «»", http.StatusOK, ""},
		} {
			for _, path := range []string{"/api/v1/agents?explain=true&q=", "/api/v1/completions?q="} {
				rec := env.do(t, http.MethodGet, path+url.QueryEscape(tc.q), "", nil)
				if rec.Code != tc.wantStatus {
					t.Errorf("%s: GET %s… = %d %s, want %d", tc.name, path, rec.Code, rec.Body, tc.wantStatus)
					continue
				}
				if rec.Code == http.StatusBadRequest {
					if e := decodeError(t, rec); e.Parameter != "q" || e.Message == "" {
						t.Errorf("%s: GET %s… error %+v, want one naming q", tc.name, path, e)
					}
					continue
				}
				if tc.first != "" && strings.HasPrefix(path, "/api/v1/agents") {
					res := decodeJSON[SearchResponse](t, rec)
					if len(res.Items) == 0 || res.Items[0].Name != tc.first {
						t.Errorf("%s: first hit %+v, want %s", tc.name, res.Items, tc.first)
					}
				}
			}
		}
	})
}
