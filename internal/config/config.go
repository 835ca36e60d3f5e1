// Package config holds the registry's typed settings, read from command-line
// flags and REGISTRY_* environment variables and validated before anything
// starts. There is no global instance: each subcommand builds its own
// flag.FlagSet, loads a Config and passes it down explicitly.
package config

import (
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// ErrInvalid marks every validation failure; the message names the setting.
var ErrInvalid = errors.New("invalid configuration")

// Log formats.
const (
	LogFormatText = "text"
	LogFormatJSON = "json"
)

// Defaults.
const (
	DefaultListen          = "127.0.0.1:8080"
	DefaultDB              = "sqlite:./data/registry.db"
	DefaultFetchTimeout    = 10 * time.Second
	DefaultMaxCardBytes    = 1 << 20
	DefaultShutdownTimeout = 15 * time.Second

	DefaultCrawlConcurrency  = 16
	DefaultCrawlPerHost      = 2
	DefaultCrawlMinInterval  = 5 * time.Minute
	DefaultCrawlMaxInterval  = 24 * time.Hour
	DefaultCrawlDownAfter    = 3
	DefaultFetchLogRetention = 30 * 24 * time.Hour

	DefaultRunRetention         = 30 * 24 * time.Hour
	DefaultRunMaxDuration       = 5 * time.Minute
	DefaultRunMaxMessageBytes   = 4 << 20
	DefaultRunMaxFileBytes      = 2 << 20
	DefaultRunMaxConcurrent     = 64
	DefaultRunMaxConcurrentUser = 4
	DefaultRunRatePerMinute     = 30

	DefaultOIDCRolesClaim = "groups"
	DefaultSessionIdle    = 8 * time.Hour
	DefaultSessionMax     = 7 * 24 * time.Hour
)

// Config is every setting of the registry, by the part of the registry
// that reads it, so each part is handed its own settings and nothing else.
// Default returns a valid one.
type Config struct {
	Server   Server
	Log      Log
	Storage  Database
	Outbound Outbound
	Listing  Listing
	Crawl    Crawl
	Verify   Verify
	Sources  Sources
	Auth     Auth
	Runs     Runs
	Doors    Doors
	ARD      ARD
	// Embeddings is search's optional semantic layer.
	Embeddings Embeddings
}

// Embeddings defaults (docs/operations.md).
const (
	DefaultEmbeddingsBatchSize    = 32
	DefaultEmbeddingsTimeout      = 30 * time.Second
	DefaultEmbeddingsQueryTimeout = time.Second
	MaxEmbeddingsDimension        = 8192
	// MaxEmbeddingsPrefix bounds the instruction prefixes: they are
	// instructions of a few words, not documents.
	MaxEmbeddingsPrefix = 256
)

// Embeddings is the semantic layer of search: an OpenAI-compatible
// embeddings API (POST {URL}/embeddings) that embeds each agent's text and
// each search's, reached through the outbound client. With no URL search
// is lexical only.
type Embeddings struct {
	URL       string
	Model     string
	Dimension int
	// APIKey or APIKeyFile (not both) is sent as a bearer token.
	APIKey     Secret
	APIKeyFile string
	// BatchSize texts go in one request of agents' texts, each bounded by
	// Timeout; a search's text by QueryTimeout.
	BatchSize    int
	Timeout      time.Duration
	QueryTimeout time.Duration
	// LexicalWeight and VectorWeight weigh the two rankings in the fused
	// one; MinSimilarity is the least cosine similarity at which an
	// agent is found by its vector alone.
	LexicalWeight, VectorWeight float64
	MinSimilarity               float64
	// QueryPrefix and DocumentPrefix go before a search's text and an
	// agent's text sent to the API, for models trained with such
	// instructions (e5, nomic-embed-text). Another DocumentPrefix
	// re-embeds every agent, as another model does.
	QueryPrefix, DocumentPrefix string
}

// Enabled tells whether the semantic layer is configured.
func (e Embeddings) Enabled() bool { return e.URL != "" }

// Key returns the API key, read from APIKeyFile when that is set.
func (e Embeddings) Key() (Secret, error) {
	if e.APIKeyFile == "" {
		return e.APIKey, nil
	}
	b, err := os.ReadFile(e.APIKeyFile)
	if err != nil {
		return "", fmt.Errorf("reading embeddings-api-key-file: %w", err)
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", fmt.Errorf("%w: embeddings-api-key-file %s is empty", ErrInvalid, e.APIKeyFile)
	}
	return Secret(s), nil
}

func (e Embeddings) validate() error {
	if !e.Enabled() {
		if e.Model != "" || e.Dimension != 0 || e.APIKey != "" || e.APIKeyFile != "" || e.QueryPrefix != "" || e.DocumentPrefix != "" {
			return fmt.Errorf("%w: embeddings-model, -dimension, -api-key and the prefixes need embeddings-url", ErrInvalid)
		}
		return nil
	}
	u, err := url.Parse(e.URL)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("%w: embeddings-url %q: want an http or https URL without credentials, query or fragment", ErrInvalid, e.URL)
	case strings.TrimSpace(e.Model) == "":
		return fmt.Errorf("%w: embeddings-model is required with embeddings-url", ErrInvalid)
	case strings.ContainsFunc(e.Model, unicode.IsControl):
		// The catalog names a model's vectors by its name and the
		// document prefix on a second line (embeddings.Service.Space).
		return fmt.Errorf("%w: embeddings-model %q has a control character", ErrInvalid, e.Model)
	case len(e.QueryPrefix) > MaxEmbeddingsPrefix || len(e.DocumentPrefix) > MaxEmbeddingsPrefix:
		return fmt.Errorf("%w: embeddings-query-prefix and -document-prefix are at most %d bytes", ErrInvalid, MaxEmbeddingsPrefix)
	case e.Dimension < 1 || e.Dimension > MaxEmbeddingsDimension:
		return fmt.Errorf("%w: embeddings-dimension must be 1 to %d, got %d", ErrInvalid, MaxEmbeddingsDimension, e.Dimension)
	case e.APIKey != "" && e.APIKeyFile != "":
		return fmt.Errorf("%w: embeddings-api-key and embeddings-api-key-file are exclusive", ErrInvalid)
	case e.BatchSize < 1 || e.BatchSize > 2048:
		return fmt.Errorf("%w: embeddings-batch-size must be 1 to 2048, got %d", ErrInvalid, e.BatchSize)
	case e.Timeout <= 0 || e.QueryTimeout <= 0:
		return fmt.Errorf("%w: embeddings-timeout and embeddings-query-timeout must be positive", ErrInvalid)
	case e.LexicalWeight < 0 || e.VectorWeight < 0 || e.LexicalWeight+e.VectorWeight == 0:
		return fmt.Errorf("%w: embeddings-lexical-weight and embeddings-vector-weight must not be negative, nor both zero", ErrInvalid)
	case e.MinSimilarity < -1 || e.MinSimilarity > 1:
		return fmt.Errorf("%w: embeddings-min-similarity must be -1 to 1, got %v", ErrInvalid, e.MinSimilarity)
	}
	return nil
}

