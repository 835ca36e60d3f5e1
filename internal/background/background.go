// Package background runs the registry's long-lived goroutines under an
// owner. Whoever starts background work holds a Group: Stop cancels the
// work's context and returns only when every goroutine has returned, so
// nothing the group started touches a store closed after Stop.
package background

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Group owns a set of goroutines: they share a context that Stop cancels,
// and Stop waits for all of them.
type Group struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	log    *slog.Logger
}

// NewGroup returns a Group whose goroutines stop when parent ends or Stop
// is called. A nil log discards.
func NewGroup(parent context.Context, log *slog.Logger) *Group {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(parent)
	return &Group{ctx: ctx, cancel: cancel, log: log}
}

// Go runs fn in a goroutine of the group. An error it returns while the
// group is still running is logged under name; errors after Stop began are
// the expected result of cancellation and dropped.
func (g *Group) Go(name string, fn func(ctx context.Context) error) {
	g.wg.Go(func() {
		if err := fn(g.ctx); err != nil && g.ctx.Err() == nil {
			g.log.Error("background job stopped", "job", name, "err", err)
		}
	})
}

// Every runs fn periodically in a goroutine of the group; see Every.
func (g *Group) Every(name string, interval time.Duration, fn func(ctx context.Context) error) {
	g.wg.Go(func() { Every(g.ctx, g.log, name, interval, fn) })
}

// Stop cancels the group's context and waits for its goroutines. It may
// be called more than once.
func (g *Group) Stop() {
	g.cancel()
	g.wg.Wait()
}

// Every calls fn at once and then interval after each call returned, until
// ctx ends; it returns when ctx ends and no call is running. Calls never
// overlap, and a slow call delays the next instead of queueing ticks. A
// call's error is logged as a warning under name (the next call is the
// retry) unless ctx ended meanwhile.
func Every(ctx context.Context, log *slog.Logger, name string, interval time.Duration, fn func(ctx context.Context) error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// Both cases may be ready at once; cancellation wins, so no call
		// starts after ctx ended.
		if ctx.Err() != nil {
			return
		}
		if err := fn(ctx); err != nil && ctx.Err() == nil {
			log.WarnContext(ctx, "periodic job failed", "job", name, "err", err)
		}
		t.Reset(interval)
	}
}
