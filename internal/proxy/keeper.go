package proxy

import (
	"sync"
	"time"
)

// Keeper remembers the credentials of conversations in flight, so that a
// tester's follow-ups (a reply to input-required, a cancel, a
// resubscription) need not offer them again. It is memory only, by
// design: credentials never reach the database, a log or a transcript,
// and a restart forgets them (the tester offers them again). An entry is
// keyed by the run AND the subject who gave it, so nobody else, an admin
// who may continue the run included, can spend them; it expires ttl after
// its last use, and the owner forgets it when the run ends. The number of
// entries is bounded: when full, the one closest to expiring goes.
type Keeper struct {
	mu  sync.Mutex
	ttl time.Duration
	max int
	now func() time.Time
	// entries holds, per run, per subject, what they gave.
	entries map[string]map[string]*kept
	n       int
	// swept is when expired entries were last dropped: secrets are not
	// left in memory long past their expiry while the Keeper is in use.
	swept time.Time
}

type kept struct {
	creds   Credentials
	expires time.Time
}

// Keeper defaults.
const (
	DefaultKeeperTTL = 30 * time.Minute
	DefaultKeeperMax = 10000
)

// NewKeeper returns a Keeper of at most max conversations (DefaultKeeperMax
// when not positive), each kept ttl after its last use (DefaultKeeperTTL
// when not positive).
func NewKeeper(max int, ttl time.Duration) *Keeper {
	if max <= 0 {
		max = DefaultKeeperMax
	}
	if ttl <= 0 {
		ttl = DefaultKeeperTTL
	}
	return &Keeper{ttl: ttl, max: max, now: time.Now, entries: map[string]map[string]*kept{}}
}

// Remember keeps cr for the run's later turns by subject. Empty
// credentials keep nothing (and leave what was kept).
func (k *Keeper) Remember(runID, subject string, cr Credentials) {
	if k == nil || cr.Empty() || runID == "" || subject == "" {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	now := k.now()
	k.sweepEvery(now)
	if _, ok := k.entries[runID][subject]; !ok && k.n >= k.max {
		k.sweep(now)
		if k.n >= k.max {
			k.evictOne()
		}
	}
	byRun := k.entries[runID]
	if byRun == nil {
		byRun = map[string]*kept{}
		k.entries[runID] = byRun
	}
	if _, ok := byRun[subject]; !ok {
		k.n++
	}
	byRun[subject] = &kept{creds: cr, expires: now.Add(k.ttl)}
}

// Recall returns the credentials subject gave for the run, if they are
// still kept, and keeps them ttl longer.
func (k *Keeper) Recall(runID, subject string) (Credentials, bool) {
	if k == nil {
		return Credentials{}, false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	now := k.now()
	k.sweepEvery(now)
	e, ok := k.entries[runID][subject]
	if !ok {
		return Credentials{}, false
	}
	if !now.Before(e.expires) {
		k.drop(runID, subject)
		return Credentials{}, false
	}
	e.expires = now.Add(k.ttl)
	return e.creds, true
}

// Holds tells whether subject's credentials for the run are kept, without
// counting as a use.
func (k *Keeper) Holds(runID, subject string) bool {
	if k == nil {
		return false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	e, ok := k.entries[runID][subject]
	return ok && k.now().Before(e.expires)
}

// Forget drops every credential kept for the run, whoever gave it: the
// run has ended.
func (k *Keeper) Forget(runID string) {
	if k == nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.n -= len(k.entries[runID])
	delete(k.entries, runID)
}

// Len is the number of conversations kept (expired ones included until
// they are swept).
func (k *Keeper) Len() int {
	if k == nil {
		return 0
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.n
}

// Use is what a turn of a run should send: the credentials offered with
// it, which are then kept for the next turns, or else the ones kept.
func (k *Keeper) Use(runID, subject string, offered Credentials) Credentials {
	if !offered.Empty() {
		k.Remember(runID, subject, offered)
		return offered
	}
	if cr, ok := k.Recall(runID, subject); ok {
		return cr
	}
	return offered
}

func (k *Keeper) drop(runID, subject string) {
	byRun := k.entries[runID]
	if _, ok := byRun[subject]; !ok {
		return
	}
	delete(byRun, subject)
	k.n--
	if len(byRun) == 0 {
		delete(k.entries, runID)
	}
}

// sweepInterval is how often use of the Keeper drops expired entries.
const sweepInterval = time.Minute

func (k *Keeper) sweepEvery(now time.Time) {
	if now.Sub(k.swept) >= sweepInterval {
		k.sweep(now)
	}
}

// sweep drops expired entries: every sweepInterval of use, and when the
// Keeper is full.
func (k *Keeper) sweep(now time.Time) {
	k.swept = now
	for run, byRun := range k.entries {
		for subject, e := range byRun {
			if !now.Before(e.expires) {
				k.drop(run, subject)
			}
		}
	}
}

func (k *Keeper) evictOne() {
	var (
		run, subject string
		at           time.Time
		found        bool
	)
	for r, byRun := range k.entries {
		for s, e := range byRun {
			if !found || e.expires.Before(at) {
				run, subject, at, found = r, s, e.expires, true
			}
		}
	}
	k.drop(run, subject)
}
