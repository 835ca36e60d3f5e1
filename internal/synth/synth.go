// Package synth generates a deterministic synthetic catalog of A2A agent
// cards for benchmarks: the registry's search over 100,000 agents, and a fleet
// server that lets the crawler fetch many distinct cards.
//
// Card i of a Generator depends only on the seed and i (each card draws from
// its own PCG stream), so workers can generate any slice of the catalog in any
// order and get the same bytes. Cards are written straight to JSON bytes,
// without encoding/json, in 10–20 µs each.
//
// # Distribution
//
// The shares below are the design targets; Generator.Vocabulary measures the
// real ones on a sample.
//
//   - Card shape: 20% v0.2 (`url` only, no `protocolVersion`), 40% v0.3
//     (`protocolVersion` "0.3.0", `url`, `preferredTransport`,
//     `additionalInterfaces`, OpenAPI-style `securitySchemes` + `security`),
//     35% v1.0 (`supportedInterfaces`, proto-style `securitySchemes` +
//     `securityRequirements`), 5% mixed (the v0.3 fields, `supportedInterfaces`
//     for both "1.0" and "0.3", OpenAPI-style schemes with both `security`
//     and `securityRequirements`, as a v1.0 server with the a2a-go v0.3
//     compatibility layer serves them).
//   - Interfaces: JSONRPC at https://<host>/a2a/v1 on 97% of cards; GRPC
//     (/a2a/grpc) on ~24%, HTTP+JSON (/a2a/json) on ~30%. v0.2 cards only have
//     their `url`. Every URL on a card is https on the card's own host.
//   - Security: none 15%, apiKey 25%, http bearer 25%, oauth2 20% (client
//     credentials or authorization code), openIdConnect 10%, mutualTLS 5%;
//     12% of secured cards offer a second scheme as an alternative. A fifth
//     of secured v0.2 cards use the 0.1-era `authentication` object instead;
//     a quarter of v1.0 cards write requirement scopes as plain arrays (as the
//     Go SDK does) instead of the proto `{"list":[…]}` form.
//   - Skills: 1 + Binomial(9, 4/9) per card, so 1–10 with mean 5 (100k cards
//     ≈ 500k skills). Each comes from a domain template (finance, invoices,
//     travel, code, legal, health, retail, support, translation, analytics,
//     images, audio, HR, logistics, security, devops, marketing, education,
//     sales, insurance, research, productivity): agents have a primary domain
//     and, 25% of the time, a secondary one.
//   - Tags: 1–6 per skill (mean 3.5) from a vocabulary of ~2,400. The first
//     comes from the skill template; each further tag is drawn 40% of the
//     time from 50 generic tags (Zipf, p ∝ 1/(rank+4)), so "search", "data"
//     and "text" are on 25–35% of cards, otherwise from the domain's own
//     list of ~110 (Zipf, p ∝ 1/(rank+1)^1.1), which makes the long tail.
//   - Words: descriptions combine domain phrases, so words such as "invoice",
//     "translate", "pdf" and "kubernetes" occur in 3–5% of cards, narrower
//     ones in less, generic ones ("json", "email") in a third or more. One
//     card in ~500 mentions one of 20 rare words, each in about 0.01% of
//     cards (about 10 agents per 100k).
//   - Providers: 90% of cards name one of ~3,000 organizations, Zipf
//     (p ∝ 1/(rank+2)^1.05); some names are non-ASCII.
//   - Media types: card defaults are text/plain + application/json on ~60% of
//     cards, otherwise one of them, the informal "text", or a third type. 40%
//     of skills override their modes with the template's realistic set
//     (application/pdf, image/png, audio/mpeg, text/csv, the xlsx type, …).
//   - Examples: 0–3 per skill. Signatures: 2% of cards carry one dummy JWS
//     (well formed, never verifiable). Cards average 2.8 KB (5th–95th
//     percentile 1.8–3.9 KB, largest under 6 KB).
package synth

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"sync"

	"github.com/a2aregistry/registry/internal/card"
)

