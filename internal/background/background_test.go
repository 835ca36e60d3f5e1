package background

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// recorder is a slog.Handler that keeps records, so tests assert levels
// and attributes rather than rendered text.
type recorder struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, rec.Clone())
	return nil
}
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *recorder) WithGroup(string) slog.Handler      { return r }

func (r *recorder) records() []slog.Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.recs)
}

func attr(rec slog.Record, key string) slog.Value {
	var v slog.Value
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key == key {
			v = a.Value
			return false
		}
		return true
	})
	return v
}

func TestEverySchedule(t *testing.T) {
	const interval = time.Minute
	tests := []struct {
		desc string
		// work is how long each call takes.
		work time.Duration
		run  time.Duration
		// want are the call start offsets from the start.
		want []time.Duration
	}{
		{"at once, then every interval", 0, 3*interval + interval/2, []time.Duration{0, interval, 2 * interval, 3 * interval}},
		{"a slow call delays the next instead of queueing", 90 * time.Second, 6 * time.Minute, []time.Duration{0, 150 * time.Second, 300 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				var mu sync.Mutex
				var got []time.Duration
				ctx, cancel := context.WithCancel(t.Context())
				done := make(chan struct{})
				go func() {
					defer close(done)
					Every(ctx, nil, "job", interval, func(ctx context.Context) error {
						mu.Lock()
						got = append(got, time.Since(start))
						mu.Unlock()
						time.Sleep(tt.work)
						return nil
					})
				}()
				time.Sleep(tt.run)
				cancel()
				<-done
				if !slices.Equal(got, tt.want) {
					t.Errorf("calls at %v, want %v", got, tt.want)
				}
			})
		})
	}
}

func TestEveryLogsFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		errBoom := errors.New("boom")
		ctx, cancel := context.WithCancel(t.Context())
		var calls atomic.Int32
		done := make(chan struct{})
		go func() {
			defer close(done)
			Every(ctx, slog.New(rec), "prune", time.Second, func(ctx context.Context) error {
				if calls.Add(1) == 3 {
					// Failing because ctx ended is not worth a warning.
					cancel()
					return ctx.Err()
				}
				return errBoom
			})
		}()
		<-done
		recs := rec.records()
		if len(recs) != 2 {
			t.Fatalf("%d log records, want 2 (one per failure before cancel)", len(recs))
		}
		for _, r := range recs {
			if r.Level != slog.LevelWarn || attr(r, "job").String() != "prune" {
				t.Errorf("record level %v job %v", r.Level, attr(r, "job"))
			}
			if err, ok := attr(r, "err").Any().(error); !ok || !errors.Is(err, errBoom) {
				t.Errorf("record err %v, want errBoom", attr(r, "err"))
			}
		}
	})
}

// TestGroupStopWaits: once Stop returns, every goroutine of the group has
// returned and no periodic call starts again, however long we wait.
func TestGroupStopWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := NewGroup(t.Context(), nil)
		var stopped atomic.Bool
		var late, calls atomic.Int32
		g.Every("tick", time.Second, func(ctx context.Context) error {
			if stopped.Load() {
				late.Add(1)
			}
			calls.Add(1)
			return nil
		})
		var blockerExited atomic.Bool
		g.Go("blocker", func(ctx context.Context) error {
			<-ctx.Done()
			// Still busy for a while after cancellation: Stop must wait.
			time.Sleep(time.Minute)
			blockerExited.Store(true)
			return ctx.Err()
		})
		time.Sleep(5*time.Second + time.Millisecond)
		g.Stop()
		stopped.Store(true)
		if !blockerExited.Load() {
			t.Error("Stop returned before a goroutine of the group did")
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		if n := late.Load(); n != 0 {
			t.Errorf("%d calls after Stop returned", n)
		}
		if n := calls.Load(); n != 6 {
			t.Errorf("%d calls in 5s at 1s interval, want 6", n)
		}
		g.Stop() // idempotent
	})
}

func TestGroupGoLogsUnexpectedErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		g := NewGroup(t.Context(), slog.New(rec))
		errBoom := errors.New("boom")
		g.Go("crashes", func(context.Context) error { return errBoom })
		g.Go("cancelled", func(ctx context.Context) error {
			<-ctx.Done()
			return ctx.Err()
		})
		synctest.Wait()
		g.Stop()
		recs := rec.records()
		if len(recs) != 1 {
			t.Fatalf("%d records, want 1: an error after Stop is cancellation, not news", len(recs))
		}
		if recs[0].Level != slog.LevelError || attr(recs[0], "job").String() != "crashes" {
			t.Errorf("record %v job %v", recs[0].Level, attr(recs[0], "job"))
		}
	})
}
