package verify

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/a2aregistry/registry/internal/background"
	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
)

// RunnerStore is the part of the catalog the verification runner uses.
type RunnerStore interface {
	TrustGeneration(ctx context.Context) (int64, error)
	DueVerifications(ctx context.Context, now time.Time, limit int) ([]catalog.VerifyTarget, error)
	RecordVerifications(ctx context.Context, actor catalog.Actor, ins []catalog.VerificationInput) error
	// VersionReport is the stored report on one version, nil when none:
	// a new version's signing keys are compared with its predecessor's.
	VersionReport(ctx context.Context, agentID string, version int) (json.RawMessage, error)
}

// verifierActor is who the catalog records as storing reports.
var verifierActor = catalog.System("verifier")

// RunnerOptions configure a Runner. Zero fields take the defaults below.
type RunnerOptions struct {
	// Interval is the pause between two passes over the due reports.
	Interval time.Duration
	// MaxAge is how long a report stands when nothing it relied on
	// expires sooner: OIDC discovery documents and jku key sets change
	// without the card changing.
	MaxAge time.Duration
	// MinRecheck is the shortest time before a report is redone because a
	// key expired or could not be fetched, so a JWKS with a one-minute
	// max-age does not make its cards re-verified every minute.
	MinRecheck time.Duration
	// Batch is how many cards one pass reads and stores at a time.
	Batch int
	// Workers verify cards of a batch in parallel (JWKS, OIDC and probe
	// fetches wait on the network).
	Workers int
	// CardLimits bound the parsing of stored cards.
	CardLimits card.Limits
	Logger     *slog.Logger
}

// Runner defaults.
const (
	DefaultRunnerInterval   = 10 * time.Second
	DefaultRunnerMaxAge     = 24 * time.Hour
	DefaultRunnerMinRecheck = 15 * time.Minute
	DefaultRunnerBatch      = 50
	DefaultRunnerWorkers    = 4
	// maxBatchesPerPass bounds one pass, so a report that cannot be
	// stored does not keep the loop busy.
	maxBatchesPerPass = 100
)

// Runner keeps the catalog's verification reports current: it verifies
// card versions without a report, reports made stale by a trusted-key
// change, and reports past their recheck time.
type Runner struct {
	v     *Verifier
	store RunnerStore
	opts  RunnerOptions
	log   *slog.Logger
}

// NewRunner builds a Runner that checks cards with v (whose Options.Keys
// should be the catalog's trust store, CatalogKeys) and stores the
// reports in store.
func NewRunner(v *Verifier, store RunnerStore, opts RunnerOptions) *Runner {
	if opts.Interval <= 0 {
		opts.Interval = DefaultRunnerInterval
	}
	if opts.MaxAge <= 0 {
		opts.MaxAge = DefaultRunnerMaxAge
	}
	if opts.MinRecheck <= 0 {
		opts.MinRecheck = DefaultRunnerMinRecheck
	}
	if opts.Batch <= 0 {
		opts.Batch = DefaultRunnerBatch
	}
	if opts.Workers <= 0 {
		opts.Workers = DefaultRunnerWorkers
	}
	if opts.CardLimits == (card.Limits{}) {
		opts.CardLimits = card.DefaultLimits()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Runner{v: v, store: store, opts: opts, log: opts.Logger}
}

// Run makes a pass at once and then Interval after each pass, until ctx
// ends; it returns when no pass is running.
func (r *Runner) Run(ctx context.Context) {
	background.Every(ctx, r.log, "verification pass", r.opts.Interval, r.pass)
}

func (r *Runner) pass(ctx context.Context) error {
	n, err := r.RunOnce(ctx)
	if n > 0 {
		r.log.Info("verified cards", "count", n)
	}
	return err
}

// RunOnce verifies and stores what is due now, batch after batch, and
// says how many reports it stored.
func (r *Runner) RunOnce(ctx context.Context) (int, error) {
	total := 0
	for range maxBatchesPerPass {
		// The generation is read before any key is: a key change after
		// this makes the reports stored below stale (see catalog).
		gen, err := r.store.TrustGeneration(ctx)
		if err != nil {
			return total, err
		}
		due, err := r.store.DueVerifications(ctx, r.v.now(), r.opts.Batch)
		if err != nil {
			return total, err
		}
		if len(due) == 0 {
			return total, nil
		}
		ins := make([]catalog.VerificationInput, len(due))
		sem := make(chan struct{}, r.opts.Workers)
		var wg sync.WaitGroup
		for i, t := range due {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				ins[i] = r.verifyTarget(ctx, t, gen)
			})
		}
		wg.Wait()
		if err := ctx.Err(); err != nil {
			return total, err
		}
		// Storing the batch's reports is CPU-heavy background work too.
		if perr := r.v.opts.Priority.Do(ctx, func(ctx context.Context) {
			err = r.store.RecordVerifications(ctx, verifierActor, ins)
		}); perr != nil {
			err = perr
		}
		if err != nil {
			return total, err
		}
		total += len(ins)
		if len(due) < r.opts.Batch {
			return total, nil
		}
	}
	return total, nil
}