// Card shapes, bindings and security scheme types, as the card package
// names them (strings here, for map keys and comparisons).
const (
	ShapeV02   = string(card.ShapeV02)
	ShapeV03   = string(card.ShapeV03)
	ShapeV10   = string(card.ShapeV10)
	ShapeMixed = string(card.ShapeMixed)

	BindingJSONRPC  = card.BindingJSONRPC
	BindingGRPC     = card.BindingGRPC
	BindingHTTPJSON = card.BindingHTTPJSON

	SchemeAPIKey        = card.SchemeAPIKey
	SchemeHTTP          = card.SchemeHTTP
	SchemeOAuth2        = card.SchemeOAuth2
	SchemeOpenIDConnect = card.SchemeOpenIDConnect
	SchemeMutualTLS     = card.SchemeMutualTLS
)

// Generator produces the cards of one synthetic catalog. It is safe for
// concurrent use.
type Generator struct {
	seed int64
	t    *tables

	vocabOnce sync.Once
	vocab     Vocab
}

// New returns the generator of the catalog identified by seed.
func New(seed int64) *Generator {
	return &Generator{seed: seed, t: sharedTables()}
}

// Card returns the JSON bytes of agent number i.
func (g *Generator) Card(i int) []byte {
	a := g.agent(i)
	return a.appendJSON(make([]byte, 0, 4<<10))
}

// Host returns the DNS name agent i lives on, e.g. agent-00042.fleet.example
// (at least five digits; a negative i gives agent-m00007…). Every URL on card
// i is https on this host, so one fleet server answering for *.fleet.example
// can serve the whole catalog.
func (g *Generator) Host(i int) string {
	return string(appendHost(make([]byte, 0, 32), i))
}

// CardURL returns the URL of agent i's card at the v0.3/v1.0 well-known path.
func (g *Generator) CardURL(i int) string {
	b := append(make([]byte, 0, 64), "https://"...)
	b = appendHost(b, i)
	return string(append(b, "/.well-known/agent-card.json"...))
}

func appendHost(b []byte, i int) []byte {
	b = append(b, "agent-"...)
	if i < 0 {
		b = append(b, 'm')
		i = -i
	}
	for d := 10000; d > 1 && i < d; d /= 10 {
		b = append(b, '0')
	}
	b = strconv.AppendUint(b, uint64(i), 10)
	return append(b, ".fleet.example"...)
}

// rng returns card i's own random stream. i goes through SplitMix64 so
// neighbouring cards do not start from neighbouring PCG states.
func (g *Generator) rng(i int) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(g.seed), splitMix64(uint64(i))))
}

func splitMix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// agent is a card before rendering; Vocabulary measures it directly.
type agent struct {
	host        string
	shape       string
	name        string
	description string
	version     string
	provider    string
	iconURL     bool
	docURL      bool

	streaming, push, history, extended bool
	extension                          int // 0 none, else index+1 into extensionNames

	bindings []string // preferred first
	schemes  []scheme
	// legacyAuth writes v0.2 security as the 0.1 `authentication` object.
	legacyAuth bool
	// plainScopes writes v1.0 requirement scopes as arrays (Go SDK form).
	plainScopes bool

	defaultIn, defaultOut []string
	skills                []skill
	signature             []byte // nil when unsigned
}

type scheme struct {
	name string
	kind string // Scheme* constant; bearer is SchemeHTTP
	// oauth2: authorization code flow instead of client credentials;
	// apiKey: key in a query parameter instead of a header.
	alt bool
}

type skill struct {
	id, name, desc string
	tags           []string
	examples       []string
	in, out        []string // nil inherits the card default
	writeScope     bool     // demands the oauth "write" scope
}

var extensionNames = []string{"traceability", "timestamps", "cost-reporting", "human-in-the-loop"}

var genericExamples = []string{"What can you do?", "Show me an example request", "Help me get started"}

var skillVariants = []string{"batch", "EU", "realtime", "v2", "lite", "pro"}