// Doors turns on the registry's protocol doors besides the JSON API and
// the console: the MCP server at /mcp and the registry as an A2A agent
// (its card at /.well-known/agent-card.json).
type Doors struct {
	MCP   bool
	Agent bool
	// SigningKey is a PEM private key file the registry signs its own
	// agent card with; empty: the card is not signed.
	SigningKey string
}

// ARD publish modes (--ard-publish).
const (
	ARDPublishNone     = "none"
	ARDPublishApproved = "approved"
	// ARDPublishCollectionPrefix starts "collection:NAME".
	ARDPublishCollectionPrefix = "collection:"
)

// ARD is what the registry publishes in its ARD manifest
// (/.well-known/ard.json): Publish is none (the registry itself only),
// approved (every approved agent the reader sees) or collection:NAME (the
// members of collection NAME the reader sees).
type ARD struct {
	Publish string
}

// PublishedCollection is the collection of collection:NAME, "" otherwise.
func (a ARD) PublishedCollection() string {
	name, _ := strings.CutPrefix(a.Publish, ARDPublishCollectionPrefix)
	if name == a.Publish {
		return ""
	}
	return name
}

func (a ARD) validate() error {
	switch {
	case a.Publish == ARDPublishNone, a.Publish == ARDPublishApproved:
		return nil
	case strings.HasPrefix(a.Publish, ARDPublishCollectionPrefix) && strings.TrimSpace(a.PublishedCollection()) != "":
		return nil
	}
	return fmt.Errorf("%w: ard-publish %q: want none, approved or collection:NAME", ErrInvalid, a.Publish)
}

