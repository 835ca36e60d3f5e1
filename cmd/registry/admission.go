package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/policy"
	"github.com/a2aregistry/registry/internal/verify"
)

// policyPollInterval is how often serve looks at the policy file's
// modification time and size.
const policyPollInterval = 5 * time.Second

// policyFile is serve's admission policy: the file loaded at start, and
// reloaded on SIGHUP and when it changes. A new file that does not load is
// refused whole; the policy in force stays, and the error is logged and
// shown in /readyz until a good file replaces it.
type policyFile struct {
	path string
	log  *slog.Logger
	set  func(*verify.Admission)

	// changed holds a signal when a policy came into force that the
	// catalog has not been judged by (rejudgeLoop).
	changed chan struct{}

	mu       sync.Mutex
	stamp    fileStamp // of the file last read, good or bad
	loaded   *verify.Admission
	loadedAt time.Time
	lastErr  error
	failedAt time.Time
}

// fileStamp tells a changed file from an unchanged one without reading it.
type fileStamp struct {
	mod  time.Time
	size int64
}

// loadPolicyFile reads and compiles the policy at path: an error names
// the rule at fault, and serve does not start. Nothing enforces it until
// attach.
func loadPolicyFile(path string, log *slog.Logger) (*policyFile, error) {
	adm, stamp, err := readPolicy(path)
	if err != nil {
		return nil, fmt.Errorf("admission policy %s: %w", path, err)
	}
	log.Info("admission policy loaded", "path", path, "rules", len(adm.Policy().Rules()), "digest", adm.Digest())
	pf := &policyFile{path: path, log: log, stamp: stamp, loaded: adm, loadedAt: time.Now().UTC(), changed: make(chan struct{}, 1)}
	// Agents a former policy judged (or none did) are judged by this
	// one: a restart with a changed file is a reload too.
	pf.changed <- struct{}{}
	return pf, nil
}

// attach hands the policy, and every policy reloaded later, to set.
func (pf *policyFile) attach(set func(*verify.Admission)) {
	pf.mu.Lock()
	defer pf.mu.Unlock()
	pf.set = set
	set(pf.loaded)
}

func readPolicy(path string) (*verify.Admission, fileStamp, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fileStamp{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fileStamp{}, err
	}
	stamp := fileStamp{mod: st.ModTime(), size: st.Size()}
	raw, err := io.ReadAll(io.LimitReader(f, policy.MaxFileBytes+1))
	if err != nil {
		return nil, stamp, fmt.Errorf("reading: %w", err)
	}
	p, err := policy.Parse(raw)
	if err != nil {
		return nil, stamp, err
	}
	return verify.NewAdmission(p, raw), stamp, nil
}

// reload reads the file again; a policy that does not load leaves the one
// in force. force reads it even when it looks unchanged (SIGHUP).
func (pf *policyFile) reload(force bool) {
	pf.mu.Lock()
	defer pf.mu.Unlock()
	if !force {
		st, err := os.Stat(pf.path)
		if err == nil && (fileStamp{mod: st.ModTime(), size: st.Size()}) == pf.stamp {
			return
		}
	}
	adm, stamp, err := readPolicy(pf.path)
	pf.stamp = stamp
	if err != nil {
		pf.lastErr, pf.failedAt = err, time.Now().UTC()
		pf.log.Error("admission policy refused; the policy in force stays", "path", pf.path, "err", err,
			"digest", pf.loaded.Digest())
		return
	}
	pf.loaded, pf.loadedAt, pf.lastErr = adm, time.Now().UTC(), nil
	pf.set(adm)
	select {
	case pf.changed <- struct{}{}:
	default: // a judgement is due already; it reads the policy in force
	}
	pf.log.Info("admission policy reloaded", "path", pf.path, "rules", len(adm.Policy().Rules()), "digest", adm.Digest())
}

// watchSignals reloads the policy on SIGHUP and when the file changes,
// until ctx is done.
func (pf *policyFile) watchSignals(ctx context.Context) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	pf.watch(ctx, hup, policyPollInterval)
}

// watch reloads the policy on each value of hup, and when the file
// changes (looked at every poll), until ctx is done.
func (pf *policyFile) watch(ctx context.Context, hup <-chan os.Signal, poll time.Duration) {
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			pf.reload(true)
		case <-tick.C:
			pf.reload(false)
		}
	}
}

// rejudger judges the catalog by the policy in force
// (catalog.Store.Rejudge).
type rejudger interface {
	Rejudge(ctx context.Context, actor catalog.Actor) (catalog.RejudgeStats, error)
}

// policyActor is who the audit log records as judging the catalog again.
var policyActor = catalog.System("policy")

// rejudgeLoop judges every agent's current version again each time a
// policy comes into force (at start, for agents a former policy judged,
// and after each reload), until ctx is done. A run that a newer policy
// overtakes stops, and the next judges by that one. A policy refused on
// reload changes nothing: the one in force has judged the catalog.
func (pf *policyFile) rejudgeLoop(ctx context.Context, store rejudger) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-pf.changed:
		}
		start := time.Now()
		st, err := store.Rejudge(ctx, policyActor)
		if err != nil {
			if ctx.Err() == nil {
				pf.log.Error("judging the catalog by the admission policy failed; the next reload or restart resumes it", "err", err, "digest", st.Digest)
			}
			continue
		}
		if st.Judged > 0 {
			pf.log.Info("catalog judged by the admission policy", "digest", st.Digest, "judged", st.Judged, "changed", st.Changed,
				"held", st.Held, "released", st.Released, "complete", st.Done, "duration_ms", time.Since(start).Milliseconds())
		}
	}
}

// readyPolicy is the policy part of /readyz.
type readyPolicy struct {
	Path     string    `json:"path"`
	Digest   string    `json:"digest"`
	Rules    int       `json:"rules"`
	LoadedAt time.Time `json:"loaded_at"`
	// Error is why the file as it is now was refused; the policy above
	// stays in force.
	Error    string     `json:"error,omitempty"`
	FailedAt *time.Time `json:"failed_at,omitempty"`
}

// state is what /readyz shows of the policy.
func (pf *policyFile) state() *readyPolicy {
	pf.mu.Lock()
	defer pf.mu.Unlock()
	r := &readyPolicy{Path: pf.path, Digest: pf.loaded.Digest(), Rules: len(pf.loaded.Policy().Rules()), LoadedAt: pf.loadedAt}
	if pf.lastErr != nil {
		at := pf.failedAt
		r.Error, r.FailedAt = pf.lastErr.Error(), &at
	}
	return r
}
