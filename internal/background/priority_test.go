package background

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// turnAsync asks for a turn in a goroutine and reports when it got one.
func turnAsync(t *testing.T, p *Priority, ctx context.Context) (got *atomic.Bool, end func() func(), errc chan error) {
	t.Helper()
	got = new(atomic.Bool)
	ends := make(chan func(), 1)
	errc = make(chan error, 1)
	go func() {
		_, e, err := p.Turn(ctx)
		if err != nil {
			errc <- err
			return
		}
		got.Store(true)
		ends <- e
	}()
	return got, func() func() { return <-ends }, errc
}

func TestPriorityTurns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		p := NewPriority(3)

		// No request yet: as many turns as CPUs, and the next waits.
		_, end1, err := p.Turn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_, end2, err := p.Turn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_, end3, err := p.Turn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got4, end4, _ := turnAsync(t, p, ctx)
		synctest.Wait()
		if got4.Load() {
			t.Fatal("a fourth turn on 3 CPUs was granted")
		}

		// A request in flight: one CPU for it and one for the next
		// arrival, so the limit falls to 1 and ending two of the three
		// running turns does not let the fourth start.
		done := p.Foreground()
		end1()
		end2()
		synctest.Wait()
		if got4.Load() {
			t.Fatal("a second background turn started while a request was in flight")
		}
		if st := p.Stats(); st.Foreground != 1 || st.Background != 1 || st.Waiting != 1 {
			t.Fatalf("Stats = %+v; want 1 foreground, 1 background, 1 waiting", st)
		}
		time.Sleep(time.Second) // the fourth waits a second more (synctest's clock)

		// The request ends: the limit stays 1 a moment, as a client's
		// next request follows at once, then is 2 (one CPU still kept
		// for arrivals) and the fourth starts.
		done()
		done() // a second call changes nothing
		synctest.Wait()
		if got4.Load() {
			t.Fatal("the waiting turn started the moment the request ended")
		}
		time.Sleep(foregroundLinger)
		synctest.Wait()
		if !got4.Load() {
			t.Fatal("the waiting turn did not start once the request had ended")
		}
		end3()
		end4()()
		if st := p.Stats(); st.Foreground != 0 || st.Background != 0 || st.Waiting != 0 || st.Waited != time.Second+foregroundLinger {
			t.Fatalf("Stats after all ended = %+v; want nothing in flight and 1s waited", st)
		}
	})
}

func TestPriorityNeverStopsBackground(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := NewPriority(2)
		var dones []func()
		for range 5 {
			dones = append(dones, p.Foreground())
		}
		// More requests than CPUs: background still gets one turn.
		_, end, err := p.Turn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		got, _, _ := turnAsync(t, p, context.Background())
		synctest.Wait()
		if got.Load() {
			t.Fatal("a second turn started with 5 requests in flight")
		}
		end()
		synctest.Wait()
		if !got.Load() {
			t.Fatal("the one background turn was not handed on")
		}
		for _, d := range dones {
			d()
		}
	})
}

func TestPriorityCancelledWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := NewPriority(1)
		_, end, _ := p.Turn(context.Background())
		defer end()
		ctx, cancel := context.WithCancel(context.Background())
		got, _, errc := turnAsync(t, p, ctx)
		synctest.Wait()
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Fatalf("Turn after cancel: %v, want context.Canceled", err)
		}
		if got.Load() {
			t.Fatal("a cancelled wait got a turn")
		}
		ran := false
		if err := p.Do(ctx, func(context.Context) { ran = true }); !errors.Is(err, context.Canceled) || ran {
			t.Fatalf("Do with a cancelled context: err %v, ran %v", err, ran)
		}
		if st := p.Stats(); st.Background != 1 || st.Waiting != 0 {
			t.Fatalf("Stats = %+v, want 1 running and none waiting (the cancelled waits took none)", st)
		}
	})
}

// Background work nested in another's turn (a verification started by a
// write that holds the turn) must not wait for that turn: with one CPU
// it would wait forever.
func TestPriorityNestedTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := NewPriority(1)
		finished := make(chan struct{})
		go func() {
			defer close(finished)
			_ = p.Do(context.Background(), func(ctx context.Context) {
				_ = p.Do(ctx, func(context.Context) {})
			})
		}()
		synctest.Wait()
		select {
		case <-finished:
		default:
			t.Fatal("a turn nested in another's waited for it")
		}
		if st := p.Stats(); st.Background != 0 {
			t.Fatalf("Stats after both ended = %+v", st)
		}
		// Another Priority's turn is not this one's.
		other := NewPriority(1)
		_, endOther, _ := other.Turn(context.Background())
		defer endOther()
		err := p.Do(context.Background(), func(ctx context.Context) {
			got, _, _ := turnAsync(t, other, ctx)
			synctest.Wait()
			if got.Load() {
				t.Error("a turn of one Priority let work past another's limit")
			}
			endOther()
			synctest.Wait()
			if !got.Load() {
				t.Error("the other Priority's turn did not come once free")
			}
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

func TestNilPriority(t *testing.T) {
	var p *Priority
	p.Foreground()()
	ctx, end, err := p.Turn(context.Background())
	if err != nil || ctx == nil {
		t.Fatalf("nil Priority Turn: %v", err)
	}
	end()
	ran := false
	if err := p.Do(context.Background(), func(context.Context) { ran = true }); err != nil || !ran {
		t.Fatalf("nil Priority Do: %v, ran %v", err, ran)
	}
}

// NewPriority(0) follows GOMAXPROCS.
func TestPriorityFollowsGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	p := NewPriority(0)
	var ends []func()
	for range 3 {
		_, end, err := p.Turn(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		ends = append(ends, end)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, _, err := p.Turn(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a fourth turn with GOMAXPROCS 3: %v, want a wait until the deadline", err)
	}
	for _, end := range ends {
		end()
	}
}

// A freed turn goes to the unit that has waited longest, and wakes it
// alone: the others stay queued, in order, and a cancelled waiter leaves
// its place to the next.
func TestPriorityHandsTurnsOverInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		p := NewPriority(1)
		_, end, _ := p.Turn(ctx)
		got1, end1, _ := turnAsync(t, p, ctx)
		synctest.Wait()
		cctx, cancel := context.WithCancel(ctx)
		got2, _, errc2 := turnAsync(t, p, cctx)
		synctest.Wait()
		got3, end3, _ := turnAsync(t, p, ctx)
		synctest.Wait()
		if st := p.Stats(); st.Background != 1 || st.Waiting != 3 {
			t.Fatalf("Stats = %+v, want 1 running and 3 waiting", st)
		}
		end()
		synctest.Wait()
		if !got1.Load() || got2.Load() || got3.Load() {
			t.Fatalf("after the first turn ended: granted %v %v %v, want the first waiter alone", got1.Load(), got2.Load(), got3.Load())
		}
		cancel()
		if err := <-errc2; !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled waiter: %v", err)
		}
		if st := p.Stats(); st.Waiting != 1 {
			t.Fatalf("Stats = %+v, want the third waiter alone waiting", st)
		}
		end1()()
		synctest.Wait()
		if !got3.Load() {
			t.Fatal("the third waiter did not get the turn the first ended")
		}
		end3()()
		if st := p.Stats(); st.Background != 0 || st.Waiting != 0 {
			t.Fatalf("Stats = %+v, want nothing running or waiting", st)
		}
	})
}