// Server is how the HTTP server listens and which names it answers to;
// the console and the API share it.
type Server struct {
	// Listen is the HTTP listen address, host:port.
	Listen string
	// InsecureAllowRemote lets the server listen on a non-loopback address
	// although no sign-in is configured (DESIGN.md "Access").
	InsecureAllowRemote bool
	// PublicURL is the address users reach the registry at, when it is
	// not the listen address (behind a proxy); its host is accepted in
	// Host headers and its origin in Origin headers.
	PublicURL string
	// AllowedHosts are further host names the server answers to; every
	// other Host header is refused (DNS rebinding, see AcceptedHosts).
	AllowedHosts []string
	// ShutdownTimeout bounds the graceful drain of in-flight requests.
	ShutdownTimeout time.Duration
}

// Log is where and how the registry logs.
type Log struct {
	Level  slog.Level
	Format string
}

// Database is the catalog's database.
type Database struct {
	// DB is the catalog DSN: "sqlite:PATH", a bare SQLite path, or a
	// postgres:// / postgresql:// URL.
	DB string
	// ImportExamples imports the shipped example cards when the catalog is
	// empty at start-up, so a first run has something to search.
	ImportExamples bool
	// SecretKeyFile holds the keys that encrypt the secrets the catalog
	// stores (see SecretKeys); empty stores them unencrypted.
	SecretKeyFile string
}

// secretKeySize is the length of a key of SecretKeyFile.
const secretKeySize = 32

// SecretKeys reads SecretKeyFile: one key a line, 64 hex digits (32
// bytes), blank lines and lines starting with # ignored. The first key
// encrypts; the others only decrypt, which is how a key is rotated. No
// file is no keys.
func (d Database) SecretKeys() ([][]byte, error) {
	if d.SecretKeyFile == "" {
		return nil, nil
	}
	b, err := os.ReadFile(d.SecretKeyFile)
	if err != nil {
		return nil, fmt.Errorf("reading secret-key-file: %w", err)
	}
	var keys [][]byte
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, err := hex.DecodeString(line)
		if err != nil || len(k) != secretKeySize {
			// The line is a key: never repeat it in the error.
			return nil, fmt.Errorf("%w: secret-key-file %s line %d is not %d hex-encoded bytes", ErrInvalid, d.SecretKeyFile, i+1, secretKeySize)
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: secret-key-file %s holds no key", ErrInvalid, d.SecretKeyFile)
	}
	return keys, nil
}

// Outbound bounds every request the registry makes: card fetches, JWKS,
// probes and test runs.
type Outbound struct {
	// AllowNetworks are private ranges the outbound client may reach; all
	// private, loopback and link-local addresses are refused otherwise.
	AllowNetworks []netip.Prefix
	// FetchTimeout bounds one outbound fetch, connection to last byte.
	FetchTimeout time.Duration
	// MaxCardBytes caps the size of one agent card, fetched or imported.
	MaxCardBytes int64
	// Resolver looks up the names outbound requests need; nil is the
	// system's. No flag sets it: tests put an in-process resolver here to
	// see every name the registry looks up.
	Resolver *net.Resolver
}

// Listing is the curation policy for new and changed agents.
type Listing struct {
	// RequireApproval starts new agents pending; ReapproveOnChange sends
	// an approved agent back to pending when its card changes.
	RequireApproval   bool
	ReapproveOnChange bool
	// Policy is the admission policy file (YAML rules in CEL, see
	// docs/security.md); empty: no policy.
	Policy string
}

// Crawl is the crawler's schedule and limits.
type Crawl struct {
	// Enabled re-checks registered agents on their schedule.
	Enabled bool
	// Seeds is a file of agent URLs or origins to register (optional).
	Seeds             string
	Concurrency       int
	PerHost           int
	MinInterval       time.Duration
	MaxInterval       time.Duration
	DownAfter         int
	FetchLogRetention time.Duration
	// Lease is how long a claim keeps other replicas off an agent;
	// zero: the crawler's default, or 4× FetchTimeout if longer.
	Lease time.Duration
	// Instance names this replica in crawl leases; empty: the host name.
	Instance string
}

