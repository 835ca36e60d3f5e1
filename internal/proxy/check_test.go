package proxy

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/proxy/proxytest"
)

// TestCheckTellsTruthfulFromFalse checks every declared interface of a
// card whose declarations all hold, and of one that declares interfaces it
// does not serve.
func TestCheckTellsTruthfulFromFalse(t *testing.T) {
	p := New(Options{Client: proxytest.Loopback()})
	jsonrpc := proxytest.Start(t, card.BindingJSONRPC, "1.0", proxytest.Options{})
	grpc := proxytest.Start(t, card.BindingGRPC, "1.0", proxytest.Options{})
	rest03 := proxytest.Start(t, card.BindingHTTPJSON, "0.3", proxytest.Options{})

	closedGRPC := proxytest.ClosedURL(t)
	_, port, _ := net.SplitHostPort(closedGRPC[len("http://"):])
	wrongBinding := jsonrpc.Interface
	wrongBinding.Binding = card.BindingHTTPJSON // serves JSON-RPC, declared as REST
	wrongVersion := rest03.Interface
	wrongVersion.ProtocolVersion = "1.0" // serves 0.3, declared as 1.0
	unknown := jsonrpc.Interface
	unknown.ProtocolVersion = card.VersionUnknown

	tests := []struct {
		name   string
		ifaces []card.Interface
		works  []bool
		causes []string
		want   string
	}{
		{"truthful", []card.Interface{jsonrpc.Interface, grpc.Interface, rest03.Interface}, []bool{true, true, true}, []string{"", "", ""}, "all"},
		{"false", []card.Interface{
			jsonrpc.Interface,
			{URL: "127.0.0.1:" + port, Binding: card.BindingGRPC, ProtocolVersion: "1.0"},
			wrongBinding,
			wrongVersion,
			unknown,
		}, []bool{true, false, false, false, false}, []string{"", CodeUnreachable, CodeAgentError, CodeAgentError, CauseUnchecked}, "some"},
		{"nothing served", []card.Interface{{URL: closedGRPC, Binding: card.BindingJSONRPC, ProtocolVersion: "1.0"}}, []bool{false}, []string{CodeUnreachable}, "none"},
		{"nothing checkable", []card.Interface{unknown}, []bool{false}, []string{CauseUnchecked}, "unchecked"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := p.Check(t.Context(), proxytest.Card(true, tt.ifaces...), Credentials{}, nil)
			if len(got) != len(tt.ifaces) {
				t.Fatalf("%d results for %d interfaces", len(got), len(tt.ifaces))
			}
			for i, c := range got {
				if c.Works != tt.works[i] || c.Cause != tt.causes[i] {
					t.Errorf("%s %s %s: works %v cause %q (%s), want %v %q", c.Interface.URL, c.Interface.Binding, c.Interface.ProtocolVersion,
						c.Works, c.Cause, c.Detail, tt.works[i], tt.causes[i])
				}
			}
			if w := Works(got); w != tt.want {
				t.Errorf("Works = %q, want %q", w, tt.want)
			}
		})
	}
}

// countingAgent serves an honest JSON-RPC v1.0 agent that counts the
// requests it gets, each answered after delay.
func countingAgent(t *testing.T, delay time.Duration) (card.Interface, *atomic.Int32) {
	var n atomic.Int32
	pe := proxytest.Start(t, card.BindingJSONRPC, "1.0", proxytest.Options{Wrap: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n.Add(1)
			time.Sleep(delay)
			h.ServeHTTP(w, r)
		})
	}})
	return pe.Interface, &n
}

