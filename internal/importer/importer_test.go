package importer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
)

// fakeStore keeps the last raw bytes per card URL, like the catalog's
// version rule: new URL → created, different bytes → new version.
type fakeStore struct {
	raw    map[string][]byte
	inputs []catalog.UpsertInput
	err    error
}

func (s *fakeStore) Upsert(_ context.Context, _ catalog.Actor, in catalog.UpsertInput) (catalog.UpsertResult, error) {
	if s.err != nil {
		return catalog.UpsertResult{}, s.err
	}
	if s.raw == nil {
		s.raw = map[string][]byte{}
	}
	s.inputs = append(s.inputs, in)
	prev, seen := s.raw[in.CardURL]
	s.raw[in.CardURL] = in.Card.Raw
	return catalog.UpsertResult{
		Agent:      catalog.Agent{ID: "id-" + in.CardURL, CardURL: in.CardURL},
		Created:    !seen,
		NewVersion: !seen || !bytes.Equal(prev, in.Card.Raw),
	}, nil
}

const v10Card = `{
  "name": "Invoice Agent",
  "description": "Reads invoices",
  "version": "1.0.0",
  "supportedInterfaces": [
    {"url": "https://Agents.Example.com:443/a2a/v1", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
  ],
  "capabilities": {},
  "defaultInputModes": ["application/pdf"],
  "defaultOutputModes": ["application/json"],
  "skills": [{"id": "extract", "name": "Extract", "description": "Extract fields", "tags": ["invoice"]}]
}`

const v03Card = `{
  "protocolVersion": "0.3.0",
  "name": "Weather",
  "description": "Forecasts",
  "version": "2",
  "url": "http://weather.internal:9999/rpc",
  "preferredTransport": "JSONRPC",
  "capabilities": {},
  "defaultInputModes": ["text/plain"],
  "defaultOutputModes": ["text/plain"],
  "skills": [{"id": "forecast", "name": "Forecast", "description": "Forecast", "tags": ["weather"]}]
}`

const noURLCard = `{
  "name": "Nowhere",
  "description": "No usable endpoint",
  "version": "1",
  "supportedInterfaces": [
    {"url": "grpc.example.com:443", "protocolBinding": "GRPC", "protocolVersion": "1.0"}
  ],
  "capabilities": {},
  "defaultInputModes": ["text/plain"],
  "defaultOutputModes": ["text/plain"],
  "skills": []
}`

func urn(raw string) string {
	sum := sha256.Sum256([]byte(raw))
	return "urn:a2a-registry:import:" + hex.EncodeToString(sum[:])
}

