package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/config"
)

// A v0.2 site that still serves only the legacy well-known path.
const e2eV02 = `{"name":"Harbor Tides","description":"Tide tables for harbours.","url":"https://tides.example/a2a","version":"1",
 "capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
 "skills":[{"id":"tide-table","name":"Tide table","description":"High and low water times.","tags":["maritime"]}]}`

const e2eV03 = `{"protocolVersion":"0.3.0","name":"Ledger Lens","description":"Reconciles bank statements.",
 "url":"https://ledger.example/a2a/v1","preferredTransport":"JSONRPC","version":"2",
 "capabilities":{"streaming":true},"defaultInputModes":["application/pdf"],"defaultOutputModes":["application/json"],
 "skills":[{"id":"reconcile","name":"Reconcile statement","description":"Matches statement lines to ledger entries.","tags":["accounting"]}]}`

// TestRegisterEveryVersion registers a card of each protocol version by URL
// from loopback agents (the v1.0 one served by the official SDK), then finds
// each by text, skill, tag and media type through the API.
func TestRegisterEveryVersion(t *testing.T) {
	static := func(path, body string) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != path {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, body)
		}))
	}
	v02 := static("/.well-known/agent.json", e2eV02)
	defer v02.Close()
	v03 := static("/.well-known/agent-card.json", e2eV03)
	defer v03.Close()
	mux := http.NewServeMux()
	v10 := httptest.NewServer(mux)
	defer v10.Close()
	mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewStaticAgentCardHandler(&a2a.AgentCard{
		Name:        "Orbit Watch",
		Description: "Tracks satellites and predicts passes.",
		Version:     "1.0.0",
		SupportedInterfaces: []*a2a.AgentInterface{
			{URL: v10.URL + "/a2a", ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2a.Version},
		},
		Capabilities:       a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"image/png"},
		Skills: []a2a.AgentSkill{{ID: "pass-predict", Name: "Predict passes", Description: "Next visible passes of a satellite.",
			Tags: []string{"astronomy"}}},
	}))

	for _, db := range []struct {
		name string
		dsn  func(testing.TB) string
	}{
		{"sqlite", func(t testing.TB) string { return "sqlite:" + filepath.Join(t.TempDir(), "reg.db") }},
		{"postgres", catalogtest.PostgresDSN},
	} {
		t.Run(db.name, func(t *testing.T) {
			base := startServe(t, db.dsn(t))
			for _, origin := range []string{v02.URL, v03.URL, v10.URL} {
				resp, err := http.Post(base+"/api/v1/agents", "application/json", strings.NewReader(`{"url":"`+origin+`"}`))
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusCreated {
					t.Fatalf("registering %s: %d %s", origin, resp.StatusCode, body)
				}
			}
			tests := []struct {
				query string
				want  string
			}{
				{"q=tides", "Harbor Tides"},
				{"skill=tide-table", "Harbor Tides"},
				{"tag=maritime&protocol_version=unknown", "Harbor Tides"}, // v0.2.2 had no version field
				{"q=reconciles+statements", "Ledger Lens"},
				{"skill=Reconcile+statement", "Ledger Lens"},
				{"tag=accounting", "Ledger Lens"},
				{"input_mode=application/pdf&output_mode=application/json", "Ledger Lens"},
				{"q=satellite", "Orbit Watch"},
				{"skill=pass-predict&protocol_version=1.0", "Orbit Watch"},
				{"tag=astronomy", "Orbit Watch"},
				{"output_mode=image/*", "Orbit Watch"},
			}
			for _, tc := range tests {
				resp, err := http.Get(base + "/api/v1/agents?" + tc.query)
				if err != nil {
					t.Fatal(err)
				}
				var page struct {
					Items []struct {
						Name string `json:"name"`
					} `json:"items"`
				}
				err = json.NewDecoder(resp.Body).Decode(&page)
				resp.Body.Close()
				if err != nil {
					t.Fatal(err)
				}
				if len(page.Items) != 1 || page.Items[0].Name != tc.want {
					t.Errorf("%s: got %+v, want only %s", tc.query, page.Items, tc.want)
				}
			}
		})
	}
}

// startServe runs `registry serve` on a free loopback port with loopback
// agents allowed, and returns its base URL.
func startServe(t *testing.T, dsn string) string {
	t.Helper()
	return startServeWith(t, dsn, nil)
}

// serveStartLimit is how long a test waits for serve to start (or to fail
// to): a hang guard. Opening and migrating a PostgreSQL catalog took over
// the 30 s it was on a two-core machine at load 30.
const serveStartLimit = 2 * time.Minute

// startServeWith is startServe with the configuration changed by mod.
func startServeWith(t *testing.T, dsn string, mod func(*config.Config)) string {
	t.Helper()
	cfg := config.Default()
	cfg.Server.Listen = "127.0.0.1:0"
	cfg.Storage.DB = dsn
	cfg.Storage.ImportExamples = false
	cfg.Outbound.AllowNetworks = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	cfg.Server.ShutdownTimeout = 5 * time.Second
	if mod != nil {
		mod(&cfg)
	}
	ctx, cancel := context.WithCancel(t.Context())
	addrc := make(chan net.Addr, 1)
	errc := make(chan error, 1)
	go func() { errc <- serve(ctx, cfg, slog.New(slog.DiscardHandler), func(a net.Addr) { addrc <- a }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	select {
	case a := <-addrc:
		return (&url.URL{Scheme: "http", Host: a.String()}).String()
	case err := <-errc:
		t.Fatalf("serve: %v", err)
	case <-time.After(serveStartLimit):
		t.Fatal("server did not start")
	}
	return ""
}
