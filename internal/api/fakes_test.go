package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/crawler"
)

// fakeCatalog serves fixed agents. err, when set, is returned by every
// method; searchErr only by Search.
type fakeCatalog struct {
	mu        sync.Mutex
	agents    map[string]catalog.Agent
	versions  map[string][]catalog.Version // oldest first
	page      catalog.Page
	searchErr error
	err       error
	// versionsErr fails Versions only, to reach errors after Agent succeeded.
	versionsErr error
	lastQuery   catalog.Query
	searched    bool
	// health holds reports by agent id; an agent without one has an
	// unchecked report in its own health state. healthErr fails AgentHealth.
	health    map[string]catalog.HealthReport
	healthErr error
	healthAt  time.Time
	// changes is the whole feed, oldest first; changesErr fails Changes.
	changes     []catalog.Change
	changesErr  error
	changesCall *changesCall
	// verifications holds reports by agent id; verificationErr fails
	// Verification.
	verifications   map[string]*catalog.Verification
	verificationErr error
	// views counts AgentView calls.
	views int
	// hidden are the agents VisibleAgents does not see; visibleErr fails
	// it.
	hidden     map[string]bool
	visibleErr error
	// completions are what Complete answers; lastCompletion what it was
	// asked.
	completions    []catalog.Completion
	lastCompletion completionCall
}

type changesCall struct {
	since int64
	limit int
}

func (f *fakeCatalog) Complete(_ context.Context, sc catalog.Scope, typed string, limit int) ([]catalog.Completion, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lastCompletion = completionCall{sc, typed, limit}
	if f.err != nil {
		return nil, f.err
	}
	return f.completions, nil
}

type completionCall struct {
	sc    catalog.Scope
	typed string
	limit int
}

func (f *fakeCatalog) Search(_ context.Context, q catalog.Query) (catalog.Page, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lastQuery, f.searched = q, true
	if f.err != nil {
		return catalog.Page{}, f.err
	}
	if f.searchErr != nil {
		return catalog.Page{}, f.searchErr
	}
	p := f.page
	p.Items = slices.Clone(p.Items)
	for i := range p.Items {
		if p.Items[i].Listing == "" {
			p.Items[i].Listing = catalog.ListingApproved
		}
	}
	return p, nil
}

func (f *fakeCatalog) Agent(_ context.Context, _ catalog.Scope, id string) (catalog.Agent, error) {
	if f.err != nil {
		return catalog.Agent{}, f.err
	}
	a, ok := f.agents[id]
	if !ok {
		return catalog.Agent{}, catalog.ErrNotFound
	}
	if a.Listing.State == "" {
		a.Listing.State = catalog.ListingApproved
	}
	return a, nil
}

func (f *fakeCatalog) RawCard(_ context.Context, _ catalog.Scope, id string) ([]byte, error) {
	if f.err != nil {
		return nil, f.err
	}
	vs := f.versions[id]
	if len(vs) == 0 {
		return nil, catalog.ErrNotFound
	}
	return vs[len(vs)-1].Raw, nil
}

func (f *fakeCatalog) Versions(_ context.Context, _ catalog.Scope, id string) ([]catalog.VersionSummary, error) {
	if f.err != nil {
		return nil, f.err
	}
	if f.versionsErr != nil {
		return nil, f.versionsErr
	}
	vs, ok := f.versions[id]
	if !ok {
		return nil, catalog.ErrNotFound
	}
	out := make([]catalog.VersionSummary, 0, len(vs))
	for _, v := range slices.Backward(vs) {
		out = append(out, v.VersionSummary)
	}
	return out, nil
}

func (f *fakeCatalog) Version(_ context.Context, _ catalog.Scope, id string, n int) (catalog.Version, error) {
	if f.err != nil {
		return catalog.Version{}, f.err
	}
	for _, v := range f.versions[id] {
		if v.Number == n {
			return v, nil
		}
	}
	return catalog.Version{}, catalog.ErrNotFound
}

func (f *fakeCatalog) AgentHealth(_ context.Context, id string, now time.Time) (catalog.HealthReport, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.healthAt = now
	if f.err != nil {
		return catalog.HealthReport{}, f.err
	}
	if f.healthErr != nil {
		return catalog.HealthReport{}, f.healthErr
	}
	a, ok := f.agents[id]
	if !ok {
		return catalog.HealthReport{}, catalog.ErrNotFound
	}
	if r, ok := f.health[id]; ok {
		return r, nil
	}
	next := t0
	return catalog.HealthReport{State: a.Health, NextCheckAt: &next}, nil
}

