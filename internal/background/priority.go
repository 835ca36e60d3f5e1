package background

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"time"
)

// Priority lets requests that a person waits for go before background work
// (the crawler's claims, writes and parsing, verification) when both want
// the CPUs. Background work asks for a turn before each CPU-heavy unit;
// while no request has come for arrivalWindow it gets as many turns at
// once as there are CPUs for Go code; while requests keep coming it
// leaves one of them to the next arrival (arrivalReserve), and while
// requests are in flight (and for foregroundLinger after the last) one
// fewer again per request, but never fewer than one, so it slows down
// but never stops. Waiting units get turns
// first come first served. A unit already running is never interrupted:
// a turn bounds how many start.
//
// On a machine whose CPUs are all busy with crawling, a search otherwise
// queues behind the crawl's threads in the operating system's scheduler
// and in Go's; with Priority the crawl leaves it a CPU.
//
// A nil *Priority gives turns at once and counts nothing, so code that
// takes one works unchanged where no one set priorities.
type Priority struct {
	mu     sync.Mutex
	cpus   int
	fg, bg int
	// queue holds the units waiting for a turn, first come first
	// served. A freed turn goes to the head alone: waking every waiter to
	// look again would fill the scheduler's run queues, at every end of
	// a request, with goroutines of which one gets the turn, and a
	// request's goroutine would queue behind them.
	queue  []*waiter
	waited time.Duration
	// lastFg is when the last request ended. For foregroundLinger after
	// it the limit stays as if it were in flight: a client sends its next
	// request moments after an answer, and a long unit started in that
	// gap (a batch of crawl writes takes tens of milliseconds) would hold
	// the CPU the request then waits for until the runtime preempts it.
	lastFg time.Time
	// regrant is set while a timer will hand out the turns the linger or
	// the arrival window holds back when it ends.
	regrant *time.Timer
}

// foregroundLinger is how long after a request ends background work
// stays limited as while it ran.
const foregroundLinger = 5 * time.Millisecond

type waiter struct {
	since   time.Time
	granted chan struct{} // closed when the turn is the waiter's
}

// NewPriority returns a Priority for cpus CPUs; cpus < 1 means
// runtime.GOMAXPROCS, read at each decision (the runtime changes it when
// a container's CPU limit changes).
func NewPriority(cpus int) *Priority {
	return &Priority{cpus: cpus}
}

// limitLocked is how many background units may run at once now.
func (p *Priority) limitLocked() int {
	cpus := p.cpus
	if cpus < 1 {
		cpus = runtime.GOMAXPROCS(0)
	}
	fg := p.fg
	if fg == 0 && p.lingering() > 0 {
		fg = 1
	}
	reserve := 0
	if p.expecting() {
		reserve = arrivalReserve
	}
	return max(1, cpus-reserve-fg)
}

// expecting reports whether requests have been coming lately, so that
// another may arrive any moment: one is in flight, or the last ended less
// than arrivalWindow ago.
func (p *Priority) expecting() bool {
	return p.fg > 0 || p.sinceLastFg() < arrivalWindow
}

// sinceLastFg is how long ago the last request ended; very long if none
// has.
func (p *Priority) sinceLastFg() time.Duration {
	if p.lastFg.IsZero() {
		return time.Duration(1<<63 - 1)
	}
	return time.Since(p.lastFg)
}

// nextChangeLocked is how long until the limit rises on its own with no
// request in flight (the linger or the arrival window ending), or 0 if it
// will not.
func (p *Priority) nextChangeLocked() time.Duration {
	if p.fg > 0 {
		return 0
	}
	since := p.sinceLastFg()
	switch {
	case since < foregroundLinger:
		return foregroundLinger - since
	case since < arrivalWindow:
		return arrivalWindow - since
	}
	return 0
}

// arrivalReserve is how many CPUs background work leaves to requests
// that have not arrived yet. Go notices that a connection has data only
// when a P runs out of goroutines and polls the network, or when sysmon
// polls it, at most every 10 ms (findRunnable and sysmon in
// runtime/proc.go); with every P busy with background work, an arriving
// request waits unseen for that poll and then in the global run queue
// behind the background's goroutines. A P left idle waits in the
// network poller and runs the request at once.
const arrivalReserve = 1

// arrivalWindow is how long after the last request background work keeps
// arrivalReserve free: people and agents searching send requests seconds
// apart at most, while a registry nobody uses (a first crawl at night)
// gives its background work every CPU.
const arrivalWindow = 2 * time.Second

// lingering is how long the limit stays held after the last request.
func (p *Priority) lingering() time.Duration {
	return max(0, foregroundLinger-p.sinceLastFg())
}

// grantLocked hands the turns free now to the waiters at the head of the
// queue.
func (p *Priority) grantLocked() {
	for len(p.queue) > 0 && p.bg < p.limitLocked() {
		w := p.queue[0]
		p.queue[0] = nil
		p.queue = p.queue[1:]
		p.bg++
		p.waited += time.Since(w.since)
		close(w.granted)
	}
	if len(p.queue) == 0 {
		p.queue = nil // let the backing array go
		return
	}
	if d := p.nextChangeLocked(); d > 0 && p.regrant == nil {
		p.regrant = time.AfterFunc(d, func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.regrant = nil
			p.grantLocked()
		})
	}
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
			p.lastFg = time.Now()
			p.grantLocked()
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
	p.mu.Lock()
	if len(p.queue) == 0 && p.bg < p.limitLocked() {
		p.bg++
		p.mu.Unlock()
		return p.held(ctx)
	}
	w := &waiter{since: time.Now(), granted: make(chan struct{})}
	p.queue = append(p.queue, w)
	// Arms the timer when only the linger holds the turn back.
	p.grantLocked()
	p.mu.Unlock()
	select {
	case <-w.granted:
		return p.held(ctx)
	case <-ctx.Done():
		p.mu.Lock()
		defer p.mu.Unlock()
		select {
		case <-w.granted:
			// Granted meanwhile: hand the turn on.
			p.bg--
		default:
			if i := slices.Index(p.queue, w); i >= 0 {
				p.queue = slices.Delete(p.queue, i, i+1)
			}
			p.waited += time.Since(w.since)
		}
		p.grantLocked()
		return ctx, nil, ctx.Err()
	}
}

// held returns ctx marked as holding a turn and the function that ends
// it.
func (p *Priority) held(ctx context.Context) (context.Context, func(), error) {
	var once sync.Once
	return context.WithValue(ctx, turnKey{}, p), func() {
		once.Do(func() {
			p.mu.Lock()
			p.bg--
			p.grantLocked()
			p.mu.Unlock()
		})
	}, nil
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
	return PriorityStats{Foreground: p.fg, Background: p.bg, Waiting: len(p.queue), Waited: p.waited}
}
