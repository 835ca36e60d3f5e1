// Package a2aagent is the registry as an A2A agent: a card at the
// registry's origin (/.well-known/agent-card.json) and the official a2a-go
// server over JSON-RPC and HTTP+JSON at protocol v1.0 and JSON-RPC at
// v0.3. A message in words is a search: the answer is a completed task
// whose artifact holds the matching agents as ARD entries (a data part)
// and a summary (a text part); later messages in the same context narrow
// that search ("only signed ones", "over gRPC").
//
// Like every door it maps its input onto the application layer (the
// shared search request, the catalog's scoped reads, ardentry's mapping)
// and writes nothing.
package a2aagent

import (
	"context"
	"crypto"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/catalog"
)

// Paths the door serves, under the registry's origin.
const (
	CardPath    = a2asrv.WellKnownAgentCardPath
	JSONRPCPath = "/a2a/v1/jsonrpc"
	RESTPath    = "/a2a/v1/rest"
	JSONRPCv0   = "/a2a/v0/jsonrpc"
)

// Skill ids of the registry's card.
const (
	SkillFind     = "find-agents"
	SkillDescribe = "describe-agent"
)

// Limits of one conversation.
const (
	// resultSize is how many agents one answer lists: a model reads
	// them all, a person the first few.
	resultSize = 10
	// maxMessageText bounds the words of one message; the search reads
	// at most catalog.MaxQueryTextLen characters of them anyway.
	maxMessageText = 4096
	// conversations and their idle time bound what follow-ups remember.
	maxConversations = 10000
	conversationIdle = time.Hour
	// tasksPerGeneration bounds the task store: tasks are answers a
	// client may fetch again soon after, not records to keep.
	tasksPerGeneration = 5000
)

// Catalog is what the door reads; *catalog.Store implements it.
type Catalog interface {
	Search(ctx context.Context, q catalog.Query) (catalog.Page, error)
	AgentView(ctx context.Context, sc catalog.Scope, id string, now time.Time) (catalog.AgentView, error)
	// AgentIDOf is the id of the agent a registry id, ARD identifier or
	// card URL names, as the scope sees it (catalog.Store.AgentIDOf).
	AgentIDOf(ctx context.Context, sc catalog.Scope, ref string) (string, error)
}

// Options configure an Agent.
type Options struct {
	Catalog Catalog
	Logger  *slog.Logger
	// BaseURL is where clients reach the registry (scheme and host): the
	// card's interfaces are under it. When empty, each request's own
	// origin is (development on loopback).
	BaseURL string
	// Open serves every caller with every agent in view: no
	// authenticator runs in front (tests, embedding). Otherwise the
	// caller is the principal auth put in the request context, and one
	// without the viewer role is refused with 401.
	Open bool
	// Issuer, with sign-in, is declared in the card as an OpenID Connect
	// security scheme, so a client knows where to get a token.
	Issuer string
	// Version is the registry's, the card's version.
	Version string
	// SigningKey, when set, signs the card (LoadSigningKey reads one).
	SigningKey crypto.Signer
	Now        func() time.Time
}

// Agent is the registry as an A2A agent.
type Agent struct {
	opts     Options
	log      *slog.Logger
	mu       sync.Mutex
	cards    map[string]*servedCard // by base URL
	signer   *signer                // nil: the card is not signed
	jsonrpc  http.Handler
	rest     http.Handler
	jsonrpc0 http.Handler
	convs    *conversations
}

// New builds the agent and its card.
func New(o Options) (*Agent, error) {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	o.BaseURL = strings.TrimRight(o.BaseURL, "/")
	registerGob.Do(func() { gob.Register(Result{}) })
	ag := &Agent{opts: o, log: o.Logger, convs: newConversations(o.Now), cards: map[string]*servedCard{}}
	if o.SigningKey != nil {
		s, err := newSigner(o.SigningKey)
		if err != nil {
			return nil, err
		}
		ag.signer = s
	}
	// The card is built once, so that it is checked at start-up and
	// served byte for byte the same (its ETag, a signature over it).
	if _, err := ag.cardFor(o.BaseURL); err != nil {
		return nil, err
	}
	capabilities := a2a.AgentCapabilities{Streaming: true}

	h := a2asrv.NewHandler(&executor{ag: ag},
		a2asrv.WithTaskStore(newTaskStore()),
		a2asrv.WithCallInterceptors(callerInterceptor{}),
		a2asrv.WithLogger(o.Logger),
		a2asrv.WithCapabilityChecks(&capabilities),
	)
	ag.jsonrpc = a2asrv.NewJSONRPCHandler(h)
	ag.rest = http.StripPrefix(RESTPath, a2asrv.NewRESTHandler(h))
	ag.jsonrpc0 = a2av0.NewJSONRPCHandler(h)
	return ag, nil
}