// AgentView composes the fake's own reads, so each error knob fails the
// view as it failed the separate reads before.
func (f *fakeCatalog) AgentView(ctx context.Context, _ catalog.Scope, id string, now time.Time) (catalog.AgentView, error) {
	f.mu.Lock()
	f.views++
	f.mu.Unlock()
	var (
		v   catalog.AgentView
		err error
	)
	if v.Agent, err = f.Agent(ctx, catalog.ScopeAll, id); err != nil {
		return catalog.AgentView{}, err
	}
	if v.Versions, err = f.Versions(ctx, catalog.ScopeAll, id); err != nil {
		return catalog.AgentView{}, err
	}
	if v.Health, err = f.AgentHealth(ctx, id, now); err != nil {
		return catalog.AgentView{}, err
	}
	if v.Verification, err = f.Verification(ctx, id); err != nil {
		return catalog.AgentView{}, err
	}
	return v, nil
}

// VisibleAgents sees every agent the fake holds, but for those in hidden.
func (f *fakeCatalog) VisibleAgents(_ context.Context, _ catalog.Scope, ids []string) (map[string]bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	if f.visibleErr != nil {
		return nil, f.visibleErr
	}
	out := map[string]bool{}
	for _, id := range ids {
		if _, ok := f.agents[id]; ok && !f.hidden[id] {
			out[id] = true
		}
	}
	return out, nil
}

func (f *fakeCatalog) Verification(_ context.Context, id string) (*catalog.Verification, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	if f.verificationErr != nil {
		return nil, f.verificationErr
	}
	if _, ok := f.agents[id]; !ok {
		return nil, catalog.ErrNotFound
	}
	return f.verifications[id], nil
}

func (f *fakeCatalog) Changes(_ context.Context, _ catalog.Scope, since int64, limit int) ([]catalog.Change, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.changesCall = &changesCall{since: since, limit: limit}
	if f.err != nil {
		return nil, f.err
	}
	if f.changesErr != nil {
		return nil, f.changesErr
	}
	var out []catalog.Change
	for _, c := range f.changes {
		if c.Seq > since && len(out) < limit {
			out = append(out, c)
		}
	}
	return out, nil
}

// fakeRefresher records the agent it was asked to check; check, when set,
// runs first (to change the catalog as a real check would), then err is
// returned. Unknown agents of cat answer catalog.ErrNotFound.
type fakeRefresher struct {
	cat   *fakeCatalog
	check func(*fakeCatalog)
	err   error
	id    string
}

func (f *fakeRefresher) RefreshNow(_ context.Context, _ catalog.Actor, id string) (crawler.RefreshResult, error) {
	f.id = id
	if _, ok := f.cat.agents[id]; !ok {
		return crawler.RefreshResult{}, fmt.Errorf("refreshing agent %s: agent %s: %w", id, id, catalog.ErrNotFound)
	}
	if f.check != nil {
		f.check(f.cat)
	}
	return crawler.RefreshResult{Outcome: catalog.FetchOutcome{AgentID: id}}, f.err
}

type fakeRegistrar struct {
	res   catalog.UpsertResult
	err   error
	input string
	actor catalog.Actor
}

func (f *fakeRegistrar) Register(_ context.Context, actor catalog.Actor, _ catalog.Scope, input string) (catalog.UpsertResult, error) {
	f.input, f.actor = input, actor
	return f.res, f.err
}

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func version(n int, raw string) catalog.Version {
	sum := sha256.Sum256([]byte(raw))
	return catalog.Version{
		VersionSummary: catalog.VersionSummary{
			Number: n, SHA256: hex.EncodeToString(sum[:]), Size: len(raw),
			Source: catalog.SourceURL, ReceivedAt: t0.Add(time.Duration(n) * time.Hour),
		},
		Raw: []byte(raw),
	}
}

