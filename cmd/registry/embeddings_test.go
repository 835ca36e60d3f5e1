package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/config"
	"github.com/a2aregistry/registry/internal/embeddings/embeddingstest"
)

// TestSemanticSearch serves the registry with a fake embeddings API on
// loopback: the example agents get embedded in the background, /readyz
// and /metrics say so, searches are hybrid and explain both ranks; with
// the API down searches answer by words and say so, and the registry
// stays ready.
func TestSemanticSearch(t *testing.T) {
	for _, db := range []struct {
		name string
		dsn  func(testing.TB) string
	}{
		{"sqlite", func(t testing.TB) string { return "sqlite:" + filepath.Join(t.TempDir(), "reg.db") }},
		{"postgres", catalogtest.PostgresDSN},
	} {
		t.Run(db.name, func(t *testing.T) {
			fake := embeddingstest.New(32)
			defer fake.Close()
			base := startServeWith(t, db.dsn(t), func(c *config.Config) {
				c.Storage.ImportExamples = true
				c.Embeddings.URL, c.Embeddings.Model, c.Embeddings.Dimension = fake.BaseURL(), "hash", 32
				c.Embeddings.APIKey = "sk-never-shown"
				// Nothing here waits for a timeout (the API down answers
				// 503 at once); a short one turned a hybrid search lexical
				// on a loaded machine.
				c.Embeddings.QueryTimeout = 10 * time.Second
			})
			type ready struct {
				Status   string `json:"status"`
				Semantic *struct {
					Model     string `json:"model"`
					Embedded  int    `json:"embedded"`
					Agents    int    `json:"agents"`
					Degraded  bool   `json:"degraded"`
					LastError string `json:"last_error"`
				} `json:"semantic"`
			}
			readyz := func() (ready, int) {
				t.Helper()
				resp, err := http.Get(base + "/readyz")
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				var r ready
				if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
					t.Fatal(err)
				}
				return r, resp.StatusCode
			}
			deadline := time.Now().Add(30 * time.Second)
			for {
				r, _ := readyz()
				if r.Semantic != nil && r.Semantic.Agents > 0 && r.Semantic.Embedded == r.Semantic.Agents {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("agents not embedded: %+v", r.Semantic)
				}
				time.Sleep(50 * time.Millisecond)
			}
			if _, auth := fake.Seen(); len(auth) == 0 || auth[0] != "Bearer sk-never-shown" {
				t.Fatalf("the API key was not sent")
			}

			type searchResp struct {
				Items []struct {
					ID          string `json:"id"`
					Name        string `json:"name"`
					Explanation *struct {
						LexicalRank *int `json:"lexical_rank"`
						VectorRank  *int `json:"vector_rank"`
					} `json:"explanation"`
				} `json:"items"`
				Semantic *struct {
					Mode     string `json:"mode"`
					Degraded string `json:"degraded"`
				} `json:"semantic"`
			}
			search := func(q string) searchResp {
				t.Helper()
				resp, err := http.Get(base + "/api/v1/agents?explain=true&q=" + url.QueryEscape(q))
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("search %q: HTTP %d", q, resp.StatusCode)
				}
				var r searchResp
				if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
					t.Fatal(err)
				}
				return r
			}
			r := search("translate documents")
			if r.Semantic == nil || r.Semantic.Mode != "hybrid" || len(r.Items) == 0 {
				t.Fatalf("search = %+v, want hybrid results", r.Semantic)
			}
			if e := r.Items[0].Explanation; e == nil || e.VectorRank == nil || e.LexicalRank == nil {
				t.Fatalf("top hit's explanation lacks its ranks: %+v", e)
			}

			why, err := http.Get(base + "/agents/" + r.Items[0].ID + "/why?q=" + url.QueryEscape("translate documents"))
			if err != nil {
				t.Fatal(err)
			}
			var wb strings.Builder
			_, _ = io.Copy(&wb, why.Body)
			why.Body.Close()
			if !strings.Contains(wb.String(), "Near your search in meaning") {
				t.Fatalf("the console's why does not give the similarity (HTTP %d)", why.StatusCode)
			}

			fake.Down.Store(true)
			r = search("summarise legal contracts")
			if r.Semantic == nil || r.Semantic.Mode != "lexical" || !strings.Contains(r.Semantic.Degraded, "HTTP 503") {
				t.Fatalf("with the API down: %+v", r.Semantic)
			}
			rd, code := readyz()
			if code != http.StatusOK || rd.Semantic == nil || !rd.Semantic.Degraded || rd.Semantic.LastError == "" {
				t.Fatalf("readyz with the API down: %d %+v", code, rd.Semantic)
			}
			resp, err := http.Get(base + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			_, _ = io.Copy(&b, resp.Body)
			resp.Body.Close()
			for _, want := range []string{"registry_embeddings_enabled 1", `registry_embeddings_requests_total{kind="query",result="error"} 1`} {
				if !strings.Contains(b.String(), want) {
					t.Errorf("metrics lack %q", want)
				}
			}
			if strings.Contains(b.String(), "sk-never-shown") {
				t.Fatal("the API key is in the metrics")
			}
			// The console says so too.
			page, err := http.Get(base + "/?q=" + url.QueryEscape("summarise legal contracts"))
			if err != nil {
				t.Fatal(err)
			}
			var pb strings.Builder
			_, _ = io.Copy(&pb, page.Body)
			page.Body.Close()
			if !strings.Contains(pb.String(), "Ranked by words only") {
				t.Fatal("the console does not say the search fell back to words")
			}
		})
	}
}