func (g *Generator) agent(i int) *agent {
	t := g.t
	r := g.rng(i)
	a := &agent{host: g.Host(i)}

	switch x := r.Float64(); {
	case x < 0.20:
		a.shape = ShapeV02
	case x < 0.60:
		a.shape = ShapeV03
	case x < 0.95:
		a.shape = ShapeV10
	default:
		a.shape = ShapeMixed
	}

	primary := &domains[t.domains.draw(r)]
	var secondary *domain
	if r.Float64() < 0.25 {
		secondary = &domains[t.domains.draw(r)]
		if secondary == primary {
			secondary = nil
		}
	}

	var o org
	if r.Float64() < 0.90 {
		o = t.orgs[t.orgDist.draw(r)]
		a.provider = o.name
	}
	a.name = agentName(r, primary, o)
	a.description = agentDescription(r, a.name, primary, secondary)
	a.version = strconv.Itoa(r.IntN(4)) + "." + strconv.Itoa(r.IntN(21)) + "." + strconv.Itoa(r.IntN(10))
	a.iconURL = r.Float64() < 0.30
	a.docURL = r.Float64() < 0.50
	a.streaming = r.Float64() < 0.55
	a.push = r.Float64() < 0.20
	a.history = a.shape != ShapeV10 && r.Float64() < 0.25
	a.extended = a.shape != ShapeV02 && r.Float64() < 0.10
	if r.Float64() < 0.06 {
		a.extension = 1 + r.IntN(len(extensionNames))
	}

	a.bindings = drawBindings(r, a.shape)
	a.schemes = drawSchemes(r)
	a.legacyAuth = a.shape == ShapeV02 && len(a.schemes) > 0 && r.Float64() < 0.20
	a.plainScopes = a.shape == ShapeV10 && r.Float64() < 0.25

	a.defaultIn = pick(r, defaultInputs)
	a.defaultOut = pick(r, defaultOutputs)

	oauth := slices.ContainsFunc(a.schemes, func(s scheme) bool { return s.kind == SchemeOAuth2 }) && !a.legacyAuth
	n := 1
	for range 9 {
		if r.Float64() < 4.0/9.0 {
			n++
		}
	}
	a.skills = make([]skill, 0, n)
	for range n {
		d := primary
		if secondary != nil && r.Float64() < 0.35 {
			d = secondary
		}
		a.skills = append(a.skills, t.drawSkill(r, d, a.skills, oauth))
	}
	if r.Float64() < 0.02 {
		a.signature = make([]byte, 64)
		for k := range a.signature {
			a.signature[k] = byte(r.Uint32())
		}
	}
	return a
}

func agentName(r *rand.Rand, d *domain, o org) string {
	name := d.titles[r.IntN(len(d.titles))] + " " + roles[r.IntN(len(roles))]
	if o.name != "" && r.Float64() < 0.40 {
		name = o.head + " " + name
	}
	return name
}

func agentDescription(r *rand.Rand, name string, d, second *domain) string {
	b := make([]byte, 0, 320)
	b = append(b, name...)
	b = append(b, ' ')
	first := r.IntN(len(d.blurbs))
	b = append(b, d.blurbs[first]...)
	if r.Float64() < 0.5 {
		other := (first + 1 + r.IntN(len(d.blurbs)-1)) % len(d.blurbs)
		b = append(b, " and "...)
		b = append(b, d.blurbs[other]...)
	}
	b = append(b, '.')
	if second != nil {
		b = append(b, " It also "...)
		b = append(b, second.blurbs[r.IntN(len(second.blurbs))]...)
		b = append(b, '.')
	}
	if tail := cardTails[r.IntN(len(cardTails))]; tail != "" {
		b = append(b, ' ')
		b = append(b, tail...)
	}
	if r.Float64() < float64(len(rareWords))*rareWordShare {
		b = append(b, " Specialist support for "...)
		b = append(b, rareWords[r.IntN(len(rareWords))]...)
		b = append(b, " projects."...)
	}
	return string(b)
}

func drawBindings(r *rand.Rand, shape string) []string {
	if shape == ShapeV02 {
		return []string{BindingJSONRPC}
	}
	jsonrpc := r.Float64() < 0.97
	grpc := r.Float64() < 0.30
	rest := r.Float64() < 0.37
	if !jsonrpc && !grpc {
		rest = true
	}
	b := make([]string, 0, 3)
	// Most agents prefer JSON-RPC; those without it prefer REST.
	if jsonrpc {
		b = append(b, BindingJSONRPC)
	}
	if rest && (!jsonrpc || r.Float64() < 0.5) {
		b = append(b, BindingHTTPJSON)
		rest = false
	}
	if grpc {
		b = append(b, BindingGRPC)
	}
	if rest {
		b = append(b, BindingHTTPJSON)
	}
	return b
}