// fullCard sets every field, so the document must describe each one.
func fullCard() *card.Card {
	return &card.Card{
		Shape:            card.ShapeMixed,
		ProtocolVersions: []string{"1.0", "0.3"},
		Name:             "Invoice agent",
		Description:      "Reads invoices <script>alert(1)</script>",
		Version:          "2.1.0",
		Provider:         &card.Provider{Organization: "Example Corp", URL: "https://example.com"},
		IconURL:          "https://example.com/icon.png",
		DocumentationURL: "https://example.com/docs",
		Capabilities: card.Capabilities{
			Streaming: true, PushNotifications: true, StateTransitionHistory: true, ExtendedCard: true,
			Extensions: []card.Extension{{URI: "https://ext.example/v1", Description: "x", Required: true, Params: []byte(`{"a":[1,2]}`)}},
		},
		Interfaces: []card.Interface{
			{URL: "https://agent.example/a2a", Binding: card.BindingJSONRPC, ProtocolVersion: "1.0", Tenant: "t1", Path: "$.supportedInterfaces[0]"},
			{URL: "https://agent.example/v03", Binding: card.BindingHTTPJSON, ProtocolVersion: "0.3", Path: "$.additionalInterfaces[0]"},
		},
		SecuritySchemes: []card.SecurityScheme{
			{Name: "key", Type: card.SchemeAPIKey, Description: "d", In: "header", ParamName: "X-Key", Path: "$.securitySchemes.key"},
			{Name: "bearer", Type: card.SchemeHTTP, Scheme: "bearer", BearerFormat: "JWT", Path: "$.securitySchemes.bearer"},
			{Name: "oidc", Type: card.SchemeOpenIDConnect, OpenIDConnectURL: "https://idp.example/.well-known/openid-configuration", Path: "$.securitySchemes.oidc"},
			{Name: "oauth", Type: card.SchemeOAuth2, OAuth2MetadataURL: "https://idp.example/.well-known/oauth-authorization-server",
				Flows: []card.OAuthFlow{{
					Name: "authorizationCode", AuthorizationURL: "https://idp.example/auth", TokenURL: "https://idp.example/token",
					RefreshURL: "https://idp.example/refresh", Scopes: map[string]string{"read": "Read"}, PKCERequired: true,
				}, {Name: "deviceCode", DeviceAuthURL: "https://idp.example/device", TokenURL: "https://idp.example/token"}},
				Path: "$.securitySchemes.oauth"},
		},
		SecurityRequirements: []card.Requirement{{{Scheme: "oauth", Scopes: []string{"read"}}}, {{Scheme: "key", Scopes: nil}}},
		DefaultInputModes:    []string{"text/plain", "application/pdf"},
		DefaultOutputModes:   []string{"application/json"},
		Skills: []card.Skill{{
			ID: "parse", Name: "Parse invoice", Description: "Extracts fields", Tags: []string{"invoice", "pdf"},
			Examples: []string{"parse this"}, InputModes: []string{"application/pdf"}, OutputModes: []string{"application/json"},
			InheritsOutputModes:  true,
			SecurityRequirements: []card.Requirement{{{Scheme: "bearer"}}},
		}},
		Signatures: []card.Signature{{Protected: "eyJhbGciOiJFUzI1NiJ9", Signature: "sig", Header: []byte(`{"kid":"k1"}`)}},
		Findings: []card.Finding{
			{Code: "http_url", Severity: card.SeverityWarning, Path: "$.url", Message: "plain http"},
		},
	}
}

// sparseCard leaves every optional slice nil, as an older parser might.
func sparseCard() *card.Card {
	return &card.Card{
		Shape: card.ShapeV02, Name: "bare", Description: "", Version: "0",
		Skills: []card.Skill{{ID: "s", Name: "s"}},
	}
}

const (
	fullRaw   = "{\"name\":\"Invoice agent\",\n  \"description\":\"<html><script>alert(1)</script>\"}  \n"
	fullRawV1 = `{"name":"Invoice agent","version":"1"}`
	sparseRaw = `{"name":"bare"}`
)

func newFakeCatalog() *fakeCatalog {
	return &fakeCatalog{
		agents: map[string]catalog.Agent{
			"a1": {
				ID: "a1", CardURL: "https://agent.example/.well-known/agent-card.json", Card: fullCard(),
				SignatureStatus: catalog.SignatureVerified, Health: catalog.HealthUp, CurrentVersion: 2,
				CreatedAt: t0, UpdatedAt: t0.Add(2 * time.Hour), FetchedAt: t0.Add(3 * time.Hour),
			},
			"sparse": {
				ID: "sparse", CardURL: "http://old.example/.well-known/agent.json", Card: sparseCard(),
				SignatureStatus: catalog.SignatureUnsigned, Health: catalog.HealthUnknown, CurrentVersion: 1,
				CreatedAt: t0, UpdatedAt: t0, FetchedAt: t0,
			},
			"nocard": {ID: "nocard", CardURL: "https://x.example/", CurrentVersion: 1, Health: catalog.HealthDown,
				SignatureStatus: catalog.SignatureUnchecked, CreatedAt: t0, UpdatedAt: t0, FetchedAt: t0},
		},
		versions: map[string][]catalog.Version{
			"a1":     {version(1, fullRawV1), version(2, fullRaw)},
			"sparse": {version(1, sparseRaw)},
			"nocard": {version(1, `{}`)},
			"empty":  {},
		},
	}
}

// AgentRemoval reads the fake agent's Removed.
func (f *fakeCatalog) AgentRemoval(_ context.Context, id string) (*catalog.Removal, error) {
	if f.err != nil {
		return nil, f.err
	}
	a, ok := f.agents[id]
	if !ok {
		return nil, catalog.ErrNotFound
	}
	return a.Removed, nil
}

// The fake has no admission policy.
func (f *fakeCatalog) PolicyState(_ context.Context, _ catalog.Scope, id string) (catalog.PolicyState, error) {
	if _, ok := f.agents[id]; !ok {
		return catalog.PolicyState{}, catalog.ErrNotFound
	}
	return catalog.PolicyState{}, nil
}

// The fake has no stored cards: the findings export lists nothing.
func (f *fakeCatalog) CurrentCards(context.Context, catalog.Scope, func(catalog.CurrentCard) error) error {
	return nil
}

func (f *fakeCatalog) CardLimits() card.Limits { return card.DefaultLimits() }
