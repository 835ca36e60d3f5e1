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
	tests := []struct {
		name string
		urls []string
		want string
	}{
		{"https default port dropped, host lowered", []string{"https://Agents.Example.com:443/a2a"}, "https://agents.example.com/.well-known/agent-card.json"},
		{"http keeps explicit port", []string{"http://10.0.0.5:9999/rpc?x=1"}, "http://10.0.0.5:9999/.well-known/agent-card.json"},
		{"http default port dropped", []string{"http://a.example:80/"}, "http://a.example/.well-known/agent-card.json"},
		{"userinfo removed", []string{"https://user:pw@a.example/x"}, "https://a.example/.well-known/agent-card.json"},
		{"ipv6 literal", []string{"https://[2001:db8::1]/a2a"}, "https://[2001:db8::1]/.well-known/agent-card.json"},
		{"ipv6 literal with port", []string{"https://[2001:db8::1]:8443/a2a"}, "https://[2001:db8::1]:8443/.well-known/agent-card.json"},
		{"first usable interface wins", []string{"grpc.example.com:443", "ftp://x.example/", "https://b.example/rest", "https://c.example/"}, "https://b.example/.well-known/agent-card.json"},
		{"no usable interface", []string{"grpc.example.com:443", "https:///nohost", "javascript:alert(1)"}, ""},
		{"no interfaces", nil, ""},
	}
	raw := []byte(`{"name":"x"}`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &card.Card{Raw: raw}
			for _, u := range tt.urls {
				c.Interfaces = append(c.Interfaces, card.Interface{URL: u})
			}
			want := tt.want
			if want == "" {
				want = urn(string(raw))
			}
			if got := CardURL(c, raw); got != want {
				t.Errorf("CardURL = %q, want %q", got, want)
			}
		})
	}
}

func TestCardOutcomes(t *testing.T) {
	store := &fakeStore{}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("X", 3600))
	im := &Importer{Store: store, Now: func() time.Time { return now }}
	ctx := context.Background()

	steps := []struct {
		raw     string
		want    Outcome
		cardURL string
	}{
		{v10Card, Created, "https://agents.example.com/.well-known/agent-card.json"},
		{v10Card, Unchanged, "https://agents.example.com/.well-known/agent-card.json"},
		{strings.Replace(v10Card, `"1.0.0"`, `"1.0.1"`, 1), Updated, "https://agents.example.com/.well-known/agent-card.json"},
		{v03Card, Created, "http://weather.internal:9999/.well-known/agent-card.json"},
		{noURLCard, Created, urn(noURLCard)},
		{noURLCard, Unchanged, urn(noURLCard)},
	}
	for i, st := range steps {
		res, err := im.Card(ctx, []byte(st.raw))
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

	if res, err := im.File(ctx, small); err != nil || res.Outcome != Created {
		t.Fatalf("file at the limit: %+v, %v", res, err)
	}
	if _, err := im.File(ctx, big); !errors.Is(err, ErrTooLarge) {
		t.Errorf("oversized file: err = %v, want ErrTooLarge", err)
	}
	if _, err := im.File(ctx, filepath.Join(dir, "missing.json")); !errors.Is(err, os.ErrNotExist) {
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
	if err == nil || !strings.Contains(err.Error(), "cards/b.json") {
		t.Errorf("error %v does not name cards/b.json", err)
	}
	if len(results) != 2 || results[0].Name != "Invoice Agent" || results[1].Name != "Weather" {
		t.Errorf("results = %+v", results)
	}
}