// A unit that queues while only the linger after a request holds the
// second turn back gets it when the linger ends, though the running unit
// goes on.
func TestPriorityLingerEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		p := NewPriority(3)
		_, end, _ := p.Turn(ctx)
		defer end()
		p.Foreground()()
		got, end2, _ := turnAsync(t, p, ctx)
		synctest.Wait()
		if got.Load() {
			t.Fatal("a second turn started right after a request ended")
		}
		time.Sleep(foregroundLinger)
		synctest.Wait()
		if !got.Load() {
			t.Fatal("the second turn did not start when the linger ended")
		}
		end2()()
	})
}

// How many units may run at once: every CPU while nobody has searched
// for arrivalWindow; while requests keep coming one CPU is left to the
// next arrival, one more to each request in flight (or one lingering
// after the last), and background work always keeps one turn.
func TestPriorityLimit(t *testing.T) {
	const never = -1
	for _, tc := range []struct {
		name      string
		cpus, fg  int
		lastEnded time.Duration // ago; never: no request yet
		wantTurns int
	}{
		{name: "one CPU, idle", cpus: 1, lastEnded: never, wantTurns: 1},
		{name: "one CPU, a request", cpus: 1, fg: 1, lastEnded: never, wantTurns: 1},
		{name: "two CPUs, no request yet", cpus: 2, lastEnded: never, wantTurns: 2},
		{name: "two CPUs, a request", cpus: 2, fg: 1, lastEnded: never, wantTurns: 1},
		{name: "two CPUs, just after a request", cpus: 2, lastEnded: 0, wantTurns: 1},
		{name: "two CPUs, requests coming", cpus: 2, lastEnded: time.Second, wantTurns: 1},
		{name: "two CPUs, quiet for the window", cpus: 2, lastEnded: arrivalWindow, wantTurns: 2},
		{name: "four CPUs, no request yet", cpus: 4, lastEnded: never, wantTurns: 4},
		{name: "four CPUs, requests coming", cpus: 4, lastEnded: time.Second, wantTurns: 3},
		{name: "four CPUs, a request", cpus: 4, fg: 1, lastEnded: never, wantTurns: 2},
		{name: "four CPUs, just after a request", cpus: 4, lastEnded: 0, wantTurns: 2},
		{name: "four CPUs, two requests", cpus: 4, fg: 2, lastEnded: time.Second, wantTurns: 1},
		{name: "four CPUs, ten requests", cpus: 4, fg: 10, lastEnded: never, wantTurns: 1},
		{name: "eight CPUs, requests coming", cpus: 8, lastEnded: time.Second, wantTurns: 7},
	} {
		// synctest's clock stands still, so nothing ends between
		// setting the state and reading the limit.
		synctest.Test(t, func(t *testing.T) {
			p := NewPriority(tc.cpus)
			p.fg = tc.fg
			if tc.lastEnded != never {
				p.lastFg = time.Now().Add(-tc.lastEnded)
			}
			p.mu.Lock()
			got := p.limitLocked()
			p.mu.Unlock()
			if got != tc.wantTurns {
				t.Errorf("%s: limit = %d, want %d", tc.name, got, tc.wantTurns)
			}
		})
	}
}

// A unit waiting only because requests came lately gets its turn when the
// arrival window ends, with no request or turn ending to wake it.
func TestPriorityArrivalWindowEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		p := NewPriority(2)
		p.Foreground()()
		_, end, err := p.Turn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer end()
		got, end2, _ := turnAsync(t, p, ctx)
		time.Sleep(foregroundLinger)
		synctest.Wait()
		if got.Load() {
			t.Fatal("a second turn on 2 CPUs started while requests were still expected")
		}
		time.Sleep(arrivalWindow - foregroundLinger)
		synctest.Wait()
		if !got.Load() {
			t.Fatal("the second turn did not start when the arrival window ended")
		}
		end2()()
	})
}