// registerGob names the data part's type to encoding/gob, with which the
// SDK copies every event and stored task: a typed value copies several
// times faster than the same answer as generic maps.
var registerGob sync.Once

// servedCard is the card for one base URL, as served.
type servedCard struct {
	json []byte
	etag string
}

// maxCards bounds the cards kept for request origins when no base URL is
// configured: Host headers are the client's to choose.
const maxCards = 8

func (ag *Agent) cardFor(base string) (*servedCard, error) {
	ag.mu.Lock()
	sc, ok := ag.cards[base]
	ag.mu.Unlock()
	if ok {
		return sc, nil
	}
	// A v1.0 card that also carries the v0.3 fields (url,
	// preferredTransport, additionalInterfaces), so that clients of
	// either version read it (A2A-NOTES: mixed cards).
	raw, err := a2av0.NewStaticAgentCardProducer(ag.buildCard(base)).(a2asrv.AgentCardJSONProducer).CardJSON(context.Background())
	if err != nil {
		return nil, fmt.Errorf("a2aagent: building the card: %w", err)
	}
	if ag.signer != nil {
		if raw, err = ag.signer.sign(raw, base+JWKSPath); err != nil {
			return nil, err
		}
	}
	sum := sha256.Sum256(raw)
	sc = &servedCard{json: raw, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
	ag.mu.Lock()
	if len(ag.cards) < maxCards || base == ag.opts.BaseURL {
		ag.cards[base] = sc
	}
	ag.mu.Unlock()
	return sc, nil
}

func (ag *Agent) base(r *http.Request) string {
	if ag.opts.BaseURL != "" {
		return ag.opts.BaseURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func (ag *Agent) buildCard(base string) *a2a.AgentCard {
	c := &a2a.AgentCard{
		Name: "A2A agent registry",
		Description: "Finds A2A agents registered in this registry: describe in words what an agent should do, " +
			"what it should accept and return, and how it should be reached; follow up to narrow the result. " +
			"Answers list agents as ARD entries (urn:air: identifier, name, card URL, skills, score), " +
			"limited to what the caller may see.",
		Version:  ag.opts.Version,
		Provider: &a2a.AgentProvider{Org: "A2A agent registry", URL: base},
		SupportedInterfaces: []*a2a.AgentInterface{
			{URL: base + JSONRPCPath, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2a.Version},
			{URL: base + RESTPath, ProtocolBinding: a2a.TransportProtocolHTTPJSON, ProtocolVersion: a2a.Version},
			{URL: base + JSONRPCv0, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2av0.Version},
		},
		Capabilities:       a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"application/json", "text/plain"},
		DocumentationURL:   base + "/api/openapi.json",
		Skills: []a2a.AgentSkill{
			{
				ID: SkillFind, Name: "Find agents",
				Description: "Search the registry for agents by what they do, the media types they accept and return, " +
					"their protocol binding, signature and health. Follow-up messages in the same context narrow the last result.",
				Tags: []string{"registry", "discovery", "search"},
				Examples: []string{
					"find an agent that converts currencies and accepts JSON",
					"only signed ones",
					"over gRPC",
					"agents that translate PDF documents and return JSON",
				},
				InputModes:  []string{"text/plain"},
				OutputModes: []string{"application/json", "text/plain"},
			},
			{
				ID: SkillDescribe, Name: "Describe an agent",
				Description: "Describe one registered agent, named by its urn:air: identifier, registry id or card URL: " +
					"its skills, interfaces, security schemes and the registry's checks.",
				Tags:        []string{"registry", "agent card"},
				Examples:    []string{"describe urn:air:agents.example.com:0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", "describe https://agents.example.com/.well-known/agent-card.json"},
				InputModes:  []string{"text/plain"},
				OutputModes: []string{"application/json", "text/plain"},
			},
		},
	}
	if ag.opts.Issuer != "" {
		c.SecuritySchemes = a2a.NamedSecuritySchemes{
			"oidc": a2a.OpenIDConnectSecurityScheme{
				OpenIDConnectURL: strings.TrimRight(ag.opts.Issuer, "/") + "/.well-known/openid-configuration",
				Description:      "a bearer token from the registry's sign-in provider; its roles and groups decide which agents the answers list",
			},
		}
	}
	return c
}

// Card is the registry's card as served at the configured base URL,
// byte for byte.
func (ag *Agent) Card() []byte {
	sc, _ := ag.cardFor(ag.opts.BaseURL)
	return sc.json
}

// ServeCard serves the card. It is public, as A2A v1.0 §8.2 asks of the
// well-known card: the caller's scope changes the answers, not the card.
func (ag *Agent) ServeCard(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	if r.Method == http.MethodOptions {
		h.Set("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	sc, err := ag.cardFor(ag.base(r))
	if err != nil {
		ag.log.Error("building the registry's card", "err", err)
		http.Error(w, "the card cannot be built", http.StatusInternalServerError)
		return
	}
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "public, max-age=300")
	h.Set("ETag", sc.etag)
	if r.Header.Get("If-None-Match") == sc.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(sc.json)
}

// ServeHTTP serves the three interfaces the card declares, to callers with
// the viewer role.
func (ag *Agent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !ag.opts.Open && !auth.FromContext(r.Context()).Role.Includes(auth.Viewer) {
		challenge := `Bearer realm="registry"`
		if r.Header.Get("Authorization") != "" {
			challenge += `, error="invalid_token"`
		}
		w.Header().Set("WWW-Authenticate", challenge)
		http.Error(w, "sign-in required: send Authorization: Bearer <token>", http.StatusUnauthorized)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	switch p := r.URL.Path; {
	case p == JSONRPCPath:
		ag.jsonrpc.ServeHTTP(w, r)
	case p == JSONRPCv0:
		ag.jsonrpc0.ServeHTTP(w, r)
	case strings.HasPrefix(p, RESTPath+"/"):
		ag.rest.ServeHTTP(w, r)
	default:
		http.NotFound(w, r)
	}
}

// maxBody bounds one request: a message in words is short, and a file
// part is refused anyway; a 1 MB message still reaches the executor, which
// says what is wrong with it.
const maxBody = 2 << 20

// callerInterceptor hands the caller auth identified to the executor and
// to the task store, which keeps each caller's tasks to themselves.
type callerInterceptor struct {
	a2asrv.PassthroughCallInterceptor
}

const principalAttr = "registry_principal"

func (callerInterceptor) Before(ctx context.Context, cc *a2asrv.CallContext, _ *a2asrv.Request) (context.Context, any, error) {
	p := auth.FromContext(ctx)
	name := p.Subject
	if name == "" {
		// Anonymous callers (and development mode) share one name: task
		// ids are unguessable UUIDs.
		name = "anonymous"
	}
	cc.User = &a2asrv.User{Name: name, Authenticated: p.SignedIn(), Attributes: map[string]any{principalAttr: p}}
	return ctx, nil, nil
}

// scopeOf is the scope of the caller of ec.
func (ag *Agent) scopeOf(ec *a2asrv.ExecutorContext) catalog.Scope {
	if ag.opts.Open {
		return catalog.ScopeAll
	}
	if ec.User != nil {
		if p, ok := ec.User.Attributes[principalAttr].(auth.Principal); ok {
			return auth.ScopeOf(p)
		}
	}
	return catalog.Scope{}
}

// conversations remembers the last search of each context, so follow-ups
// narrow it; bounded in number and idle time.
type conversations struct {
	mu  sync.Mutex
	now func() time.Time
	m   map[string]conversation
}

type conversation struct {
	owner string
	last  reading
	at    time.Time
}

func newConversations(now func() time.Time) *conversations {
	return &conversations{now: now, m: map[string]conversation{}}
}

func (c *conversations) get(contextID, owner string) (reading, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cv, ok := c.m[contextID]
	if !ok || cv.owner != owner || c.now().Sub(cv.at) > conversationIdle {
		return reading{}, false
	}
	return cv.last, true
}

func (c *conversations) put(contextID, owner string, r reading) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if _, ok := c.m[contextID]; !ok && len(c.m) >= maxConversations {
		// Forget the idle ones; if none are, the oldest.
		oldest, oldestAt := "", now
		for id, cv := range c.m {
			if now.Sub(cv.at) > conversationIdle {
				delete(c.m, id)
			} else if cv.at.Before(oldestAt) {
				oldest, oldestAt = id, cv.at
			}
		}
		if len(c.m) >= maxConversations {
			delete(c.m, oldest)
		}
	}
	c.m[contextID] = conversation{owner: owner, last: r, at: now}
}
