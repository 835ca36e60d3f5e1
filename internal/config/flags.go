package config

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/a2aregistry/registry/internal/safehttp"
)

// EnvPrefix starts the name of every environment variable the registry reads.
const EnvPrefix = "REGISTRY_"

// Group selects the settings a subcommand accepts, so that `registry
// migrate --listen …` is refused instead of silently ignored.
type Group uint

// Setting groups.
const (
	Logging Group = 1 << iota
	Storage
	Cards
	Fetching
	Serving
	Crawling

	All = Logging | Storage | Cards | Fetching | Serving | Crawling
)

// Setting describes one configurable value: its flag, its environment
// variable and its help text.
type Setting struct {
	Group Group
	Flag  string
	Env   string
	Usage string
	value func(*Config) flag.Value
}

// Settings lists every setting in the order usage prints them.
func Settings() []Setting {
	return []Setting{
		{Serving, "listen", "REGISTRY_LISTEN", "HTTP listen address host:port",
			func(c *Config) flag.Value { return (*stringValue)(&c.Server.Listen) }},
		{Serving, "insecure-allow-remote", "REGISTRY_INSECURE_ALLOW_REMOTE",
			"allow a non-loopback listen address without sign-in (anyone who can reach it can write)",
			func(c *Config) flag.Value { return (*boolValue)(&c.Server.InsecureAllowRemote) }},
		{Serving, "public-url", "REGISTRY_PUBLIC_URL", "URL users reach the registry at when it is not the listen address (behind a proxy); its host is accepted in Host headers; with sign-in on and a loopback listen address it defaults to http://{listen}",
			func(c *Config) flag.Value { return (*stringValue)(&c.Server.PublicURL) }},
		{Serving, "allowed-hosts", "REGISTRY_ALLOWED_HOSTS", "comma-separated further host names the server answers to; other Host headers are refused",
			func(c *Config) flag.Value { return (*listValue)(&c.Server.AllowedHosts) }},
		{Serving, "mcp", "REGISTRY_MCP", "serve the MCP server at /mcp (tools to search agents and read cards)",
			func(c *Config) flag.Value { return (*boolValue)(&c.Doors.MCP) }},
		{Serving, "a2a-agent", "REGISTRY_A2A_AGENT", "serve the registry as an A2A agent that finds agents (card at /.well-known/agent-card.json)",
			func(c *Config) flag.Value { return (*boolValue)(&c.Doors.Agent) }},
		{Serving, "signing-key", "REGISTRY_SIGNING_KEY", "PEM private key file (ECDSA P-256, Ed25519 or RSA) to sign the registry's own agent card with",
			func(c *Config) flag.Value { return (*stringValue)(&c.Doors.SigningKey) }},
		{Serving, "import-examples", "REGISTRY_IMPORT_EXAMPLES", "import the shipped example cards when the catalog is empty",
			func(c *Config) flag.Value { return (*boolValue)(&c.Storage.ImportExamples) }},
		{Serving, "shutdown-timeout", "REGISTRY_SHUTDOWN_TIMEOUT", "how long to drain in-flight requests on SIGINT/SIGTERM",
			func(c *Config) flag.Value { return (*durationValue)(&c.Server.ShutdownTimeout) }},
		{Storage, "db", "REGISTRY_DB", "catalog database: sqlite:PATH, a bare SQLite path, or postgres://…",
			func(c *Config) flag.Value { return (*stringValue)(&c.Storage.DB) }},
		{Storage, "secret-key-file", "REGISTRY_SECRET_KEY_FILE", "file of 32-byte keys in hex, one a line, that encrypt stored secrets (the first encrypts, all decrypt)",
			func(c *Config) flag.Value { return (*stringValue)(&c.Storage.SecretKeyFile) }},
		{Storage, "require-approval", "REGISTRY_REQUIRE_APPROVAL", "agents registered, imported or found through seeds start pending until an editor approves them",
			func(c *Config) flag.Value { return (*boolValue)(&c.Listing.RequireApproval) }},
		{Storage, "reapprove-on-change", "REGISTRY_REAPPROVE_ON_CHANGE", "a new card version of an approved agent sends it back to pending review",
			func(c *Config) flag.Value { return (*boolValue)(&c.Listing.ReapproveOnChange) }},
		{Serving, "policy", "REGISTRY_POLICY", "admission policy file (YAML rules in CEL): flag, hold or refuse cards; refused whole if a rule is invalid, reloaded on SIGHUP and when the file changes",
			func(c *Config) flag.Value { return (*stringValue)(&c.Listing.Policy) }},
		{Fetching, "allow-networks", "REGISTRY_ALLOW_NETWORKS",
			"comma-separated CIDRs of private networks agents may live on (private, loopback and link-local addresses are refused otherwise)",
			func(c *Config) flag.Value { return (*prefixesValue)(&c.Outbound.AllowNetworks) }},
		{Fetching, "fetch-timeout", "REGISTRY_FETCH_TIMEOUT", "time limit of one outbound fetch",
			func(c *Config) flag.Value { return (*durationValue)(&c.Outbound.FetchTimeout) }},
		{Cards, "max-card-bytes", "REGISTRY_MAX_CARD_BYTES", "largest agent card accepted, in bytes (suffixes KiB, MiB allowed)",
			func(c *Config) flag.Value { return (*sizeValue)(&c.Outbound.MaxCardBytes) }},
		{Crawling, "crawl", "REGISTRY_CRAWL", "re-check registered agents on their schedule",
			func(c *Config) flag.Value { return (*boolValue)(&c.Crawl.Enabled) }},
		{Crawling, "seeds", "REGISTRY_SEEDS", "file of agent URLs or origins to register, one per line; re-read when it changes",
			func(c *Config) flag.Value { return (*stringValue)(&c.Crawl.Seeds) }},
		{Crawling, "crawl-concurrency", "REGISTRY_CRAWL_CONCURRENCY", "fetches in flight at once",
			func(c *Config) flag.Value { return (*intValue)(&c.Crawl.Concurrency) }},
		{Crawling, "crawl-per-host", "REGISTRY_CRAWL_PER_HOST", "fetches in flight at once to one host",
			func(c *Config) flag.Value { return (*intValue)(&c.Crawl.PerHost) }},
		{Crawling, "crawl-min-interval", "REGISTRY_CRAWL_MIN_INTERVAL", "shortest time between two checks of an agent",
			func(c *Config) flag.Value { return (*durationValue)(&c.Crawl.MinInterval) }},
		{Crawling, "crawl-max-interval", "REGISTRY_CRAWL_MAX_INTERVAL", "longest time between two checks of an agent",
			func(c *Config) flag.Value { return (*durationValue)(&c.Crawl.MaxInterval) }},
		{Crawling, "crawl-down-after", "REGISTRY_CRAWL_DOWN_AFTER", "consecutive failed checks after which an agent is down",
			func(c *Config) flag.Value { return (*intValue)(&c.Crawl.DownAfter) }},
		{Crawling, "crawl-lease", "REGISTRY_CRAWL_LEASE", "how long a replica's claim on a due agent keeps other replicas off it; a dead replica's agents wait this long (default: 5m or 4× fetch-timeout)",
			func(c *Config) flag.Value { return (*durationValue)(&c.Crawl.Lease) }},
		{Crawling, "instance", "REGISTRY_INSTANCE", "name of this replica in crawl leases (default: the host name); a restart under the same name takes back its predecessor's leases at once",
			func(c *Config) flag.Value { return (*stringValue)(&c.Crawl.Instance) }},
		{Crawling, "verify-fetch", "REGISTRY_VERIFY_FETCH", "when verifying cards, fetch the JWKS (jku) and OpenID discovery documents they name; off for air-gapped registries (pinned keys only)",
			func(c *Config) flag.Value { return (*boolValue)(&c.Verify.Fetch) }},
		{Crawling, "verify-probes", "REGISTRY_VERIFY_PROBES", "when verifying cards, also probe each declared interface live (a harmless GetTask for a random id)",
			func(c *Config) flag.Value { return (*boolValue)(&c.Verify.Probes) }},
		{Crawling, "source-interval", "REGISTRY_SOURCE_INTERVAL", "time between two checks of a source (ARD or AI Catalog manifest, or origin)",
			func(c *Config) flag.Value { return (*durationValue)(&c.Sources.Interval) }},
		{Crawling, "source-max-entries", "REGISTRY_SOURCE_MAX_ENTRIES", "most entries one source may list, nested catalogs included; a manifest with more is refused whole",
			func(c *Config) flag.Value { return (*intValue)(&c.Sources.MaxEntries) }},
		{Crawling, "source-max-bytes", "REGISTRY_SOURCE_MAX_BYTES", "largest manifest read, in bytes (suffixes KiB, MiB allowed)",
			func(c *Config) flag.Value { return (*sizeValue)(&c.Sources.MaxBytes) }},
		{Crawling, "source-trust", "REGISTRY_SOURCE_TRUST", "a source entry whose trustManifest identity disagrees with its identifier's publisher: reject, flag or off",
			func(c *Config) flag.Value { return (*stringValue)(&c.Sources.Trust) }},
		{Crawling, "federation-max-entries", "REGISTRY_FEDERATION_MAX_ENTRIES", "most agents (ARD registry) or changes (change feed) one sync of a peer registry reads",
			func(c *Config) flag.Value { return (*intValue)(&c.Sources.FederationMaxEntries) }},
		{Crawling, "federation-sync-timeout", "REGISTRY_FEDERATION_SYNC_TIMEOUT", "time limit of reading a peer registry's pages in one sync",
			func(c *Config) flag.Value { return (*durationValue)(&c.Sources.FederationSyncTimeout) }},
		{Crawling, "fetch-log-retention", "REGISTRY_FETCH_LOG_RETENTION", "how long each check's outcome is kept (uptime needs at least 7 days)",
			func(c *Config) flag.Value { return (*durationValue)(&c.Crawl.FetchLogRetention) }},
		{Serving, "oidc-issuer", "REGISTRY_OIDC_ISSUER", "OpenID Connect provider (issuer URL) users sign in with; none: development mode, the local user is admin",
			func(c *Config) flag.Value { return (*stringValue)(&c.Auth.Issuer) }},
		{Serving, "oidc-client-id", "REGISTRY_OIDC_CLIENT_ID", "the registry's client id at the provider",
			func(c *Config) flag.Value { return (*stringValue)(&c.Auth.ClientID) }},
		{Serving, "oidc-client-secret", "REGISTRY_OIDC_CLIENT_SECRET", "the registry's client secret at the provider (prefer oidc-client-secret-file)",
			func(c *Config) flag.Value { return (*secretValue)(&c.Auth.ClientSecret) }},
		{Serving, "oidc-client-secret-file", "REGISTRY_OIDC_CLIENT_SECRET_FILE", "file holding the client secret",
			func(c *Config) flag.Value { return (*stringValue)(&c.Auth.ClientSecretFile) }},
		{Serving, "oidc-scopes", "REGISTRY_OIDC_SCOPES", "comma-separated scopes requested at sign-in",
			func(c *Config) flag.Value { return (*scopesValue)(&c.Auth.Scopes) }},
		{Serving, "oidc-roles-claim", "REGISTRY_OIDC_ROLES_CLAIM", "token claim whose values oidc-role maps to roles",
			func(c *Config) flag.Value { return (*stringValue)(&c.Auth.RolesClaim) }},
		{Serving, "oidc-groups-claim", "REGISTRY_OIDC_GROUPS_CLAIM", "token claim whose values are the groups that open restricted collections (default: the roles claim)",
			func(c *Config) flag.Value { return (*stringValue)(&c.Auth.GroupsClaim) }},
		{Serving, "oidc-role", "REGISTRY_OIDC_ROLE", "ROLE=CLAIM_VALUE: users whose roles claim holds CLAIM_VALUE get ROLE; repeatable (in the variable, separate with ;)",
			func(c *Config) flag.Value { return (*roleClaimsValue)(&c.Auth.Roles) }},
		{Serving, "oidc-default-role", "REGISTRY_OIDC_DEFAULT_ROLE", "role of a signed-in user no oidc-role matches, or none to refuse them",
			func(c *Config) flag.Value { return (*stringValue)(&c.Auth.DefaultRole) }},
		{Serving, "oidc-api-audience", "REGISTRY_OIDC_API_AUDIENCE", "audience API bearer tokens must name; must differ from oidc-client-id",
			func(c *Config) flag.Value { return (*stringValue)(&c.Auth.APIAudience) }},
		{Serving, "oidc-api-accepts-client-id", "REGISTRY_OIDC_API_ACCEPTS_CLIENT_ID", "let the API accept tokens issued to oidc-client-id (sign-in tokens; the default audience then)",
			func(c *Config) flag.Value { return (*boolValue)(&c.Auth.APIAcceptsClientID) }},
		{Serving, "ard-publish", "REGISTRY_ARD_PUBLISH", "agents the ARD manifest /.well-known/ard.json lists besides the registry itself: none, approved, or collection:NAME",
			func(c *Config) flag.Value { return (*stringValue)(&c.ARD.Publish) }},
		{Serving, "anonymous-role", "REGISTRY_ANONYMOUS_ROLE", "role of callers who have not signed in: none or viewer (or higher)",
			func(c *Config) flag.Value { return (*stringValue)(&c.Auth.AnonymousRole) }},
		{Serving, "session-idle", "REGISTRY_SESSION_IDLE", "a sign-in session unused this long ends",
			func(c *Config) flag.Value { return (*durationValue)(&c.Auth.SessionIdle) }},
		{Serving, "session-max", "REGISTRY_SESSION_MAX", "a sign-in session ends this long after sign-in, however much it is used",
			func(c *Config) flag.Value { return (*durationValue)(&c.Auth.SessionMax) }},
		{Serving, "run-retention", "REGISTRY_RUN_RETENTION", "how long test runs and their transcripts are kept",
			func(c *Config) flag.Value { return (*durationValue)(&c.Runs.Retention) }},
		{Serving, "run-max-duration", "REGISTRY_RUN_MAX_DURATION", "time limit of one test-run operation, streams included",
			func(c *Config) flag.Value { return (*durationValue)(&c.Runs.MaxDuration) }},
		{Serving, "run-max-message-bytes", "REGISTRY_RUN_MAX_MESSAGE_BYTES", "largest message a test run may send (suffixes KiB, MiB allowed)",
			func(c *Config) flag.Value { return (*sizeValue)(&c.Runs.MaxMessageBytes) }},
		{Serving, "run-max-file-bytes", "REGISTRY_RUN_MAX_FILE_BYTES", "largest file part a test run may send (suffixes KiB, MiB allowed)",
			func(c *Config) flag.Value { return (*sizeValue)(&c.Runs.MaxFileBytes) }},
		{Serving, "run-max-concurrent", "REGISTRY_RUN_MAX_CONCURRENT", "test-run operations in flight at once, for everyone",
			func(c *Config) flag.Value { return (*intValue)(&c.Runs.MaxConcurrent) }},
		{Serving, "run-max-concurrent-per-user", "REGISTRY_RUN_MAX_CONCURRENT_PER_USER", "test-run operations in flight at once, per user",
			func(c *Config) flag.Value { return (*intValue)(&c.Runs.MaxConcurrentUser) }},
		{Serving, "run-rate-per-minute", "REGISTRY_RUN_RATE_PER_MINUTE", "test-run operations one user may start per minute",
			func(c *Config) flag.Value { return (*intValue)(&c.Runs.RatePerMinute) }},
		{Serving, "run-private-all", "REGISTRY_RUN_PRIVATE_ALL", "every run's transcript readable by its tester and admins only (default: only runs made with credentials)",
			func(c *Config) flag.Value { return (*boolValue)(&c.Runs.PrivateAll) }},
		{Serving, "oauth-token-hosts", "REGISTRY_OAUTH_TOKEN_HOSTS", "comma-separated hosts (host or host:port, as token URLs write them) that may receive a Try-panel sign-in's code issued on another origin, for cards that name no oauth2MetadataUrl",
			func(c *Config) flag.Value { return (*listValue)(&c.Runs.OAuthTokenHosts) }},
		{Serving, "embeddings-url", "REGISTRY_EMBEDDINGS_URL", "base URL of an OpenAI-compatible embeddings API (POST {url}/embeddings); empty: search is lexical only. Reached through the outbound client: a private or loopback address needs allow-networks",
			func(c *Config) flag.Value { return (*stringValue)(&c.Embeddings.URL) }},
		{Serving, "embeddings-model", "REGISTRY_EMBEDDINGS_MODEL", "model name sent to the embeddings API",
			func(c *Config) flag.Value { return (*stringValue)(&c.Embeddings.Model) }},
		{Serving, "embeddings-dimension", "REGISTRY_EMBEDDINGS_DIMENSION", "length of the model's vectors; an answer of another length is refused",
			func(c *Config) flag.Value { return (*intValue)(&c.Embeddings.Dimension) }},
		{Serving, "embeddings-api-key", "REGISTRY_EMBEDDINGS_API_KEY", "bearer token for the embeddings API (prefer the environment variable or the file; never logged)",
			func(c *Config) flag.Value { return (*secretValue)(&c.Embeddings.APIKey) }},
		{Serving, "embeddings-api-key-file", "REGISTRY_EMBEDDINGS_API_KEY_FILE", "file holding the embeddings API's bearer token",
			func(c *Config) flag.Value { return (*stringValue)(&c.Embeddings.APIKeyFile) }},
		{Serving, "embeddings-batch-size", "REGISTRY_EMBEDDINGS_BATCH_SIZE", "agents' texts sent in one embeddings request",
			func(c *Config) flag.Value { return (*intValue)(&c.Embeddings.BatchSize) }},
		{Serving, "embeddings-timeout", "REGISTRY_EMBEDDINGS_TIMEOUT", "time limit of one embeddings request for agents' texts",
			func(c *Config) flag.Value { return (*durationValue)(&c.Embeddings.Timeout) }},
		{Serving, "embeddings-query-timeout", "REGISTRY_EMBEDDINGS_QUERY_TIMEOUT", "time limit of embedding a search's text; past it the search answers lexically and says so",
			func(c *Config) flag.Value { return (*durationValue)(&c.Embeddings.QueryTimeout) }},
		{Serving, "embeddings-lexical-weight", "REGISTRY_EMBEDDINGS_LEXICAL_WEIGHT", "weight of the lexical (BM25) ranking in the fused ranking",
			func(c *Config) flag.Value { return (*floatValue)(&c.Embeddings.LexicalWeight) }},
		{Serving, "embeddings-vector-weight", "REGISTRY_EMBEDDINGS_VECTOR_WEIGHT", "weight of the vector ranking in the fused ranking",
			func(c *Config) flag.Value { return (*floatValue)(&c.Embeddings.VectorWeight) }},
		{Serving, "embeddings-min-similarity", "REGISTRY_EMBEDDINGS_MIN_SIMILARITY", "cosine similarity below which an agent is not found by its vector alone (-1 to 1)",
			func(c *Config) flag.Value { return (*floatValue)(&c.Embeddings.MinSimilarity) }},
		{Serving, "embeddings-query-prefix", "REGISTRY_EMBEDDINGS_QUERY_PREFIX", "text put before a search's text sent to the embeddings API, for models trained with one (e5: 'query: ', nomic-embed-text: 'search_query: ')",
			func(c *Config) flag.Value { return (*stringValue)(&c.Embeddings.QueryPrefix) }},
		{Serving, "embeddings-document-prefix", "REGISTRY_EMBEDDINGS_DOCUMENT_PREFIX", "text put before each agent's text sent to the embeddings API (e5: 'passage: ', nomic-embed-text: 'search_document: '); changing it re-embeds every agent",
			func(c *Config) flag.Value { return (*stringValue)(&c.Embeddings.DocumentPrefix) }},
		{Logging, "log-level", "REGISTRY_LOG_LEVEL", "debug, info, warn or error",
			func(c *Config) flag.Value { return (*levelValue)(&c.Log.Level) }},
		{Logging, "log-format", "REGISTRY_LOG_FORMAT", "text or json",
			func(c *Config) flag.Value { return (*stringValue)(&c.Log.Format) }},
	}
}