// VerifyStored verifies one stored card version now and stores the
// report, as a pass would: registering answers with the verdict instead of
// "unchecked" until the next pass (crawler.CardVerifier).
func (r *Runner) VerifyStored(ctx context.Context, t catalog.VerifyTarget) error {
	gen, err := r.store.TrustGeneration(ctx)
	if err != nil {
		return err
	}
	in := r.verifyTarget(ctx, t, gen)
	if err := ctx.Err(); err != nil {
		return err
	}
	return r.store.RecordVerifications(ctx, verifierActor, []catalog.VerificationInput{in})
}

// verifyTarget checks one stored card version and builds its catalog row.
func (r *Runner) verifyTarget(ctx context.Context, t catalog.VerifyTarget, gen int64) catalog.VerificationInput {
	var rep *Report
	var (
		c   *card.Card
		err error
	)
	// Parsed in a turn of the verifier's Options.Priority, as its scan is.
	if perr := r.v.opts.Priority.Do(ctx, func(context.Context) { c, err = card.Parse(t.Raw, catalog.StoredCardLimits(r.opts.CardLimits, t.Raw)) }); perr != nil {
		// Cancelled while waiting for a turn: callers drop what a
		// cancelled pass verified.
		return catalog.VerificationInput{AgentID: t.AgentID, Version: t.Version}
	}
	if err == nil {
		rep = r.v.Verify(ctx, c, t.CardURL)
	} else {
		// The card was parsed when stored; a parser that has since become
		// stricter must not leave the version unverified forever. The
		// signatures are over the raw bytes and need no parse.
		r.log.Warn("re-parsing stored card for verification", "agent_id", t.AgentID, "version", t.Version, "err", err)
		rep = &Report{CardURL: t.CardURL, CheckedAt: r.v.now().UTC(), Security: []Finding{}}
		if o := origin(t.CardURL); o != "" {
			rep.Origins = []string{o}
		}
		rep.Signatures = r.v.VerifySignatures(ctx, t.Raw, rep.Origins)
		rep.Publisher = r.v.judgePublisher(ctx, t.CardURL, rep.Signatures)
	}
	if f := r.keyChange(ctx, t, rep); f != nil {
		rep.Security = append(rep.Security, *f)
	}
	in := catalog.VerificationInput{
		AgentID:         t.AgentID,
		Version:         t.Version,
		Status:          string(rep.Signatures.Status),
		VerifiedAt:      rep.CheckedAt,
		TrustGeneration: gen,
		Trust:           string(rep.Signatures.Trust),
		// Publisher verification is stored as its own facet.
		PublisherVerified: rep.Publisher != nil && rep.Publisher.Verified,
	}
	in.Report, err = json.Marshal(rep)
	if err != nil {
		// A Report holds only strings, numbers and times.
		in.Report = []byte(fmt.Sprintf(`{"error":%q}`, err.Error()))
	}
	for _, e := range rep.Signatures.Entries {
		if e.KID != "" && !slices.Contains(in.KIDs, e.KID) {
			in.KIDs = append(in.KIDs, e.KID)
		}
	}
	finding := func(code string, sev Severity) {
		if !slices.Contains(in.AuditCodes, code) {
			in.AuditCodes = append(in.AuditCodes, code)
		}
		if !slices.Contains(in.Severities, string(sev)) {
			in.Severities = append(in.Severities, string(sev))
		}
	}
	for _, f := range rep.Security {
		finding(f.Code, f.Severity)
	}
	for _, f := range rep.Content {
		finding(f.Code, f.Severity)
	}
	if c != nil {
		in.NameKeys = nameKeys(c)
	}
	in.KeysExpireAt = r.keysExpiry(ctx, rep)
	in.RecheckAt = rep.CheckedAt.Add(r.opts.MaxAge)
	if !in.KeysExpireAt.IsZero() {
		in.RecheckAt = minTime(in.RecheckAt, maxTime(in.KeysExpireAt, rep.CheckedAt.Add(r.opts.MinRecheck)))
	}
	return in
}