// Sources are the manifests and origins the registry reads many agents
// from (docs/sources.md).
type Sources struct {
	Interval   time.Duration
	MaxEntries int
	MaxBytes   int64
	// Trust is what a publisher-authority mismatch does (ARD §4.5.1):
	// "reject", "flag" or "off".
	Trust string
	// FederationMaxEntries caps what one sync of a peer registry reads;
	// FederationSyncTimeout is the time limit of reading its pages.
	FederationMaxEntries  int
	FederationSyncTimeout time.Duration
}

// Source defaults.
const (
	DefaultSourceInterval   = time.Hour
	DefaultSourceMaxEntries = 10_000
	DefaultSourceMaxBytes   = 8 << 20
	DefaultSourceTrust      = "flag"
	// DefaultFederationMaxEntries is a peer of 100,000 agents read in one
	// sync (the first-sync target of docs/sources.md#federation).
	DefaultFederationMaxEntries  = 100_000
	DefaultFederationSyncTimeout = 5 * time.Minute
)

func (s Sources) validate() error {
	switch {
	case s.Interval < time.Minute:
		return fmt.Errorf("%w: source-interval must be at least 1m, got %v", ErrInvalid, s.Interval)
	case s.MaxEntries < 1 || s.MaxEntries > 1_000_000:
		return fmt.Errorf("%w: source-max-entries must be 1 to 1000000, got %d", ErrInvalid, s.MaxEntries)
	case s.MaxBytes < 1<<10:
		return fmt.Errorf("%w: source-max-bytes must be at least 1KiB, got %d", ErrInvalid, s.MaxBytes)
	case s.FederationMaxEntries < 1 || s.FederationMaxEntries > 10_000_000:
		return fmt.Errorf("%w: federation-max-entries must be 1 to 10000000, got %d", ErrInvalid, s.FederationMaxEntries)
	case s.FederationSyncTimeout < time.Second:
		return fmt.Errorf("%w: federation-sync-timeout must be at least 1s, got %v", ErrInvalid, s.FederationSyncTimeout)
	}
	switch s.Trust {
	case "reject", "flag", "off":
		return nil
	}
	return fmt.Errorf("%w: source-trust %q: want reject, flag or off", ErrInvalid, s.Trust)
}

// Verify is what the background verifier may reach.
type Verify struct {
	// Fetch lets the background verifier fetch what cards name: JWKS
	// from jku, OpenID discovery documents, and (with Probes) the
	// declared interfaces. Off, signatures verify against pinned keys only.
	Fetch bool
	// Probes makes the background verifier probe every declared
	// interface live, not only check signatures and security schemes.
	Probes bool
}

// Auth is sign-in (see docs/security.md). With no Issuer the registry
// runs in development mode: the local user is admin, loopback only.
type Auth struct {
	Issuer   string
	ClientID string
	// ClientSecret or ClientSecretFile (not both) authenticate the
	// registry to the provider; neither for a public client (PKCE).
	ClientSecret     Secret
	ClientSecretFile string
	// Scopes are requested at sign-in; "openid" is always among them.
	Scopes []string
	// RolesClaim names the token claim (a string or a list of strings)
	// whose values Roles map to roles.
	RolesClaim string
	Roles      []RoleClaim
	// GroupsClaim names the claim whose values are the caller's groups
	// (collection visibility); RolesClaim when empty.
	GroupsClaim string
	// DefaultRole is the role of a signed-in user no mapping matches,
	// RoleNone to refuse them.
	DefaultRole string
	// APIAudience is the audience bearer tokens must name. It must differ
	// from ClientID unless APIAcceptsClientID: tokens the provider issues
	// to the console's client at sign-in (the ID token, and the access
	// token with many providers) name the client id, and a token minted
	// for sign-in must not act as the user on the API, wherever it ends
	// up. With APIAcceptsClientID an empty APIAudience means the client id.
	APIAudience        string
	APIAcceptsClientID bool
	// AnonymousRole is the role of callers who are not signed in,
	// RoleNone by default.
	AnonymousRole string
	// SessionIdle ends a session unused this long; SessionMax ends any
	// session this long after sign-in.
	SessionIdle time.Duration
	SessionMax  time.Duration
}