var schemeKinds = []weighted[string]{
	{0.15, ""},
	{0.25, SchemeAPIKey},
	{0.25, SchemeHTTP},
	{0.20, SchemeOAuth2},
	{0.10, SchemeOpenIDConnect},
	{0.05, SchemeMutualTLS},
}

var schemeNames = map[string][2]string{
	SchemeAPIKey:        {"apiKey", "api_key"},
	SchemeHTTP:          {"bearer", "bearerAuth"},
	SchemeOAuth2:        {"oauth", "oauth2"},
	SchemeOpenIDConnect: {"oidc", "openIdConnect"},
	SchemeMutualTLS:     {"mtls", "mutualTLS"},
}

func drawSchemes(r *rand.Rand) []scheme {
	kind := pick(r, schemeKinds)
	if kind == "" {
		return nil
	}
	out := []scheme{newScheme(r, kind)}
	if r.Float64() < 0.12 {
		alt := pick(r, schemeKinds[1:4])
		if alt != kind {
			out = append(out, newScheme(r, alt))
		}
	}
	return out
}

func newScheme(r *rand.Rand, kind string) scheme {
	return scheme{name: schemeNames[kind][r.IntN(2)], kind: kind, alt: r.Float64() < 0.35}
}

func (t *tables) drawSkill(r *rand.Rand, d *domain, have []skill, oauth bool) skill {
	tpl := &d.skills[r.IntN(len(d.skills))]
	s := skill{id: tpl.id, name: tpl.name}
	for attempt := 0; slices.ContainsFunc(have, func(h skill) bool { return h.id == s.id }); attempt++ {
		v := skillVariants[r.IntN(len(skillVariants))]
		if attempt >= 2 {
			v += " " + strconv.Itoa(len(have)+1)
		}
		s.id = tpl.id + "-" + slug(v)
		s.name = tpl.name + " (" + v + ")"
	}
	// Two or three distinct tail sentences: real skill descriptions run to
	// a few sentences, which puts cards at the 2–6 KB the benchmark wants.
	nTails := 2
	if r.Float64() < 0.4 {
		nTails = 3
	}
	first := r.IntN(len(descriptionTails))
	desc := make([]byte, 0, 320)
	desc = append(desc, tpl.desc...)
	for k := range nTails {
		desc = append(desc, descriptionTails[(first+k*5)%len(descriptionTails)]...)
	}
	s.desc = string(desc)

	nt := 1
	for range 5 {
		if r.Float64() < 0.5 {
			nt++
		}
	}
	s.tags = make([]string, 1, nt)
	s.tags[0] = tpl.tags[r.IntN(len(tpl.tags))]
	dt := t.domainTags[d.key]
	for range nt - 1 {
		var tag string
		for range 3 { // a few retries keep duplicates rare without looping forever
			if r.Float64() < 0.4 {
				tag = t.tags[t.globalTags.draw(r)]
			} else {
				tag = t.tags[dt.ids[dt.dist.draw(r)]]
			}
			if !slices.Contains(s.tags, tag) {
				s.tags = append(s.tags, tag)
				break
			}
		}
	}

	if k := r.IntN(4); k > 0 {
		s.examples = make([]string, 0, k)
		s.examples = append(s.examples, tpl.examples[:min(k, len(tpl.examples))]...)
		for len(s.examples) < k {
			s.examples = append(s.examples, genericExamples[r.IntN(len(genericExamples))])
		}
	}

	if r.Float64() < 0.40 {
		switch x := r.Float64(); {
		case x < 0.6:
			s.in, s.out = modesOr(r, tpl.in), modesOr(r, tpl.out)
		case x < 0.8:
			s.in = modesOr(r, tpl.in)
		default:
			s.out = modesOr(r, tpl.out)
		}
	}
	s.writeScope = oauth && r.Float64() < 0.15
	return s
}

// modesOr returns the template's modes, or one or two generic ones.
func modesOr(r *rand.Rand, m []string) []string {
	if m != nil {
		return m
	}
	a := pick(r, genericModes)
	if b := pick(r, genericModes); b != a && r.Float64() < 0.5 {
		return []string{a, b}
	}
	return []string{a}
}