// Load registers the settings of groups on fs, parses args, fills every
// setting not given as a flag from its environment variable (a flag wins;
// an empty variable counts as unset), and validates the result.
// The remaining positional arguments are fs.Args(). When args ask for help
// the error wraps flag.ErrHelp.
func Load(fs *flag.FlagSet, groups Group, args []string, getenv func(string) string) (Config, error) {
	cfg := Default()
	var active []Setting
	for _, s := range Settings() {
		if s.Group&groups == 0 {
			continue
		}
		active = append(active, s)
		fs.Var(s.value(&cfg), s.Flag, fmt.Sprintf("%s (env %s)", s.Usage, s.Env))
	}
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	fromFlag := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { fromFlag[f.Name] = true })
	for _, s := range active {
		if fromFlag[s.Flag] {
			continue
		}
		v := getenv(s.Env)
		if v == "" {
			continue
		}
		if err := s.value(&cfg).Set(v); err != nil {
			return Config{}, fmt.Errorf("%w: %s=%q: %w", ErrInvalid, s.Env, v, err)
		}
	}
	cfg.Server.PublicURL = cfg.defaultPublicURL()
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

type stringValue string

func (v *stringValue) String() string     { return string(*v) }
func (v *stringValue) Set(s string) error { *v = stringValue(s); return nil }

