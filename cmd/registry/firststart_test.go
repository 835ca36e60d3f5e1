package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/config"
	"github.com/a2aregistry/registry/internal/safehttp"
	"github.com/a2aregistry/registry/internal/safehttp/safehttptest"
)

// TestFirstStartLooksUpNoName runs a newcomer's first `registry serve`
// (empty catalog, so the example cards are imported) with everything that
// reaches out switched on: background verification with OpenID discovery
// and live probes, the crawler, and a registration of an example host.
// Every name the registry looks up goes to an in-process resolver, which
// fails the test when asked for a reserved name; at the end it must have
// been asked for nothing at all. The examples' probes say why they did not
// reach their hosts: the names are reserved.
func TestFirstStartLooksUpNoName(t *testing.T) {
	res := safehttptest.NewResolver(t, nil)
	cfg := config.Default()
	cfg.Server.Listen = "127.0.0.1:0"
	cfg.Server.ShutdownTimeout = 5 * time.Second
	cfg.Storage.DB = "sqlite:" + filepath.Join(t.TempDir(), "reg.db")
	cfg.Storage.ImportExamples = true
	cfg.Crawl.Enabled = true
	cfg.Verify.Fetch, cfg.Verify.Probes = true, true
	cfg.Outbound.Resolver = res.Net()

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	addrc := make(chan net.Addr, 1)
	errc := make(chan error, 1)
	go func() { errc <- serve(ctx, cfg, slog.New(slog.DiscardHandler), func(a net.Addr) { addrc <- a }) }()
	var base string
	select {
	case a := <-addrc:
		base = (&url.URL{Scheme: "http", Host: a.String()}).String()
	case err := <-errc:
		t.Fatalf("serve: %v", err)
	case <-time.After(serveStartLimit):
		t.Fatal("server did not start")
	}

	// Registering an example host fails at once, with its own class.
	resp, err := http.Post(base+"/api/v1/agents", "application/json", strings.NewReader(`{"url":"https://support.shop.example"}`))
	if err != nil {
		t.Fatal(err)
	}
	var refusal struct {
		Error struct {
			Code, Class, Message string
		}
	}
	err = json.NewDecoder(resp.Body).Decode(&refusal)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusUnprocessableEntity || refusal.Error.Class != safehttp.CauseReservedName {
		t.Errorf("registering an example host: %d %+v (%v), want 422 with class %s", resp.StatusCode, refusal, err, safehttp.CauseReservedName)
	}

	// Wait for the background verifier to report on every example.
	type probe struct{ URL, Status, Cause string }
	type finding struct{ Code, Message string }
	type report struct {
		Transports []probe
		Security   []finding `json:"security_findings"`
	}
	var reports map[string]report
	deadline := time.Now().Add(60 * time.Second)
	for {
		reports = map[string]report{}
		var page struct {
			Items []struct{ ID, Name string }
		}
		getJSON(t, base+"/api/v1/agents?limit=50", &page)
		for _, it := range page.Items {
			var detail struct{ Verification *report }
			getJSON(t, base+"/api/v1/agents/"+it.ID, &detail)
			if detail.Verification != nil {
				reports[it.Name] = *detail.Verification
			}
		}
		if len(page.Items) >= 6 && len(reports) == len(page.Items) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60s, %d of %d examples verified", len(reports), len(page.Items))
		}
		time.Sleep(100 * time.Millisecond)
	}
	oidc := 0
	for name, r := range reports {
		if len(r.Transports) == 0 {
			t.Errorf("%s: no transport probes", name)
		}
		for _, p := range r.Transports {
			// A v0.2 card declares no protocol version: nothing to probe.
			if p.Cause != safehttp.CauseReservedName && p.Status != "skipped" {
				t.Errorf("%s: probe of %s: %s, cause %q; want cause %s", name, p.URL, p.Status, p.Cause, safehttp.CauseReservedName)
			}
		}
		for _, f := range r.Security {
			if f.Code == "oidc_discovery_unreachable" {
				oidc++
				if !strings.Contains(f.Message, "reserved") {
					t.Errorf("%s: OpenID discovery finding %q does not say the name is reserved", name, f.Message)
				}
			}
		}
	}
	if oidc == 0 {
		t.Error("no example's OpenID discovery document was tried")
	}

	cancel()
	if err := <-errc; err != nil {
		t.Errorf("serve: %v", err)
	}
	if asked := res.Asked(); len(asked) != 0 {
		t.Errorf("a first start looked up %v", asked)
	}
}

func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", u, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
}