// Runs limits test runs (the built-in A2A client,
// POST /api/v1/agents/{id}/runs and the console's Try it panel).
type Runs struct {
	// Retention is how long a run's transcript is kept.
	Retention         time.Duration
	MaxDuration       time.Duration
	MaxMessageBytes   int64
	MaxFileBytes      int64
	MaxConcurrent     int
	MaxConcurrentUser int
	RatePerMinute     int
	// PrivateAll withholds every run's transcript from all but its
	// tester and admins, not only those of runs made with credentials.
	PrivateAll bool
	// OAuthTokenHosts are hosts (host or host:port) whose token URLs may
	// receive a code an authorization URL on another origin issued, for
	// schemes that name no issuer metadata.
	OAuthTokenHosts []string
}

// RoleNone, as a default or anonymous role, grants nothing.
const RoleNone = "none"

// Roles are the role names, least to most (internal/auth's roles).
var Roles = []string{"viewer", "tester", "editor", "admin"}

// RoleClaim maps a value of the roles claim to a role.
type RoleClaim struct {
	Role  string
	Value string
}

// Secret is a setting that must never be printed or logged: every way of
// formatting it (fmt, slog, JSON) shows a placeholder. Reveal returns it.
type Secret string

const redacted = "[redacted]"

// Reveal returns the secret itself.
func (s Secret) Reveal() string { return string(s) }

func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redacted
}

// GoString keeps %#v from printing the secret.
func (s Secret) GoString() string { return `config.Secret("` + s.String() + `")` }

// LogValue keeps slog from printing the secret.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalText keeps encoders (JSON, YAML) from printing the secret.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// SignIn reports whether an OIDC provider is configured; without one the
// registry runs in development mode.
func (c Config) SignIn() bool { return c.Auth.SignIn() }

// SignIn reports whether an OIDC provider is configured.
func (a Auth) SignIn() bool { return a.Issuer != "" }

// ClientSecret returns the OIDC client secret, read from
// ClientSecretFile when that is set (surrounding white space trimmed:
// editors and `echo` add a newline).
func (a Auth) Secret() (Secret, error) {
	if a.ClientSecretFile == "" {
		return a.ClientSecret, nil
	}
	b, err := os.ReadFile(a.ClientSecretFile)
	if err != nil {
		return "", fmt.Errorf("reading oidc-client-secret-file: %w", err)
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", fmt.Errorf("%w: oidc-client-secret-file %s is empty", ErrInvalid, a.ClientSecretFile)
	}
	return Secret(s), nil
}

// Default returns the settings used when nothing is configured.
func Default() Config {
	return Config{
		Server:   Server{Listen: DefaultListen, ShutdownTimeout: DefaultShutdownTimeout},
		Doors:    Doors{MCP: true, Agent: true},
		Log:      Log{Level: slog.LevelInfo, Format: LogFormatText},
		Storage:  Database{DB: DefaultDB, ImportExamples: true},
		Outbound: Outbound{FetchTimeout: DefaultFetchTimeout, MaxCardBytes: DefaultMaxCardBytes},
		Auth: Auth{
			Scopes:        []string{"openid", "email", "profile"},
			RolesClaim:    DefaultOIDCRolesClaim,
			DefaultRole:   "viewer",
			AnonymousRole: RoleNone,
			SessionIdle:   DefaultSessionIdle,
			SessionMax:    DefaultSessionMax,
		},
		Crawl: Crawl{
			Enabled:           true,
			Concurrency:       DefaultCrawlConcurrency,
			PerHost:           DefaultCrawlPerHost,
			MinInterval:       DefaultCrawlMinInterval,
			MaxInterval:       DefaultCrawlMaxInterval,
			DownAfter:         DefaultCrawlDownAfter,
			FetchLogRetention: DefaultFetchLogRetention,
		},
		Verify: Verify{Fetch: true},
		ARD:    ARD{Publish: ARDPublishNone},
		Sources: Sources{Interval: DefaultSourceInterval, MaxEntries: DefaultSourceMaxEntries, MaxBytes: DefaultSourceMaxBytes,
			Trust: DefaultSourceTrust, FederationMaxEntries: DefaultFederationMaxEntries, FederationSyncTimeout: DefaultFederationSyncTimeout},
		Embeddings: Embeddings{
			BatchSize:     DefaultEmbeddingsBatchSize,
			Timeout:       DefaultEmbeddingsTimeout,
			QueryTimeout:  DefaultEmbeddingsQueryTimeout,
			LexicalWeight: 1,
			VectorWeight:  1,
		},
		Runs: Runs{
			Retention:         DefaultRunRetention,
			MaxDuration:       DefaultRunMaxDuration,
			MaxMessageBytes:   DefaultRunMaxMessageBytes,
			MaxFileBytes:      DefaultRunMaxFileBytes,
			MaxConcurrent:     DefaultRunMaxConcurrent,
			MaxConcurrentUser: DefaultRunMaxConcurrentUser,
			RatePerMinute:     DefaultRunRatePerMinute,
		},
	}
}