func TestCardURL(t *testing.T) {
	raw := []byte(v10Card)
	tests := []struct {
		name, servedAt, want string
	}{
		{"no URL given: content hash", "", urn(v10Card)},
		{"URL given: canonical, path kept", "https://Hub.Example.com:443/agents/a/.well-known/agent-card.json",
			"https://hub.example.com/agents/a/.well-known/agent-card.json"},
		{"another agent on the same host", "https://hub.example.com/agents/b/.well-known/agent-card.json",
			"https://hub.example.com/agents/b/.well-known/agent-card.json"},
		{"IDN host in ASCII", "https://bücher.example/card.json", "https://xn--bcher-kva.example/card.json"},
		{"dot segments and escapes", "http://localhost:3000/x/../agents/%61/card.json?", "http://localhost:3000/agents/a/card.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CardURL(raw, tt.servedAt)
			if err != nil || got != tt.want {
				t.Errorf("CardURL = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	for _, bad := range []string{"agents.example.com/card.json", "ftp://a.example/card.json", "https://u:p@a.example/"} {
		if _, err := CardURL(raw, bad); !errors.Is(err, ErrInvalidURL) || !errors.Is(err, card.ErrInvalidURL) {
			t.Errorf("CardURL(%q) error = %v, want ErrInvalidURL", bad, err)
		}
	}
}

func TestCardOutcomes(t *testing.T) {
	store := &fakeStore{}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("X", 3600))
	im := &Importer{Store: store, Now: func() time.Time { return now }}
	ctx := context.Background()

	steps := []struct {
		raw      string
		servedAt string
		want     Outcome
		cardURL  string
	}{
		{v10Card, "https://agents.example.com/a/card.json", Created, "https://agents.example.com/a/card.json"},
		{v10Card, "HTTPS://agents.example.com:443/a//card.json", Unchanged, "https://agents.example.com/a/card.json"},
		{strings.Replace(v10Card, `"1.0.0"`, `"1.0.1"`, 1), "https://agents.example.com/a/card.json", Updated, "https://agents.example.com/a/card.json"},
		// The same host, another path: another agent.
		{v10Card, "https://agents.example.com/b/card.json", Created, "https://agents.example.com/b/card.json"},
		{v03Card, "", Created, urn(v03Card)},
		{noURLCard, "", Created, urn(noURLCard)},
		{noURLCard, "", Unchanged, urn(noURLCard)},
	}
	for i, st := range steps {
		res, err := im.CardAt(ctx, []byte(st.raw), st.servedAt)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if res.Outcome != st.want || res.CardURL != st.cardURL {
			t.Errorf("step %d: got %s %s, want %s %s", i, res.Outcome, res.CardURL, st.want, st.cardURL)
		}
		if res.AgentID == "" || res.Name == "" {
			t.Errorf("step %d: result lacks id or name: %+v", i, res)
		}
	}
	for _, in := range store.inputs {
		if in.Source != catalog.SourceImport {
			t.Errorf("source = %q, want %q", in.Source, catalog.SourceImport)
		}
		if !in.ReceivedAt.Equal(now) || in.ReceivedAt.Location() != time.UTC {
			t.Errorf("ReceivedAt = %v, want %v in UTC", in.ReceivedAt, now)
		}
		if in.Card == nil || len(in.Card.Raw) == 0 {
			t.Error("card or raw bytes missing")
		}
	}
}

func TestCardFailuresStoreNothing(t *testing.T) {
	tests := []struct {
		name    string
		raw     string
		storeEr error
		wantIs  error
	}{
		{"not json", `{"name":`, nil, card.ErrInvalid},
		{"duplicate key", `{"name":"a","name":"b"}`, nil, card.ErrInvalid},
		{"not a card", `{"name":"my-site","version":"1.0.0","description":"a package manifest"}`, nil, card.ErrInvalid},
		{"store failure", v10Card, errors.New("disk full"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := &fakeStore{err: tt.storeEr}
			im := &Importer{Store: store}
			_, err := im.Card(context.Background(), []byte(tt.raw))
			if err == nil {
				t.Fatal("import succeeded")
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("error %v is not %v", err, tt.wantIs)
			}
			if tt.storeEr != nil && !errors.Is(err, tt.storeEr) {
				t.Errorf("store error not wrapped: %v", err)
			}
			if len(store.raw) != 0 {
				t.Errorf("store written despite failure: %v", store.raw)
			}
		})
	}
}

func TestFileSizeCap(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.json")
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(small, []byte(v10Card), 0o600); err != nil {
		t.Fatal(err)
	}
	padded := strings.Replace(v10Card, `"Reads invoices"`, `"`+strings.Repeat("x", 4096)+`"`, 1)
	if err := os.WriteFile(big, []byte(padded), 0o600); err != nil {
		t.Fatal(err)
	}
	store := &fakeStore{}
	im := &Importer{Store: store, Limits: card.Limits{MaxBytes: len(v10Card)}}
	ctx := context.Background()

	if res, err := im.FileAt(ctx, small, ""); err != nil || res.Outcome != Created {
		t.Fatalf("file at the limit: %+v, %v", res, err)
	}
	if _, err := im.FileAt(ctx, big, ""); !errors.Is(err, ErrTooLarge) {
		t.Errorf("oversized file: err = %v, want ErrTooLarge", err)
	}
	if _, err := im.FileAt(ctx, filepath.Join(dir, "missing.json"), ""); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err = %v, want os.ErrNotExist", err)
	}
	if len(store.inputs) != 1 {
		t.Errorf("%d upserts, want 1", len(store.inputs))
	}
}

func TestFSContinuesPastBadFiles(t *testing.T) {
	fsys := fstest.MapFS{
		"cards/a.json": {Data: []byte(v10Card)},
		"cards/b.json": {Data: []byte(`not json`)},
		"cards/c.json": {Data: []byte(v03Card)},
		"cards/readme": {Data: []byte(`ignored`)},
		"other/d.json": {Data: []byte(noURLCard)},
	}
	store := &fakeStore{}
	im := &Importer{Store: store}
	results, err := im.FS(context.Background(), fsys, "cards/*.json")
	// One joined error, for the one bad file, which is not a card.
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok || len(joined.Unwrap()) != 1 || !errors.Is(err, card.ErrInvalid) {
		t.Errorf("error %v: want one error, for cards/b.json, wrapping card.ErrInvalid", err)
	}
	if len(results) != 2 || results[0].Name != "Invoice Agent" || results[1].Name != "Weather" {
		t.Errorf("results = %+v", results)
	}
}
