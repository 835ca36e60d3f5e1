package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/config"
	"github.com/a2aregistry/registry/internal/policy"
	"github.com/a2aregistry/registry/internal/verify"
)

// runPolicy is `registry policy test FILE`: the admission policy in FILE
// judged against every listed agent's current card, what it would do
// printed, nothing changed.
func runPolicy(ctx context.Context, args []string, stdout, stderr io.Writer, getenv env) int {
	if len(args) == 0 || args[0] != "test" {
		fmt.Fprintln(stderr, "Usage: registry policy test [flags] FILE")
		return exitUsage
	}
	cfg, fs, code, ok := loadConfig("policy test", "[flags] FILE", config.Logging|config.Storage|config.Cards, args[1:], stderr, getenv)
	if !ok {
		return code
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitUsage
	}
	p, err := policy.LoadFile(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "registry policy test: %v\n", err)
		return exitFail
	}
	return withStore(ctx, "policy test", cfg, stderr, func(store *catalog.Store, log *slog.Logger) int {
		if err := testPolicy(ctx, store, p, cardLimits(cfg), stdout); err != nil {
			log.Error("policy test failed", "err", err)
			return exitFail
		}
		return exitOK
	})
}

// policyTally counts what a policy would do across the catalog.
type policyTally struct {
	agents, unreadable, changed int
	byAction                    map[policy.Action]int
	failed, errored             map[string]int
	ruleOrder                   []string
}

// testPolicy prints one line per agent the policy would act on or whose
// stored results it would change (id, card URL, what it would do, the
// rules failing, the change from the stored results), then the totals by
// action and by rule.
func testPolicy(ctx context.Context, store *catalog.Store, p *policy.Policy, lim card.Limits, w io.Writer) error {
	bw := bufio.NewWriter(w)
	t := policyTally{byAction: map[policy.Action]int{}, failed: map[string]int{}, errored: map[string]int{}}
	for _, r := range p.Rules() {
		t.ruleOrder = append(t.ruleOrder, r.ID)
	}
	err := store.CurrentCards(ctx, catalog.ScopeAll, func(c catalog.CurrentCard) error {
		t.agents++
		a, err := policyInput(c, lim)
		if err != nil {
			t.unreadable++
			fmt.Fprintf(bw, "%s\t%s\tunreadable\t%v\n", c.AgentID, c.CardURL, err)
			return nil
		}
		ev := p.Evaluate(&a)
		for _, r := range ev.Results {
			switch r.Outcome {
			case policy.OutcomeFail:
				t.failed[r.RuleID]++
			case policy.OutcomeErrored:
				t.errored[r.RuleID]++
			}
		}
		change := resultsChange(c.PolicyFailing, ev.Failing())
		if change != "" {
			t.changed++
		}
		if ev.Action == "" && change == "" {
			return nil
		}
		do := "pass"
		if ev.Action != "" {
			t.byAction[ev.Action]++
			do = wouldDo(ev, c.Listing)
		}
		fmt.Fprintf(bw, "%s\t%s\t%s\t%s\t%s\n", c.AgentID, c.CardURL, do, describeFailures(ev), cmp.Or(change, "results unchanged"))
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(bw, "\n%d agents judged: %d would be refused, %d held, %d flagged, %d unreadable; nothing was changed\n",
		t.agents, t.byAction[policy.ActionReject], t.byAction[policy.ActionHold], t.byAction[policy.ActionFlag], t.unreadable)
	fmt.Fprintf(bw, "%d agents' stored results would change\n", t.changed)
	for _, id := range t.ruleOrder {
		fmt.Fprintf(bw, "rule %s: %d failing, %d errored\n", id, t.failed[id], t.errored[id])
	}
	return bw.Flush()
}

// wouldDo says what the policy's verdict would change for an agent whose
// current version is already stored: a crawl keeps the last compliant
// version of a refused card, so a listed agent goes stale; a held agent
// goes to pending.
func wouldDo(ev policy.Evaluation, listing string) string {
	switch ev.Action {
	case policy.ActionReject:
		r, _ := ev.First(policy.ActionReject)
		return "reject (stale: " + r.RuleID + ")"
	case policy.ActionHold:
		r, _ := ev.First(policy.ActionHold)
		if listing == catalog.ListingPending {
			return "hold (already pending: " + r.RuleID + ")"
		}
		return "hold (" + listing + " -> pending: " + r.RuleID + ")"
	}
	return "flag"
}

// resultsChange says how the rules failing now differ from those stored
// for the agent's current version ("" when they do not): the rules that
// would start failing and those that would stop.
func resultsChange(stored, now []string) string {
	now = slices.Compact(slices.Sorted(slices.Values(now)))
	var started, stopped []string
	for _, id := range now {
		if !slices.Contains(stored, id) {
			started = append(started, id)
		}
	}
	for _, id := range stored {
		if !slices.Contains(now, id) {
			stopped = append(stopped, id)
		}
	}
	var parts []string
	if len(started) > 0 {
		parts = append(parts, "newly failing: "+strings.Join(started, ", "))
	}
	if len(stopped) > 0 {
		parts = append(parts, "no longer failing: "+strings.Join(stopped, ", "))
	}
	return strings.Join(parts, "; ")
}

func describeFailures(ev policy.Evaluation) string {
	var parts []string
	for _, r := range ev.Results {
		switch r.Outcome {
		case policy.OutcomeFail:
			parts = append(parts, r.RuleID+": "+r.Message)
		case policy.OutcomeErrored:
			parts = append(parts, r.RuleID+" errored: "+r.Message)
		}
	}
	return strings.Join(parts, "; ")
}

var errNoCard = errors.New("the stored card does not parse")

// policyInput is what the policy sees of one stored agent: its card, its
// verification report when it has one, its health.
func policyInput(c catalog.CurrentCard, lim card.Limits) (policy.Agent, error) {
	parsed, err := card.Parse(c.Raw, catalog.StoredCardLimits(lim, c.Raw))
	if err != nil {
		return policy.Agent{}, fmt.Errorf("%w: %w", errNoCard, err)
	}
	return verify.PolicyInput(catalog.AdmissionInput{AgentID: c.AgentID, CardURL: c.CardURL, Card: parsed,
		Report: c.Report, SignatureStatus: c.SignatureStatus, Health: c.Health, Source: c.Source,
		Provenance: c.Provenance})
}