// defaultPublicURL is the public URL given, or with sign-in on and a
// loopback listen address, the listen address itself: a registry on
// this machine is reached where it listens, so the redirect URL
// ({public-url}/auth/callback) is known without asking. Elsewhere the
// address users reach may be a proxy's, which only the operator knows.
func (c Config) defaultPublicURL() string {
	if c.Server.PublicURL != "" || !c.SignIn() {
		return c.Server.PublicURL
	}
	host, port, err := net.SplitHostPort(c.Server.Listen)
	if err != nil || !IsLoopbackHost(host) {
		return ""
	}
	return "http://" + net.JoinHostPort(host, port)
}

// Validate reports the first setting that cannot work, wrapped in ErrInvalid.
func (c Config) Validate() error {
	if err := c.Server.validate(c.SignIn()); err != nil {
		return err
	}
	if err := ValidateDB(c.Storage.DB); err != nil {
		return err
	}
	if _, err := c.Storage.SecretKeys(); err != nil {
		return err
	}
	if err := c.Auth.validate(c.Server.PublicURL); err != nil {
		return err
	}
	if err := c.Runs.validate(); err != nil {
		return err
	}
	if err := c.Outbound.validate(); err != nil {
		return err
	}
	if err := c.ARD.validate(); err != nil {
		return err
	}
	if err := c.Embeddings.validate(); err != nil {
		return err
	}
	if err := c.Sources.validate(); err != nil {
		return err
	}
	switch c.Log.Format {
	case LogFormatText, LogFormatJSON:
	default:
		return fmt.Errorf("%w: log-format %q: want %q or %q", ErrInvalid, c.Log.Format, LogFormatText, LogFormatJSON)
	}
	if c.Verify.Probes && !c.Verify.Fetch {
		return fmt.Errorf("%w: verify-probes needs verify-fetch: probes reach the agents' endpoints", ErrInvalid)
	}
	return c.Crawl.validate()
}

func (s Server) validate(signIn bool) error {
	if err := validateListen(s.Listen, s.InsecureAllowRemote || signIn); err != nil {
		return err
	}
	if err := validatePublicURL(s.PublicURL); err != nil {
		return err
	}
	for _, h := range s.AllowedHosts {
		if h == "" || strings.ContainsAny(h, "/:@ ") && !isIPv6Literal(h) {
			return fmt.Errorf("%w: allowed-hosts: %q is not a host name (no scheme, port or path)", ErrInvalid, h)
		}
	}
	if s.ShutdownTimeout <= 0 {
		return fmt.Errorf("%w: shutdown-timeout must be positive, got %v", ErrInvalid, s.ShutdownTimeout)
	}
	return nil
}

func (o Outbound) validate() error {
	for _, p := range o.AllowNetworks {
		if !p.IsValid() {
			return fmt.Errorf("%w: allow-networks: invalid prefix %v", ErrInvalid, p)
		}
	}
	if o.FetchTimeout <= 0 {
		return fmt.Errorf("%w: fetch-timeout must be positive, got %v", ErrInvalid, o.FetchTimeout)
	}
	if o.MaxCardBytes <= 0 {
		return fmt.Errorf("%w: max-card-bytes must be positive, got %d", ErrInvalid, o.MaxCardBytes)
	}
	return nil
}

func (c Crawl) validate() error {
	switch {
	case c.Concurrency < 1 || c.Concurrency > 10000:
		return fmt.Errorf("%w: crawl-concurrency must be 1 to 10000, got %d", ErrInvalid, c.Concurrency)
	case c.PerHost < 1:
		return fmt.Errorf("%w: crawl-per-host must be at least 1, got %d", ErrInvalid, c.PerHost)
	case c.MinInterval <= 0:
		return fmt.Errorf("%w: crawl-min-interval must be positive, got %v", ErrInvalid, c.MinInterval)
	case c.MaxInterval < c.MinInterval:
		return fmt.Errorf("%w: crawl-max-interval (%v) is shorter than crawl-min-interval (%v)", ErrInvalid, c.MaxInterval, c.MinInterval)
	case c.Lease < 0:
		return fmt.Errorf("%w: crawl-lease must not be negative, got %v", ErrInvalid, c.Lease)
	case strings.Contains(c.Instance, "/"):
		return fmt.Errorf("%w: instance %q must not contain /", ErrInvalid, c.Instance)
	case c.DownAfter < 1:
		return fmt.Errorf("%w: crawl-down-after must be at least 1, got %d", ErrInvalid, c.DownAfter)
	case c.FetchLogRetention < 7*24*time.Hour:
		return fmt.Errorf("%w: fetch-log-retention must be at least 168h (uptime covers 7 days), got %v", ErrInvalid, c.FetchLogRetention)
	}
	return nil
}

