package crawler

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
)

func TestInspect(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case LegacyCardPath:
			w.Header().Set("Cache-Control", "max-age=7200")
			w.Header().Set("ETag", `"x"`)
			w.Write([]byte(strings.Replace(legacyCard, `"name":"Old"`, `"name":"Old\u001b[31m"`, 1)))
		case "/html":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<html>"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	f := newTestFetcher(0)

	t.Run("legacy card", func(t *testing.T) {
		r := Inspect(t.Context(), f, srv.URL, card.DefaultLimits(), Policy{})
		want := []string{srv.URL + WellKnownCardPath, srv.URL + LegacyCardPath}
		if !r.OK || r.Failure != nil || !slices.Equal(r.Tried, want) || !r.LegacyPath || r.Status != 200 ||
			r.URL != srv.URL+LegacyCardPath || r.Headers.ETag != `"x"` || r.Health != catalog.HealthUp ||
			time.Duration(r.NextCheckIn) != 2*time.Hour {
			t.Fatalf("report %+v", r)
		}
		if c := r.Card; c == nil || c.Shape != card.ShapeV02 || c.Skills != 1 || len(c.Interfaces) != 1 || len(c.ProtocolVersions) == 0 {
			t.Fatalf("card %+v", r.Card)
		}
		var buf bytes.Buffer
		if err := r.WriteText(&buf); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		for _, s := range []string{"legacy v0.2 path", "next check in 2h0m0s", `\x1b[31m`, "skills", "max-age=7200"} {
			if !strings.Contains(out, s) {
				t.Errorf("text lacks %q:\n%s", s, out)
			}
		}
		if strings.Contains(out, "\x1b") {
			t.Errorf("an escape sequence from the card reached the text:\n%q", out)
		}
		js, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(js, []byte(`"next_check_in_seconds":7200`)) || !bytes.Contains(js, []byte(`"tried":[`)) {
			t.Errorf("JSON %s", js)
		}
	})
	t.Run("failure", func(t *testing.T) {
		r := Inspect(t.Context(), f, srv.URL+"/html", card.DefaultLimits(), Policy{})
		if r.OK || r.Failure == nil || r.Failure.Class != ClassNotJSON || r.Card != nil || len(r.Tried) != 1 ||
			r.Health != catalog.HealthStale || r.Status != 200 {
			t.Fatalf("report %+v", r)
		}
		var buf bytes.Buffer
		r.WriteText(&buf)
		if !strings.Contains(buf.String(), "FAILED: not_json") {
			t.Errorf("text:\n%s", buf.String())
		}
	})
	t.Run("invalid input", func(t *testing.T) {
		r := Inspect(t.Context(), f, "ftp://x", card.DefaultLimits(), Policy{})
		if r.OK || r.Failure == nil || r.Failure.Class != ClassInvalidURL || len(r.Tried) != 0 {
			t.Fatalf("report %+v", r)
		}
	})
}
