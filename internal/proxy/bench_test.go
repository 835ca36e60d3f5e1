package proxy

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/proxy/proxytest"
)

// Run with: go test -run '^$' -bench . -benchtime 2000x ./internal/proxy/
// The figures that matter are the reported p50/p99 of the proxy against
// the direct SDK client over the same peer.

func reportPercentiles(b *testing.B, d []time.Duration, prefix string) {
	slices.Sort(d)
	if len(d) == 0 {
		return
	}
	b.ReportMetric(float64(d[len(d)/2].Microseconds()), prefix+"p50-µs")
	b.ReportMetric(float64(d[len(d)*99/100].Microseconds()), prefix+"p99-µs")
}

// directClient is the a2a-go client over the same loopback client the
// proxy uses, without the proxy.
func directClient(b *testing.B, pe proxytest.Peer) *a2aclient.Client {
	hc := proxytest.Loopback().HTTPClient()
	hc.Timeout = 0
	c, err := a2aclient.NewFactory(a2aclient.WithDefaultsDisabled(), a2aclient.WithJSONRPCTransport(hc)).
		CreateFromEndpoints(context.Background(), []*a2a.AgentInterface{{URL: pe.Interface.URL, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2a.Version}})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

func BenchmarkSend(b *testing.B) {
	pe := proxytest.Start(b, card.BindingJSONRPC, "1.0", proxytest.Options{})
	b.Run("direct", func(b *testing.B) {
		c := directClient(b, pe)
		d := make([]time.Duration, 0, b.N)
		for b.Loop() {
			t0 := time.Now()
			if _, err := c.SendMessage(context.Background(), &a2a.SendMessageRequest{Message: proxytest.Text("hi")}); err != nil {
				b.Fatal(err)
			}
			d = append(d, time.Since(t0))
		}
		reportPercentiles(b, d, "")
	})
	b.Run("proxy", func(b *testing.B) {
		p := New(Options{Client: proxytest.Loopback()})
		call := Call{Card: proxytest.Card(true, pe.Interface)}
		d := make([]time.Duration, 0, b.N)
		for b.Loop() {
			t0 := time.Now()
			if _, err := p.Send(context.Background(), call, proxytest.Text("hi"), false, nil); err != nil {
				b.Fatal(err)
			}
			d = append(d, time.Since(t0))
		}
		reportPercentiles(b, d, "")
	})
}

// BenchmarkFirstEvent measures the time from the call to the first event
// of a stream, directly and relayed by the proxy.
func BenchmarkFirstEvent(b *testing.B) {
	pe := proxytest.Start(b, card.BindingJSONRPC, "1.0", proxytest.Options{})
	b.Run("direct", func(b *testing.B) {
		c := directClient(b, pe)
		d := make([]time.Duration, 0, b.N)
		for b.Loop() {
			t0 := time.Now()
			first := time.Duration(0)
			for _, err := range c.SendStreamingMessage(context.Background(), &a2a.SendMessageRequest{Message: proxytest.Text("hi")}) {
				if err != nil {
					b.Fatal(err)
				}
				if first == 0 {
					first = time.Since(t0)
				}
			}
			d = append(d, first)
		}
		reportPercentiles(b, d, "")
	})
	b.Run("proxy", func(b *testing.B) {
		p := New(Options{Client: proxytest.Loopback()})
		call := Call{Card: proxytest.Card(true, pe.Interface)}
		d := make([]time.Duration, 0, b.N)
		for b.Loop() {
			t0 := time.Now()
			first := time.Duration(0)
			if _, err := p.Send(context.Background(), call, proxytest.Text("hi"), true, func(Event) {
				if first == 0 {
					first = time.Since(t0)
				}
			}); err != nil {
				b.Fatal(err)
			}
			d = append(d, first)
		}
		reportPercentiles(b, d, "")
	})
}

// BenchmarkConcurrentStreams runs 100 streaming runs at once per
// iteration and reports errors and the p99 of a whole run.
func BenchmarkConcurrentStreams(b *testing.B) {
	pe := proxytest.Start(b, card.BindingJSONRPC, "1.0", proxytest.Options{})
	p := New(Options{Client: proxytest.Loopback()})
	call := Call{Card: proxytest.Card(true, pe.Interface)}
	var errs atomic.Int64
	var mu sync.Mutex
	var d []time.Duration
	for b.Loop() {
		var wg sync.WaitGroup
		for range 100 {
			wg.Go(func() {
				t0 := time.Now()
				if _, err := p.Send(context.Background(), call, proxytest.Text("hello concurrent world"), true, nil); err != nil {
					errs.Add(1)
				}
				mu.Lock()
				d = append(d, time.Since(t0))
				mu.Unlock()
			})
		}
		wg.Wait()
	}
	b.ReportMetric(float64(errs.Load()), "errors")
	reportPercentiles(b, d, "run-")
	if hwm, ok := peakRSS(); ok {
		// The whole test process: the proxy and the in-process peer.
		b.ReportMetric(float64(hwm)/(1<<20), "peak-RSS-MiB")
	}
}

// peakRSS reads the process's peak resident set size (Linux VmHWM).
func peakRSS() (int64, bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}