func (r Runs) validate() error {
	switch {
	case r.Retention <= 0 || r.MaxDuration <= 0:
		return fmt.Errorf("%w: run-retention and run-max-duration must be positive, got %v and %v", ErrInvalid, r.Retention, r.MaxDuration)
	case r.MaxMessageBytes <= 0 || r.MaxFileBytes <= 0 || r.MaxFileBytes > r.MaxMessageBytes:
		return fmt.Errorf("%w: run-max-file-bytes (%d) must be positive and at most run-max-message-bytes (%d)", ErrInvalid, r.MaxFileBytes, r.MaxMessageBytes)
	case r.MaxConcurrent <= 0 || r.MaxConcurrentUser <= 0 || r.RatePerMinute <= 0:
		return fmt.Errorf("%w: run-max-concurrent, run-max-concurrent-per-user and run-rate-per-minute must be positive", ErrInvalid)
	}
	for _, h := range r.OAuthTokenHosts {
		if u, err := url.Parse("//" + h); err != nil || u.Host != h || u.User != nil || u.Hostname() == "" || strings.HasSuffix(h, ":") {
			return fmt.Errorf("%w: oauth-token-hosts entry %q is not a host or host:port", ErrInvalid, h)
		}
	}
	return nil
}

// validate checks sign-in; publicURL is the server's, from which the
// redirect URL registered at the provider is built.
func (a Auth) validate(publicURL string) error {
	for _, r := range []struct{ name, value string }{{"oidc-default-role", a.DefaultRole}, {"anonymous-role", a.AnonymousRole}} {
		if r.value != RoleNone && !slices.Contains(Roles, r.value) {
			return fmt.Errorf("%w: %s %q: want none, viewer, tester, editor or admin", ErrInvalid, r.name, r.value)
		}
	}
	switch {
	case a.SessionIdle <= 0 || a.SessionMax <= 0:
		return fmt.Errorf("%w: session-idle and session-max must be positive, got %v and %v", ErrInvalid, a.SessionIdle, a.SessionMax)
	case a.SessionIdle > a.SessionMax:
		return fmt.Errorf("%w: session-idle (%v) is longer than session-max (%v)", ErrInvalid, a.SessionIdle, a.SessionMax)
	case a.ClientSecret != "" && a.ClientSecretFile != "":
		return fmt.Errorf("%w: give oidc-client-secret or oidc-client-secret-file, not both", ErrInvalid)
	}
	if !a.SignIn() {
		if a.ClientID != "" || a.ClientSecret != "" || a.ClientSecretFile != "" || len(a.Roles) > 0 || a.APIAudience != "" || a.APIAcceptsClientID {
			// Half a configuration would silently run development mode,
			// where everyone is admin.
			return fmt.Errorf("%w: OIDC settings given without oidc-issuer", ErrInvalid)
		}
		return nil
	}
	u, err := url.Parse(a.Issuer)
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" ||
		!(u.Scheme == "https" || u.Scheme == "http" && IsLoopbackHost(u.Hostname())) {
		// OpenID Connect Discovery 1.0 §2: the issuer is an https URL
		// without query or fragment; plain http only for a provider on
		// this machine.
		return fmt.Errorf("%w: oidc-issuer %q: want an https URL without query or fragment", ErrInvalid, a.Issuer)
	}
	switch {
	case a.ClientID == "":
		return fmt.Errorf("%w: oidc-issuer needs oidc-client-id", ErrInvalid)
	case publicURL == "":
		// The redirect URL registered at the provider is built from it.
		return fmt.Errorf("%w: oidc-issuer needs public-url (the redirect URL is {public-url}/auth/callback)", ErrInvalid)
	case a.RolesClaim == "":
		return fmt.Errorf("%w: oidc-roles-claim is empty", ErrInvalid)
	case !slices.Contains(a.Scopes, "openid"):
		return fmt.Errorf("%w: oidc-scopes must include openid", ErrInvalid)
	case !a.APIAcceptsClientID && (a.APIAudience == "" || a.APIAudience == a.ClientID):
		return fmt.Errorf("%w: %w", ErrInvalid, ErrAPIAudience)
	}
	return nil
}