type boolValue bool

func (v *boolValue) String() string   { return strconv.FormatBool(bool(*v)) }
func (v *boolValue) IsBoolFlag() bool { return true }
func (v *boolValue) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return errors.New("want true or false")
	}
	*v = boolValue(b)
	return nil
}

type durationValue time.Duration

func (v *durationValue) String() string { return time.Duration(*v).String() }
func (v *durationValue) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return errors.New("want a duration such as 10s or 1m30s")
	}
	*v = durationValue(d)
	return nil
}

type intValue int

func (v *intValue) String() string { return strconv.Itoa(int(*v)) }
func (v *intValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return errors.New("want a whole number")
	}
	*v = intValue(n)
	return nil
}

type floatValue float64

func (v *floatValue) String() string { return strconv.FormatFloat(float64(*v), 'g', -1, 64) }
func (v *floatValue) Set(s string) error {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return fmt.Errorf("not a number: %q", s)
	}
	*v = floatValue(f)
	return nil
}

type levelValue slog.Level

func (v *levelValue) String() string { return slog.Level(*v).String() }
func (v *levelValue) Set(s string) error {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return errors.New("want debug, info, warn or error")
	}
	*v = levelValue(l)
	return nil
}

type sizeValue int64

func (v *sizeValue) String() string { return strconv.FormatInt(int64(*v), 10) }
func (v *sizeValue) Set(s string) error {
	n, err := ParseSize(s)
	if err != nil {
		return err
	}
	*v = sizeValue(n)
	return nil
}