// keyChange compares rep's signing keys with those of the agent's previous
// version's report (FindingSigningKeyChanged). Without that report there is
// nothing to compare: a version that replaced its predecessor before the
// predecessor was verified is not judged.
func (r *Runner) keyChange(ctx context.Context, t catalog.VerifyTarget, rep *Report) *Finding {
	if t.Version <= 1 {
		return nil
	}
	raw, err := r.store.VersionReport(ctx, t.AgentID, t.Version-1)
	if err != nil {
		r.log.Error("reading the previous version's report", "agent_id", t.AgentID, "version", t.Version-1, "err", err)
		return nil
	}
	if raw == nil {
		return nil
	}
	var prev struct {
		Signatures SignatureReport `json:"signatures"`
	}
	if err := json.Unmarshal(raw, &prev); err != nil {
		r.log.Error("decoding the previous version's report", "agent_id", t.AgentID, "version", t.Version-1, "err", err)
		return nil
	}
	return keyChange(prev.Signatures, rep.Signatures, t.Version-1)
}

// keysExpiry is the earliest time a key the report relied on stops being
// what it was: the cache expiry of a JWKS that verified a signature, the
// not-after of a pinned key that did, and "now" when a JWKS could not be
// fetched (a transient failure worth retrying soon).
func (r *Runner) keysExpiry(ctx context.Context, rep *Report) time.Time {
	var earliest time.Time
	consider := func(t time.Time) {
		if !t.IsZero() && (earliest.IsZero() || t.Before(earliest)) {
			earliest = t
		}
	}
	for _, e := range rep.Signatures.Entries {
		switch {
		case e.Result == ResultKeyFetchFailed:
			consider(rep.CheckedAt)
		case e.Result != ResultVerified && e.Result != ResultKeyChanged || e.Signer == nil:
		case e.Signer.Source == KeySourceJKU || e.Signer.Source == KeySourceTrustedJKU:
			consider(r.v.jwks.expiry(e.Signer.JKU))
		case e.Signer.Source == KeySourcePinned && r.v.opts.Keys != nil:
			keys, err := r.v.opts.Keys.PinnedKeys(ctx, e.KID)
			if err != nil {
				consider(rep.CheckedAt)
				continue
			}
			for _, k := range keys {
				if d := describeKey(e.KID, k.Key, KeySourcePinned, ""); d.Thumbprint == e.Signer.Thumbprint {
					consider(k.NotAfter)
				}
			}
		}
	}
	return earliest
}

// expiry is when the cached key set of u expires; zero when not cached.
func (c *jwksCache) expiry(u string) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entries[u].expires
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
