package background

import (
	"context"
	"runtime"
	"sync"
	"time"
)

// Priority lets requests that a person waits for go before background work
// (the crawler's writes and parsing, verification) when both want the
// CPUs. Background work asks for a turn before each CPU-heavy unit; while
// no request is in flight it gets as many turns at once as there are CPUs
// for Go code, and while requests are in flight one fewer per request,
// but never fewer than one, so it slows down but never stops. A unit
// already running is never interrupted: a turn bounds how many start.
//
// On a machine whose CPUs are all busy with crawling, a search otherwise
// queues behind the crawl's threads in the operating system's scheduler
// and in Go's; with Priority the crawl leaves it a CPU.
//
// A nil *Priority gives turns at once and counts nothing, so code that
// takes one works unchanged where no one set priorities.
type Priority struct {
	mu      sync.Mutex
	cpus    int
	fg, bg  int
	waiting int
	waited  time.Duration
	changed chan struct{} // closed and replaced when a turn may have freed
}

// NewPriority returns a Priority for cpus CPUs; cpus < 1 means
// runtime.GOMAXPROCS, read at each decision (the runtime changes it when
// a container's CPU limit changes).
func NewPriority(cpus int) *Priority {
	return &Priority{cpus: cpus, changed: make(chan struct{})}
}

// limitLocked is how many background units may run at once now.
func (p *Priority) limitLocked() int {
	cpus := p.cpus
	if cpus < 1 {
		cpus = runtime.GOMAXPROCS(0)
	}
	return max(1, cpus-p.fg)
}

// broadcastLocked wakes the waiting units, if any, to look again.
func (p *Priority) broadcastLocked() {
	if p.waiting == 0 {
		return
	}
	close(p.changed)
	p.changed = make(chan struct{})
}

// Foreground marks a request in flight until the returned function is
// called (once).
func (p *Priority) Foreground() (done func()) {
	if p == nil {
		return func() {}
	}
	p.mu.Lock()
	p.fg++
	p.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			p.fg--
			p.broadcastLocked()
			p.mu.Unlock()
		})
	}
}

// turnKey marks a context whose goroutine holds a turn of a Priority.
type turnKey struct{}

// Turn waits for a turn of background work. It returns ctx marked as
// holding the turn and the function that ends the turn (call it once),
// or ctx's error if ctx ends first. A Turn asked with a marked context
// (background work nested in another's turn) is granted at once and ends
// with nothing to do: the nested work cannot wait for the turn its own
// caller holds.
func (p *Priority) Turn(ctx context.Context) (context.Context, func(), error) {
	if p == nil || ctx.Value(turnKey{}) == p {
		return ctx, func() {}, nil
	}
	var since time.Time // set once this call waits
	for {
		p.mu.Lock()
		if p.bg < p.limitLocked() {
			p.bg++
			if !since.IsZero() {
				p.waiting--
				p.waited += time.Since(since)
			}
			p.mu.Unlock()
			var once sync.Once
			return context.WithValue(ctx, turnKey{}, p), func() {
				once.Do(func() {
					p.mu.Lock()
					p.bg--
					p.broadcastLocked()
					p.mu.Unlock()
				})
			}, nil
		}
		if since.IsZero() {
			since = time.Now()
			p.waiting++
		}
		ch := p.changed
		p.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			p.mu.Lock()
			p.waiting--
			p.waited += time.Since(since)
			p.mu.Unlock()
			return ctx, nil, ctx.Err()
		}
	}
}

// Do runs fn in a turn of background work, with the marked context; if
// ctx ends before a turn comes, it returns ctx's error without running fn.
func (p *Priority) Do(ctx context.Context, fn func(ctx context.Context)) error {
	ctx, end, err := p.Turn(ctx)
	if err != nil {
		return err
	}
	defer end()
	fn(ctx)
	return nil
}

// PriorityStats is a Priority's state: requests in flight, background
// units running and waiting for a turn, and the time background work has
// waited for turns in all.
type PriorityStats struct {
	Foreground, Background, Waiting int
	Waited                          time.Duration
}

// Stats reports the state; a nil Priority's is zero.
func (p *Priority) Stats() PriorityStats {
	if p == nil {
		return PriorityStats{}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return PriorityStats{Foreground: p.fg, Background: p.bg, Waiting: p.waiting, Waited: p.waited}
}