// ParseSize reads a byte count: a plain integer or one with a KiB or MiB suffix.
func ParseSize(s string) (int64, error) {
	num, mult := s, int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}} {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			num, mult = n, u.mult
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: want bytes, optionally with a KiB or MiB suffix", s)
	}
	if n > (1<<62)/mult || n < -(1<<62)/mult {
		return 0, fmt.Errorf("size %q: too large", s)
	}
	return n * mult, nil
}

// secretValue never prints the secret: flag's usage output shows a
// flag's value when it differs from the zero value.
type secretValue Secret

func (v *secretValue) String() string     { return Secret(*v).String() }
func (v *secretValue) Set(s string) error { *v = secretValue(s); return nil }

type scopesValue []string

func (v *scopesValue) String() string { return strings.Join(*v, ",") }

// Set replaces the list: the default is a starting point, not a base.
func (v *scopesValue) Set(s string) error {
	var scopes []string
	for sc := range strings.FieldsFuncSeq(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		scopes = append(scopes, sc)
	}
	*v = scopes
	return nil
}

type roleClaimsValue []RoleClaim

func (v *roleClaimsValue) String() string {
	parts := make([]string, len(*v))
	for i, rc := range *v {
		parts[i] = rc.Role + "=" + rc.Value
	}
	return strings.Join(parts, ";")
}

