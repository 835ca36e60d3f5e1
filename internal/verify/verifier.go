package verify

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/a2aregistry/registry/internal/background"
	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/contentscan"
	"github.com/a2aregistry/registry/internal/safehttp"
)

// Options configure a Verifier. Zero fields take the defaults below.
type Options struct {
	// Client reaches jku, OpenID Connect discovery and probe URLs. Nil
	// means no network: jku keys are unavailable and nothing is probed.
	Client *safehttp.Client
	// Keys is the trust store of pinned keys; nil means none.
	Keys KeyStore
	// TrustedJWKSOrigins are origins ("https://keys.example.com") whose
	// JWKS the operator trusts for cards of any origin.
	TrustedJWKSOrigins []string
	// AllowInsecureJKU accepts http:// jku URLs (tests, development). In
	// production a JWKS fetched without TLS could be swapped on the path.
	AllowInsecureJKU bool
	// MaxJWKSBytes caps a JWKS response (default 64 KiB).
	MaxJWKSBytes int64
	// JWKSTimeout bounds one JWKS fetch (default 5 s).
	JWKSTimeout time.Duration
	// DefaultJWKSTTL applies when a JWKS response has no Cache-Control
	// max-age (default 5 min); every TTL is clamped to [MinJWKSTTL,
	// MaxJWKSTTL] (default 1 min, 24 h).
	DefaultJWKSTTL, MinJWKSTTL, MaxJWKSTTL time.Duration
	// JWKSCacheSize bounds the number of cached key sets (default 1024).
	JWKSCacheSize int
	// Probe runs live transport probes in Verify.
	Probe bool
	// ProbeTimeout bounds one probe (default 10 s).
	ProbeTimeout time.Duration
	// FetchOIDC fetches openIdConnectUrl discovery documents in Verify.
	FetchOIDC bool
	// Names gives the content scan the catalogued agents to compare a
	// card's name and provider with (CatalogNames); nil skips that check.
	Names contentscan.Names
	// Manifests vouch for publishers through their ARD manifests
	// (ManifestListings); nil consults none.
	Manifests ManifestListings
	// Priority, when set, gives requests people wait for the CPU before
	// the CPU-heavy parts of a verification: the content scan, and the
	// Runner's parsing of stored cards and storing of report batches.
	Priority *background.Priority
	// Now is the clock (tests); default time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// Defaults of Options.
const (
	DefaultMaxJWKSBytes   = 64 << 10
	DefaultJWKSTimeout    = 5 * time.Second
	DefaultJWKSTTL        = 5 * time.Minute
	DefaultMinJWKSTTL     = time.Minute
	DefaultMaxJWKSTTL     = 24 * time.Hour
	DefaultJWKSCacheSize  = 1024
	DefaultProbeTimeout   = 10 * time.Second
	maxProbeResponseBytes = 64 << 10
)

// Verifier checks cards. It is safe for concurrent use; it caches JWKS.
type Verifier struct {
	opts Options
	jwks *jwksCache
	log  *slog.Logger
}

// New builds a Verifier.
func New(opts Options) *Verifier {
	if opts.MaxJWKSBytes <= 0 {
		opts.MaxJWKSBytes = DefaultMaxJWKSBytes
	}
	if opts.JWKSTimeout <= 0 {
		opts.JWKSTimeout = DefaultJWKSTimeout
	}
	if opts.DefaultJWKSTTL <= 0 {
		opts.DefaultJWKSTTL = DefaultJWKSTTL
	}
	if opts.MinJWKSTTL <= 0 {
		opts.MinJWKSTTL = DefaultMinJWKSTTL
	}
	if opts.MaxJWKSTTL <= 0 {
		opts.MaxJWKSTTL = DefaultMaxJWKSTTL
	}
	if opts.JWKSCacheSize <= 0 {
		opts.JWKSCacheSize = DefaultJWKSCacheSize
	}
	if opts.ProbeTimeout <= 0 {
		opts.ProbeTimeout = DefaultProbeTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	trusted := make([]string, 0, len(opts.TrustedJWKSOrigins))
	for _, o := range opts.TrustedJWKSOrigins {
		if n := origin(o); n != "" {
			trusted = append(trusted, n)
		}
	}
	opts.TrustedJWKSOrigins = trusted
	return &Verifier{opts: opts, jwks: &jwksCache{max: opts.JWKSCacheSize}, log: opts.Logger}
}

func (v *Verifier) now() time.Time { return v.opts.Now() }

// Verify checks a parsed card (its Raw bytes must be what card.Parse
// read). cardURL is where it was fetched from, "" for a local file; key
// sources are judged against its origin, or for a file against the origins
// the card's interfaces declare.
func (v *Verifier) Verify(ctx context.Context, c *card.Card, cardURL string) *Report {
	r := v.checkCard(ctx, c, cardURL)
	r.Security = v.AuditSecurity(ctx, c)
	if v.opts.Probe {
		r.Transports = v.ProbeInterfaces(ctx, c)
	}
	return r
}

// checkCard is the part of Verify that Precheck makes too: the
// signatures, the publisher and the content scan.
func (v *Verifier) checkCard(ctx context.Context, c *card.Card, cardURL string) *Report {
	r := &Report{CardURL: cardURL, CheckedAt: v.now().UTC(), Origins: cardOrigins(c, cardURL), Security: []Finding{}}
	if len(c.Raw) > 0 && !mayHoldSignatures(c.Raw) {
		// What VerifySignatures answers, without decoding the card again.
		r.Signatures = SignatureReport{Status: StatusUnsigned, Entries: []SignatureResult{}}
	} else {
		r.Signatures = v.VerifySignatures(ctx, c.Raw, r.Origins)
	}
	r.Publisher = v.judgePublisher(ctx, cardURL, r.Signatures)
	if err := v.opts.Priority.Do(ctx, func(ctx context.Context) { r.Content = v.ScanContent(ctx, c, r.Origins) }); err != nil {
		r.Content = []ContentFinding{}
	}
	return r
}

// cardOrigins is the origin of cardURL, or when there is none the distinct
// origins of the card's interfaces.
func cardOrigins(c *card.Card, cardURL string) []string {
	if o := origin(cardURL); o != "" {
		return []string{o}
	}
	var out []string
	for _, in := range c.Interfaces {
		if o := origin(in.URL); o != "" && !slices.Contains(out, o) {
			out = append(out, o)
		}
	}
	return out
}