// TestCheckIsBounded: a check sends to at most MaxChecksPerHost
// interfaces of one host, pays for each interface after the first with
// charge and stops sending when charge refuses, and ends within the
// maximum run duration as a whole; what it did not send to says why, and
// does not count as checked.
func TestCheckIsBounded(t *testing.T) {
	t.Run("per host", func(t *testing.T) {
		in, n := countingAgent(t, 0)
		var ifaces []card.Interface
		for i := range MaxChecksPerHost + 2 {
			ifaces = append(ifaces, card.Interface{URL: fmt.Sprintf("%s/a2a/%d", in.URL, i), Binding: in.Binding, ProtocolVersion: in.ProtocolVersion})
		}
		// The same agent under another host name: another host.
		ifaces = append(ifaces, card.Interface{URL: strings.Replace(in.URL, "127.0.0.1", "localhost", 1), Binding: in.Binding, ProtocolVersion: in.ProtocolVersion})
		got := New(Options{Client: proxytest.Loopback()}).Check(t.Context(), proxytest.Card(false, ifaces...), Credentials{}, nil)
		for i, c := range got {
			want := ""
			if i >= MaxChecksPerHost && i < MaxChecksPerHost+2 {
				want = CauseHostCap
			}
			if c.Cause != want || c.Works != (want == "") {
				t.Errorf("interface %d (%s): works %v cause %q (%s), want cause %q", i, c.Interface.URL, c.Works, c.Cause, c.Detail, want)
			}
		}
		if got := n.Load(); got != MaxChecksPerHost+1 {
			t.Errorf("the agent got %d messages, want %d", got, MaxChecksPerHost+1)
		}
		if w := Works(got); w != "all" {
			t.Errorf("Works = %q, want all: capped interfaces are not checked", w)
		}
	})

	t.Run("charged per interface", func(t *testing.T) {
		in, n := countingAgent(t, 0)
		other, _ := countingAgent(t, 0)
		lim := NewLimiter(Limits{PerUserPerMinute: 3})
		lim.now = func() time.Time { return time.Unix(1e9, 0) }
		release, err := lim.Acquire("ann")
		if err != nil {
			t.Fatal(err)
		}
		defer release()
		charges := 0
		charge := func() error { charges++; return lim.Charge("ann") }
		ifaces := []card.Interface{in, {URL: in.URL, Binding: in.Binding, ProtocolVersion: card.VersionUnknown}, in, in, other, in}
		got := New(Options{Client: proxytest.Loopback()}).Check(t.Context(), proxytest.Card(false, ifaces...), Credentials{}, charge)
		wantCauses := []string{"", CauseUnchecked, "", "", CauseRateLimited, CauseRateLimited}
		for i, c := range got {
			if c.Cause != wantCauses[i] {
				t.Errorf("interface %d: cause %q (%s), want %q", i, c.Cause, c.Detail, wantCauses[i])
			}
		}
		// One run admitted the check and paid for the first interface;
		// two more paid for the next two; the fourth charge was refused
		// and none followed.
		if charges != 3 || n.Load() != 3 {
			t.Errorf("%d charges, %d messages; want 3 and 3", charges, n.Load())
		}
		if _, err := lim.Acquire("ann"); !errors.Is(err, ErrRateLimited) {
			t.Errorf("after a check of three interfaces at a rate of 3: %v, want rate limited", err)
		}
	})

	t.Run("bounded as a whole", func(t *testing.T) {
		const maxRun, delay, n = 500 * time.Millisecond, 200 * time.Millisecond, 8
		in, _ := countingAgent(t, delay)
		ifaces := make([]card.Interface, n)
		for i := range ifaces {
			ifaces[i] = card.Interface{URL: fmt.Sprintf("%s/a2a/%d", in.URL, i), Binding: in.Binding, ProtocolVersion: in.ProtocolVersion}
		}
		start := time.Now()
		got := New(Options{Client: proxytest.Loopback(), MaxRun: maxRun}).Check(t.Context(), proxytest.Card(false, ifaces...), Credentials{}, nil)
		// Each interface answers within the limit; all of them one after
		// the other (n × delay, 1.6 s) would not.
		if d := time.Since(start); d >= n*delay-200*time.Millisecond {
			t.Errorf("the check took %v, want about its limit of %v", d, maxRun)
		}
		if last := got[len(got)-1]; last.Cause != CauseOutOfTime {
			t.Errorf("last interface: cause %q (%s), want %s", last.Cause, last.Detail, CauseOutOfTime)
		}
		for _, c := range got {
			if !c.Works && c.Cause != CauseOutOfTime && c.Cause != CodeRunTimeout {
				t.Errorf("%s: cause %q (%s), want out of time or run timeout", c.Interface.URL, c.Cause, c.Detail)
			}
		}
	})
}
