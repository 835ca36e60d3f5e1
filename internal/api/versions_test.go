package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

// TestVersionsNewestFirst lists an agent's versions as the real catalog
// stores them, on each database: newest first, each with the digest and
// arrival of its own bytes, and each readable back verbatim.
func TestVersionsNewestFirst(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, store *catalog.Store) {
		ctx := context.Background()
		t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		var raws [][]byte
		var id string
		for i, version := range []string{"1.0.0", "1.1.0", "2.0.0"} {
			raw := []byte(fmt.Sprintf(`{"name":"Echo","description":"d","url":"https://echo.example/a2a","version":%q,
				"protocolVersion":"0.3.0","capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
				"skills":[{"id":"s","name":"s","description":"d","tags":["t"]}]}`, version))
			c, err := card.Parse(raw, card.DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			res, err := store.Upsert(ctx, catalog.System("test"), catalog.UpsertInput{CardURL: "https://echo.example/.well-known/agent-card.json",
				Card: c, Source: catalog.SourceURL, ReceivedAt: t0.Add(time.Duration(i) * time.Hour)})
			if err != nil {
				t.Fatal(err)
			}
			id, raws = res.Agent.ID, append(raws, raw)
		}
		env := testEnv{e: echo.New()}
		New(Options{Catalog: store}).Mount(env.e)

		rec := env.do(t, http.MethodGet, "/api/v1/agents/"+id+"/versions", "", nil)
		if rec.Code != http.StatusOK {
			t.Fatalf("GET versions: %d %s", rec.Code, rec.Body)
		}
		l := decodeJSON[VersionList](t, rec)
		if len(l.Items) != len(raws) {
			t.Fatalf("%d versions listed, want %d: %+v", len(l.Items), len(raws), l.Items)
		}
		for i, v := range l.Items {
			n := len(raws) - i
			sum := sha256.Sum256(raws[n-1])
			if v.Number != n || v.SHA256 != hex.EncodeToString(sum[:]) || !v.ReceivedAt.Equal(t0.Add(time.Duration(n-1)*time.Hour)) {
				t.Errorf("item %d = %+v, want version %d received at %s", i, v, n, t0.Add(time.Duration(n-1)*time.Hour))
			}
			got := env.do(t, http.MethodGet, fmt.Sprintf("/api/v1/agents/%s/versions/%d", id, v.Number), "", nil)
			if got.Code != http.StatusOK || got.Body.String() != string(raws[n-1]) {
				t.Errorf("version %d read back: %d, not its bytes", n, got.Code)
			}
		}
	})
}
