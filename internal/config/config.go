// Package config holds the registry's typed settings, read from command-line
// flags and REGISTRY_* environment variables and validated before anything
// starts. There is no global instance: each subcommand builds its own
// flag.FlagSet, loads a Config and passes it down explicitly.
package config

import (
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

// Config is every setting of the registry. Default returns a valid one.
type Config struct {
	// Listen is the HTTP listen address, host:port.
	Listen string
	// InsecureAllowRemote lets the server listen on a non-loopback address
	// although no sign-in is configured (DESIGN.md "Access").
	InsecureAllowRemote bool
	// DB is the catalog DSN: "sqlite:PATH", a bare SQLite path, or a
	// postgres:// / postgresql:// URL.
	DB string
	// AllowNetworks are private ranges the outbound client may reach; all
	// private, loopback and link-local addresses are refused otherwise.
	AllowNetworks []netip.Prefix
	LogLevel      slog.Level
	LogFormat     string
	// FetchTimeout bounds one outbound fetch, connection to last byte.
	FetchTimeout time.Duration
	// MaxCardBytes caps the size of one agent card, fetched or imported.
	MaxCardBytes int64
	// ImportExamples imports the shipped example cards when the catalog is
	// empty at start-up, so a first run has something to search.
	ImportExamples bool
	// ShutdownTimeout bounds the graceful drain of in-flight requests.
	ShutdownTimeout time.Duration
	// PublicURL is the address users reach the registry at, when it is
	// not the listen address (behind a proxy); its host is accepted in
	// Host headers and its origin in Origin headers.
	PublicURL string
	// AllowedHosts are further host names the server answers to; every
	// other Host header is refused (DNS rebinding, see AcceptedHosts).
	AllowedHosts []string

	// Crawl re-checks registered agents on their schedule.
	Crawl bool
	// Seeds is a file of agent URLs or origins to register (optional).
	Seeds             string
	CrawlConcurrency  int
	CrawlPerHost      int
	CrawlMinInterval  time.Duration
	CrawlMaxInterval  time.Duration
	CrawlDownAfter    int
	FetchLogRetention time.Duration
	// CrawlLease is how long a claim keeps other replicas off an agent;
	// zero: the crawler's default, or 4× FetchTimeout if longer.
	CrawlLease time.Duration
	// Instance names this replica in crawl leases; empty: the host name.
	Instance string
	// VerifyFetch lets the background verifier fetch what cards name: JWKS
	// from jku, OpenID discovery documents, and (with VerifyProbes) the
	// declared interfaces. Off, signatures verify against pinned keys only.
	VerifyFetch bool
	// VerifyProbes makes the background verifier probe every declared
	// interface live, not only check signatures and security schemes.
	VerifyProbes bool

	// Sign-in (see README "Sign-in"). With no OIDCIssuer the registry runs
	// in development mode: the local user is admin, loopback only.
	OIDCIssuer   string
	OIDCClientID string
	// OIDCClientSecret or OIDCClientSecretFile (not both) authenticate
	// the registry to the provider; neither for a public client (PKCE).
	OIDCClientSecret     Secret
	OIDCClientSecretFile string
	// OIDCScopes are requested at sign-in; "openid" is always among them.
	OIDCScopes []string
	// OIDCRolesClaim names the token claim (a string or a list of
	// strings) whose values OIDCRoles map to roles.
	OIDCRolesClaim string
	OIDCRoles      []RoleClaim
	// OIDCGroupsClaim names the claim whose values are the caller's groups
	// (collection visibility); OIDCRolesClaim when empty.
	OIDCGroupsClaim string
	// RequireApproval starts new agents pending; ReapproveOnChange sends
	// an approved agent back to pending when its card changes.
	RequireApproval   bool
	ReapproveOnChange bool
	// OIDCDefaultRole is the role of a signed-in user no mapping matches,
	// RoleNone to refuse them.
	OIDCDefaultRole string
	// OIDCAPIAudience is the audience bearer tokens must name; the
	// client id when empty.
	OIDCAPIAudience string
	// AnonymousRole is the role of callers who are not signed in,
	// RoleNone by default.
	AnonymousRole string
	// SessionIdle ends a session unused this long; SessionMax ends any
	// session this long after sign-in.
	SessionIdle time.Duration
	SessionMax  time.Duration

	// Test runs (the built-in A2A client, POST /api/v1/agents/{id}/runs).
	// RunRetention is how long a run's transcript is kept.
	RunRetention         time.Duration
	RunMaxDuration       time.Duration
	RunMaxMessageBytes   int64
	RunMaxFileBytes      int64
	RunMaxConcurrent     int
	RunMaxConcurrentUser int
	RunRatePerMinute     int
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
func (c Config) SignIn() bool { return c.OIDCIssuer != "" }

// ClientSecret returns the OIDC client secret, read from
// OIDCClientSecretFile when that is set (surrounding white space
// trimmed: editors and `echo` add a newline).
func (c Config) ClientSecret() (Secret, error) {
	if c.OIDCClientSecretFile == "" {
		return c.OIDCClientSecret, nil
	}
	b, err := os.ReadFile(c.OIDCClientSecretFile)
	if err != nil {
		return "", fmt.Errorf("reading oidc-client-secret-file: %w", err)
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", fmt.Errorf("%w: oidc-client-secret-file %s is empty", ErrInvalid, c.OIDCClientSecretFile)
	}
	return Secret(s), nil
}

// Default returns the settings used when nothing is configured.
func Default() Config {
	return Config{
		Listen:          DefaultListen,
		DB:              DefaultDB,
		LogLevel:        slog.LevelInfo,
		LogFormat:       LogFormatText,
		FetchTimeout:    DefaultFetchTimeout,
		MaxCardBytes:    DefaultMaxCardBytes,
		ImportExamples:  true,
		ShutdownTimeout: DefaultShutdownTimeout,

		OIDCScopes:      []string{"openid", "email", "profile"},
		OIDCRolesClaim:  DefaultOIDCRolesClaim,
		OIDCDefaultRole: "viewer",
		AnonymousRole:   RoleNone,
		SessionIdle:     DefaultSessionIdle,
		SessionMax:      DefaultSessionMax,

		Crawl:             true,
		VerifyFetch:       true,
		CrawlConcurrency:  DefaultCrawlConcurrency,
		CrawlPerHost:      DefaultCrawlPerHost,
		CrawlMinInterval:  DefaultCrawlMinInterval,
		CrawlMaxInterval:  DefaultCrawlMaxInterval,
		CrawlDownAfter:    DefaultCrawlDownAfter,
		FetchLogRetention: DefaultFetchLogRetention,

		RunRetention:         DefaultRunRetention,
		RunMaxDuration:       DefaultRunMaxDuration,
		RunMaxMessageBytes:   DefaultRunMaxMessageBytes,
		RunMaxFileBytes:      DefaultRunMaxFileBytes,
		RunMaxConcurrent:     DefaultRunMaxConcurrent,
		RunMaxConcurrentUser: DefaultRunMaxConcurrentUser,
		RunRatePerMinute:     DefaultRunRatePerMinute,
	}
}

// Validate reports the first setting that cannot work, wrapped in ErrInvalid.
func (c Config) Validate() error {
	if err := validateListen(c.Listen, c.InsecureAllowRemote || c.SignIn()); err != nil {
		return err
	}
	if err := ValidateDB(c.DB); err != nil {
		return err
	}
	if err := validatePublicURL(c.PublicURL); err != nil {
		return err
	}
	if err := c.validateSignIn(); err != nil {
		return err
	}
	for _, h := range c.AllowedHosts {
		if h == "" || strings.ContainsAny(h, "/:@ ") && !isIPv6Literal(h) {
			return fmt.Errorf("%w: allowed-hosts: %q is not a host name (no scheme, port or path)", ErrInvalid, h)
		}
	}
	for _, p := range c.AllowNetworks {
		if !p.IsValid() {
			return fmt.Errorf("%w: allow-networks: invalid prefix %v", ErrInvalid, p)
		}
	}
	switch c.LogFormat {
	case LogFormatText, LogFormatJSON:
	default:
		return fmt.Errorf("%w: log-format %q: want %q or %q", ErrInvalid, c.LogFormat, LogFormatText, LogFormatJSON)
	}
	if c.FetchTimeout <= 0 {
		return fmt.Errorf("%w: fetch-timeout must be positive, got %v", ErrInvalid, c.FetchTimeout)
	}
	if c.MaxCardBytes <= 0 {
		return fmt.Errorf("%w: max-card-bytes must be positive, got %d", ErrInvalid, c.MaxCardBytes)
	}
	if c.ShutdownTimeout <= 0 {
		return fmt.Errorf("%w: shutdown-timeout must be positive, got %v", ErrInvalid, c.ShutdownTimeout)
	}
	return c.validateCrawl()
}

func (c Config) validateCrawl() error {
	switch {
	case c.CrawlConcurrency < 1 || c.CrawlConcurrency > 10000:
		return fmt.Errorf("%w: crawl-concurrency must be 1 to 10000, got %d", ErrInvalid, c.CrawlConcurrency)
	case c.CrawlPerHost < 1:
		return fmt.Errorf("%w: crawl-per-host must be at least 1, got %d", ErrInvalid, c.CrawlPerHost)
	case c.CrawlMinInterval <= 0:
		return fmt.Errorf("%w: crawl-min-interval must be positive, got %v", ErrInvalid, c.CrawlMinInterval)
	case c.CrawlMaxInterval < c.CrawlMinInterval:
		return fmt.Errorf("%w: crawl-max-interval (%v) is shorter than crawl-min-interval (%v)", ErrInvalid, c.CrawlMaxInterval, c.CrawlMinInterval)
	case c.CrawlLease < 0:
		return fmt.Errorf("%w: crawl-lease must not be negative, got %v", ErrInvalid, c.CrawlLease)
	case strings.Contains(c.Instance, "/"):
		return fmt.Errorf("%w: instance %q must not contain /", ErrInvalid, c.Instance)
	case c.CrawlDownAfter < 1:
		return fmt.Errorf("%w: crawl-down-after must be at least 1, got %d", ErrInvalid, c.CrawlDownAfter)
	case c.VerifyProbes && !c.VerifyFetch:
		return fmt.Errorf("%w: verify-probes needs verify-fetch: probes reach the agents' endpoints", ErrInvalid)
	case c.FetchLogRetention < 7*24*time.Hour:
		return fmt.Errorf("%w: fetch-log-retention must be at least 168h (uptime covers 7 days), got %v", ErrInvalid, c.FetchLogRetention)
	}
	return nil
}

func (c Config) validateSignIn() error {
	for _, r := range []struct{ name, value string }{{"oidc-default-role", c.OIDCDefaultRole}, {"anonymous-role", c.AnonymousRole}} {
		if r.value != RoleNone && !slices.Contains(Roles, r.value) {
			return fmt.Errorf("%w: %s %q: want none, viewer, tester, editor or admin", ErrInvalid, r.name, r.value)
		}
	}
	switch {
	case c.RunRetention <= 0 || c.RunMaxDuration <= 0:
		return fmt.Errorf("%w: run-retention and run-max-duration must be positive, got %v and %v", ErrInvalid, c.RunRetention, c.RunMaxDuration)
	case c.RunMaxMessageBytes <= 0 || c.RunMaxFileBytes <= 0 || c.RunMaxFileBytes > c.RunMaxMessageBytes:
		return fmt.Errorf("%w: run-max-file-bytes (%d) must be positive and at most run-max-message-bytes (%d)", ErrInvalid, c.RunMaxFileBytes, c.RunMaxMessageBytes)
	case c.RunMaxConcurrent <= 0 || c.RunMaxConcurrentUser <= 0 || c.RunRatePerMinute <= 0:
		return fmt.Errorf("%w: run-max-concurrent, run-max-concurrent-per-user and run-rate-per-minute must be positive", ErrInvalid)
	case c.SessionIdle <= 0 || c.SessionMax <= 0:
		return fmt.Errorf("%w: session-idle and session-max must be positive, got %v and %v", ErrInvalid, c.SessionIdle, c.SessionMax)
	case c.SessionIdle > c.SessionMax:
		return fmt.Errorf("%w: session-idle (%v) is longer than session-max (%v)", ErrInvalid, c.SessionIdle, c.SessionMax)
	case c.OIDCClientSecret != "" && c.OIDCClientSecretFile != "":
		return fmt.Errorf("%w: give oidc-client-secret or oidc-client-secret-file, not both", ErrInvalid)
	}
	if !c.SignIn() {
		if c.OIDCClientID != "" || c.OIDCClientSecret != "" || c.OIDCClientSecretFile != "" || len(c.OIDCRoles) > 0 || c.OIDCAPIAudience != "" {
			// Half a configuration would silently run development mode,
			// where everyone is admin.
			return fmt.Errorf("%w: OIDC settings given without oidc-issuer", ErrInvalid)
		}
		return nil
	}
	u, err := url.Parse(c.OIDCIssuer)
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" ||
		!(u.Scheme == "https" || u.Scheme == "http" && IsLoopbackHost(u.Hostname())) {
		// OpenID Connect Discovery 1.0 §2: the issuer is an https URL
		// without query or fragment; plain http only for a provider on
		// this machine.
		return fmt.Errorf("%w: oidc-issuer %q: want an https URL without query or fragment", ErrInvalid, c.OIDCIssuer)
	}
	switch {
	case c.OIDCClientID == "":
		return fmt.Errorf("%w: oidc-issuer needs oidc-client-id", ErrInvalid)
	case c.PublicURL == "":
		// The redirect URL registered at the provider is built from it.
		return fmt.Errorf("%w: oidc-issuer needs public-url (the redirect URL is {public-url}/auth/callback)", ErrInvalid)
	case c.OIDCRolesClaim == "":
		return fmt.Errorf("%w: oidc-roles-claim is empty", ErrInvalid)
	case !slices.Contains(c.OIDCScopes, "openid"):
		return fmt.Errorf("%w: oidc-scopes must include openid", ErrInvalid)
	}
	return nil
}

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
func (c Config) AcceptedHosts() []string {
	hosts := []string{"localhost", "127.0.0.1", "::1"}
	if h, _, err := net.SplitHostPort(c.Listen); err == nil && h != "" {
		hosts = append(hosts, h)
	}
	if u, err := url.Parse(c.PublicURL); err == nil && u.Hostname() != "" {
		hosts = append(hosts, u.Hostname())
	}
	for _, h := range c.AllowedHosts {
		hosts = append(hosts, strings.Trim(h, "[]"))
	}
	return hosts
}

// TrustedOrigins lists the origins, besides the request's own, that may
// send state-changing requests from a browser: the public URL's.
func (c Config) TrustedOrigins() []string {
	u, err := url.Parse(c.PublicURL)
	if err != nil || u.Host == "" {
		return nil
	}
	return []string{u.Scheme + "://" + u.Host}
}