// Set appends, so that a repeated --oidc-role adds mappings. Claim values
// are often LDAP names full of commas, so several mappings in one value
// are separated by semicolons.
func (v *roleClaimsValue) Set(s string) error {
	for entry := range strings.SplitSeq(s, ";") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		role, value, ok := strings.Cut(entry, "=")
		role = strings.ToLower(strings.TrimSpace(role))
		if !ok || value == "" {
			return fmt.Errorf("%q: want ROLE=CLAIM_VALUE", entry)
		}
		if !slices.Contains(Roles, role) {
			return fmt.Errorf("%q: unknown role %q, want viewer, tester, editor or admin", entry, role)
		}
		*v = append(*v, RoleClaim{Role: role, Value: value})
	}
	return nil
}

type listValue []string

func (v *listValue) String() string { return strings.Join(*v, ",") }

// Set appends, so that a repeated flag adds entries.
func (v *listValue) Set(s string) error {
	for entry := range strings.SplitSeq(s, ",") {
		if entry = strings.ToLower(strings.TrimSpace(entry)); entry != "" {
			*v = append(*v, entry)
		}
	}
	return nil
}

type prefixesValue []netip.Prefix

func (v *prefixesValue) String() string {
	parts := make([]string, len(*v))
	for i, p := range *v {
		parts[i] = p.String()
	}
	return strings.Join(parts, ",")
}

// Set appends, so that a repeated --allow-networks adds ranges.
func (v *prefixesValue) Set(s string) error {
	ps, err := parseNetworks(s)
	if err != nil {
		return err
	}
	*v = append(*v, ps...)
	return nil
}

// parseNetworks reads the allowlist with safehttp.ParseNetworks, the same
// parser the outbound client documents, but first refuses a prefix with host
// bits set ("10.1.2.3/8"): safehttp masks it, which would silently widen the
// SSRF allowlist from what was probably meant to be one host.
func parseNetworks(s string) ([]netip.Prefix, error) {
	for entry := range strings.SplitSeq(s, ",") {
		entry = strings.TrimSpace(entry)
		if !strings.Contains(entry, "/") {
			continue
		}
		if p, err := netip.ParsePrefix(entry); err == nil && p.Masked() != p {
			return nil, fmt.Errorf("network %q has host bits set; did you mean %s or %s/%d?",
				entry, p.Masked(), p.Addr(), p.Addr().BitLen())
		}
	}
	return safehttp.ParseNetworks(s)
}