// ErrAPIAudience refuses an API audience that sign-in tokens would carry.
var ErrAPIAudience = errors.New("oidc-api-audience must be set and differ from oidc-client-id, " +
	"so that tokens issued for the console's sign-in do not authenticate to the API; " +
	"pass --oidc-api-accepts-client-id (REGISTRY_OIDC_API_ACCEPTS_CLIENT_ID=true) to accept them anyway")

func validateListen(addr string, allowRemote bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%w: listen address %q: %w", ErrInvalid, addr, err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("%w: listen address %q: port must be a number in 0-65535", ErrInvalid, addr)
	}
	if IsLoopbackHost(host) || allowRemote {
		return nil
	}
	return fmt.Errorf("%w: listen address %q is not loopback and no sign-in is configured; "+
		"pass --insecure-allow-remote (REGISTRY_INSECURE_ALLOW_REMOTE=true) to serve an unauthenticated registry on it", ErrInvalid, addr)
}

// IsLoopbackHost tells whether a listen host only accepts local connections.
// An empty host listens on every interface, and a host name other than
// localhost could resolve anywhere, so both count as remote.
func IsLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	addr, err := netip.ParseAddr(host)
	return err == nil && addr.IsLoopback()
}

// ValidateDB checks the shape of a catalog DSN without connecting.
func ValidateDB(dsn string) error {
	switch {
	case dsn == "":
		return fmt.Errorf("%w: db: empty DSN", ErrInvalid)
	case strings.HasPrefix(dsn, "sqlite:"):
		if strings.TrimPrefix(dsn, "sqlite:") == "" {
			return fmt.Errorf("%w: db %q: missing SQLite file path", ErrInvalid, dsn)
		}
		return nil
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		if _, err := url.Parse(dsn); err != nil {
			// url.Error repeats the DSN, which may carry a password.
			var uerr *url.Error
			if errors.As(err, &uerr) {
				err = uerr.Err
			}
			return fmt.Errorf("%w: db: malformed PostgreSQL URL: %w", ErrInvalid, err)
		}
		return nil
	case strings.Contains(dsn, "://"):
		scheme, _, _ := strings.Cut(dsn, "://")
		return fmt.Errorf("%w: db: unknown scheme %q (want sqlite:PATH, postgres:// or postgresql://)", ErrInvalid, scheme)
	default:
		// A bare path is a SQLite file.
		return nil
	}
}

func validatePublicURL(raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.User != nil {
		return fmt.Errorf("%w: public-url %q: want an absolute http(s) URL such as https://registry.example.com", ErrInvalid, raw)
	}
	return nil
}

func isIPv6Literal(h string) bool {
	a, err := netip.ParseAddr(strings.Trim(h, "[]"))
	return err == nil && a.Is6()
}

// AcceptedHosts lists the host names the server answers to: loopback
// names, the listen host, the public URL's host and AllowedHosts. Any
// other Host header is refused, so a web page that rebinds its own DNS
// name to the registry's address (DNS rebinding) cannot talk to it
// through the operator's browser.
func (s Server) AcceptedHosts() []string {
	hosts := []string{"localhost", "127.0.0.1", "::1"}
	if h, _, err := net.SplitHostPort(s.Listen); err == nil && h != "" {
		hosts = append(hosts, h)
	}
	if u, err := url.Parse(s.PublicURL); err == nil && u.Hostname() != "" {
		hosts = append(hosts, u.Hostname())
	}
	for _, h := range s.AllowedHosts {
		hosts = append(hosts, strings.Trim(h, "[]"))
	}
	return hosts
}

// TrustedOrigins lists the origins, besides the request's own, that may
// send state-changing requests from a browser: the public URL's.
func (s Server) TrustedOrigins() []string {
	u, err := url.Parse(s.PublicURL)
	if err != nil || u.Host == "" {
		return nil
	}
	return []string{u.Scheme + "://" + u.Host}
}