func slug(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			b = append(b, c)
		case c >= 'A' && c <= 'Z':
			b = append(b, c+'a'-'A')
		case len(b) > 0 && b[len(b)-1] != '-':
			b = append(b, '-')
		}
	}
	for len(b) > 0 && b[len(b)-1] == '-' {
		b = b[:len(b)-1]
	}
	return string(b)
}

func pick[T any](r *rand.Rand, ws []weighted[T]) T {
	var total float64
	for _, w := range ws {
		total += w.w
	}
	x := r.Float64() * total
	for _, w := range ws {
		if x < w.w {
			return w.v
		}
		x -= w.w
	}
	return ws[len(ws)-1].v
}

// dist draws indices 0..n-1 from a fixed discrete distribution by binary
// search over its cumulative weights.
type dist struct {
	cdf []float64
}

func newDist(weights []float64) dist {
	cdf := make([]float64, len(weights))
	var sum float64
	for i, w := range weights {
		sum += w
		cdf[i] = sum
	}
	for i := range cdf {
		cdf[i] /= sum
	}
	return dist{cdf: cdf}
}

// zipf returns weights ∝ 1/(k+v)^s for ranks k = 1..n.
func zipf(n int, s, v float64) []float64 {
	w := make([]float64, n)
	for k := range w {
		w[k] = 1 / math.Pow(float64(k+1)+v, s)
	}
	return w
}

func (d dist) draw(r *rand.Rand) int {
	i := sort.SearchFloat64s(d.cdf, r.Float64())
	return min(i, len(d.cdf)-1)
}

type org struct {
	name string
	head string
}

type domainTagList struct {
	ids  []int // indices into tables.tags, most common first
	dist dist
}

// tables is the seed-independent vocabulary in sampling form.
type tables struct {
	tags       []string // genericTags first, then domain tags interleaved
	globalTags dist     // over genericTags only
	domainTags map[string]domainTagList
	domains    dist
	orgs       []org
	orgDist    dist
}

var sharedTables = sync.OnceValue(buildTables)

func buildTables() *tables {
	t := &tables{domainTags: make(map[string]domainTagList, len(domains))}
	index := make(map[string]int, 2048)
	add := func(tag string) int {
		if i, ok := index[tag]; ok {
			return i
		}
		index[tag] = len(t.tags)
		t.tags = append(t.tags, tag)
		return len(t.tags) - 1
	}
	for _, tag := range genericTags {
		add(tag)
	}
	// Hand-picked domain tags rank above compounds; interleaving the domains
	// keeps any one domain from owning the head of the global ranking.
	lists := make([][]string, len(domains))
	for i, d := range domains {
		l := slices.Clone(d.tags)
		for _, s := range d.skills {
			for _, tag := range s.tags {
				if !slices.Contains(l, tag) {
					l = append(l, tag)
				}
			}
		}
		lists[i] = l
	}
	compounds := make([][]string, len(domains))
	for i, d := range domains {
		for _, q := range tagQualifiers {
			for _, n := range d.nouns {
				compounds[i] = append(compounds[i], n+"-"+q)
			}
		}
	}
	ids := make([][]int, len(domains))
	for _, src := range [][][]string{lists, compounds} {
		for k := 0; ; k++ {
			more := false
			for i := range domains {
				if k < len(src[i]) {
					more = true
					ids[i] = append(ids[i], add(src[i][k]))
				}
			}
			if !more {
				break
			}
		}
	}
	t.globalTags = newDist(zipf(len(genericTags), 1.0, 4))
	weights := make([]float64, len(domains))
	for i, d := range domains {
		t.domainTags[d.key] = domainTagList{ids: ids[i], dist: newDist(zipf(len(ids[i]), 1.1, 1))}
		weights[i] = d.weight
	}
	t.domains = newDist(weights)

	// A fixed permutation spreads the heads over the Zipf ranking so the most
	// common providers are not all "Acme …".
	perm := rand.New(rand.NewPCG(0x5e, 0xed)).Perm(len(orgHeads) * len(orgTails))
	t.orgs = make([]org, len(perm))
	for i, p := range perm {
		h, tl := orgHeads[p/len(orgTails)], orgTails[p%len(orgTails)]
		t.orgs[i] = org{name: h + " " + tl, head: h}
	}
	t.orgDist = newDist(zipf(len(t.orgs), 1.05, 2))
	return t
}
