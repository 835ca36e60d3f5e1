package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/config"
	"github.com/a2aregistry/registry/internal/policy"
	"github.com/a2aregistry/registry/internal/synth"
)

// cpuTime is the CPU time the process has used so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPolicyTest is `registry policy test` with a 20-rule policy over
// a synthetic SQLite catalog (REGISTRY_BENCH_AGENTS agents, 2,000 unless
// set); it reports the time per agent, against the budget of 30 s
// for 100,000 agents (300 µs per agent).
func BenchmarkPolicyTest(b *testing.B) {
	n := 2000
	if v, err := strconv.Atoi(os.Getenv("REGISTRY_BENCH_AGENTS")); err == nil && v > 0 {
		n = v
	}
	ctx := context.Background()
	s := catalogtest.SQLite(b)
	lim := cardLimits(config.Default())
	gen := synth.New(1)
	const batch = 500
	for start := 0; start < n; start += batch {
		var ins []catalog.UpsertInput
		for i := start; i < min(start+batch, n); i++ {
			c, err := card.Parse(gen.Card(i), lim)
			if err != nil {
				b.Fatal(err)
			}
			ins = append(ins, catalog.UpsertInput{CardURL: fmt.Sprintf("https://a%d.example.com/.well-known/agent-card.json", i), Card: c, Source: catalog.SourceURL})
		}
		if _, err := s.UpsertBatch(ctx, catalog.System("bench"), ins); err != nil {
			b.Fatal(err)
		}
	}
	exprs := []string{
		`agent.signed_by_trusted_key`, `agent.signature_status == "verified"`,
		`agent.interfaces.all(i, i.url.startsWith("https://"))`, `!agent.content_findings.exists(f, f.severity == "error")`,
		`!agent.anonymous`, `agent.security_schemes.exists(s, s.type in ["oauth2", "openIdConnect", "mutualTLS"])`,
		`agent.signatures.all(s, s.alg in ["ES256", "EdDSA", "RS256"])`, `!agent.lint_findings.exists(f, f.severity == "error")`,
		`agent.health != "down"`, `"1.0" in agent.protocol_versions`, `agent.interfaces.all(i, i.probe in ["", "confirmed"])`,
		`agent.name.size() <= 100`, `agent.signatures.all(s, s.key_source != "jku")`, `agent.lint_findings.size() < 20`,
		`!agent.name.lowerAscii().contains("test")`, `agent.interfaces.size() <= 8`, `agent.security_schemes.size() <= 8`,
	}
	// Three more rules either read the published card or do not, so the
	// two runs show what decoding the card costs.
	for _, tc := range []struct {
		name  string
		extra []string
	}{
		{"card", []string{`agent.card.skills.size() > 0`, `has(agent.card.description)`, `agent.card.name == agent.name`}},
		{"no-card", []string{`agent.content_findings.size() < 5`, `agent.protocol_versions.size() > 0`, `agent.health != "removed"`}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var rules strings.Builder
			rules.WriteString("rules:\n")
			for i, e := range append(slices.Clone(exprs), tc.extra...) {
				fmt.Fprintf(&rules, "  - id: r%d\n    expression: %q\n    action: flag\n    message: m\n", i, e)
			}
			p, err := policy.Parse([]byte(rules.String()))
			if err != nil {
				b.Fatal(err)
			}
			cpu0 := cpuTime(b)
			for b.Loop() {
				if err := testPolicy(ctx, s, p, lim, io.Discard); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/agent")
			// CPU time (user and system, every thread, GC included) tells
			// the command's cost apart from the machine's load, which
			// stretches the wall time.
			b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/float64(b.N*n), "cpu-µs/agent")
		})
	}
}
