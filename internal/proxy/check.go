package proxy

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aregistry/registry/internal/card"
)

// CheckMessage is what a declared-vs-working check sends to each
// interface: short, and saying what it is to whoever reads the agent's logs.
const CheckMessage = "Registry check: this message tests that the interface answers. Please ignore it."

// checkTimeout bounds the check of one interface.
const checkTimeout = 30 * time.Second

// MaxChecksPerHost is how many of a card's interfaces on one host a check
// sends to. A card may declare any number of interfaces, and each costs
// whoever serves it a real request: without a cap, one check of a card
// listing a hundred URLs on someone else's host would have the registry
// send that host a hundred messages. Eight covers the three bindings in
// both protocol versions an honest agent may serve from one host.
const MaxChecksPerHost = 8

// Causes of an interface that does not work, besides the operation error
// codes (agent_unreachable, agent_error, credentials_invalid, …).
const (
	// CauseUnchecked: the card declares no protocol version for the
	// interface, so no wire format could be chosen honestly.
	CauseUnchecked = "unchecked"
	// CauseMalformed: the agent answered, but broke the protocol (see
	// the violations) or answered with neither a task nor a message.
	CauseMalformed = "malformed"
	// CauseHostCap: not checked, because the card declares more than
	// MaxChecksPerHost interfaces on the interface's host.
	CauseHostCap = "host_cap"
	// CauseRateLimited: not checked, because the caller's rate of test
	// runs was used up (each interface checked costs one run).
	CauseRateLimited = "rate_limited"
	// CauseOutOfTime: not checked, because the check as a whole passed
	// the maximum run duration before reaching the interface.
	CauseOutOfTime = "out_of_time"
)

// notChecked tells the causes of an interface the check did not send to.
func notChecked(cause string) bool {
	switch cause {
	case CauseUnchecked, CauseHostCap, CauseRateLimited, CauseOutOfTime:
		return true
	}
	return false
}

// InterfaceCheck is whether one declared interface really works: it
// answered one small message, in its declared binding and version (the
// SDK client of exactly that binding and version decoded the answer), with
// a well-formed task or message.
type InterfaceCheck struct {
	Interface card.Interface
	Works     bool
	// Cause is empty when Works; otherwise an error code or a Cause*
	// constant.
	Cause      string
	Detail     string
	Duration   time.Duration
	State      string
	Violations []Violation
}

// Check sends CheckMessage over every declared interface, one at a time,
// never falling back to another: each interface answers for itself. It
// runs only when a tester asks, since it costs the agent's owner real
// requests, and it is bounded like the runs it is made of: at most
// MaxChecksPerHost interfaces of one host are sent to; the whole check
// lasts at most the maximum run duration (Options.MaxRun), each interface
// at most 30 seconds of it; and charge, when not nil, is called before
// every interface after the first one sent to — the caller's admission
// paid for that one — so that each costs the caller one run of their rate
// (Limiter.Charge). An interface not sent to says why (CauseHostCap,
// CauseRateLimited, CauseOutOfTime).
func (p *Proxy) Check(ctx context.Context, c *card.Card, creds Credentials, charge func() error) []InterfaceCheck {
	ctx, cancel := context.WithTimeout(ctx, p.opts.MaxRun)
	defer cancel()
	out := make([]InterfaceCheck, 0, len(c.Interfaces))
	perHost := map[string]int{}
	sent := 0
	var refused error
	for _, in := range c.Interfaces {
		ic := InterfaceCheck{Interface: in}
		host := checkHost(in.URL)
		switch {
		case in.ProtocolVersion == card.VersionUnknown:
			ic.Cause, ic.Detail = CauseUnchecked, "the card declares no protocol version for this interface"
		case perHost[host] >= MaxChecksPerHost:
			ic.Cause, ic.Detail = CauseHostCap, fmt.Sprintf("not checked: a check sends to at most %d interfaces on one host", MaxChecksPerHost)
		case ctx.Err() != nil:
			ic.Cause, ic.Detail = CauseOutOfTime, fmt.Sprintf("not checked: the check passed its limit of %s first", p.opts.MaxRun)
		case refused == nil && sent > 0 && charge != nil:
			refused = charge()
		}
		if refused != nil && ic.Cause == "" {
			ic.Cause, ic.Detail = CauseRateLimited, "not checked: each interface checked counts as one test run, and your rate of runs is used up"
		}
		if ic.Cause != "" {
			out = append(out, ic)
			continue
		}
		perHost[host]++
		sent++
		cctx, cancel := context.WithTimeout(ctx, min(checkTimeout, p.opts.MaxRun))
		call := Call{Card: c, Choice: Choice{URL: in.URL, Binding: in.Binding, Version: in.ProtocolVersion}, Credentials: creds}
		x, err := p.Send(cctx, call, a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(CheckMessage)), false, nil)
		cancel()
		if x != nil {
			ic.Duration, ic.State, ic.Violations = x.Duration, x.State(), x.Violations
		}
		switch {
		case err != nil:
			ic.Cause, ic.Detail = ErrorCode(err), capDetail(err.Error())
		case len(x.Violations) > 0:
			ic.Cause, ic.Detail = CauseMalformed, x.Violations[0].Detail
		case x.Task == nil && x.Message == nil:
			ic.Cause, ic.Detail = CauseMalformed, "the agent answered with neither a task nor a message"
		default:
			ic.Works = true
		}
		out = append(out, ic)
	}
	return out
}

// checkHost is the host an interface URL (or bare gRPC host:port) is
// served from, the port left out: one machine, whatever port it listens
// on, is one host to spare.
func checkHost(raw string) string {
	h := hostOf(raw)
	if name, _, err := net.SplitHostPort(h); err == nil {
		h = name
	}
	return strings.ToLower(strings.TrimSuffix(strings.Trim(h, "[]"), "."))
}

// Works summarizes checks as the `works` facet will: all, some or none of
// the checked interfaces work; unchecked when none could be checked.
func Works(checks []InterfaceCheck) string {
	checked, working := 0, 0
	for _, c := range checks {
		if notChecked(c.Cause) {
			continue
		}
		checked++
		if c.Works {
			working++
		}
	}
	switch {
	case checked == 0:
		return "unchecked"
	case working == checked:
		return "all"
	case working > 0:
		return "some"
	}
	return "none"
}

// CheckRecord is a check as stored with its run (the transcript column of
// a catalog.Run of kind check): the storage encoding, not an API shape.
type CheckRecord struct {
	Format     int                `json:"format"`
	Works      string             `json:"works"`
	Interfaces []CheckedInterface `json:"interfaces"`
	// Truncated: the record outgrew the stored bound and its interfaces'
	// violations were cut.
	Truncated bool `json:"truncated,omitempty"`
}

// CheckedInterface is one interface's result in a CheckRecord.
type CheckedInterface struct {
	URL             string          `json:"url"`
	Binding         string          `json:"binding"`
	ProtocolVersion string          `json:"protocol_version"`
	Works           bool            `json:"works"`
	Cause           string          `json:"cause,omitempty"`
	Detail          string          `json:"detail,omitempty"`
	DurationMS      float64         `json:"duration_ms"`
	State           string          `json:"state,omitempty"`
	Violations      []TurnViolation `json:"violations,omitempty"`
}

// NewCheckRecord records checks.
func NewCheckRecord(checks []InterfaceCheck) CheckRecord {
	r := CheckRecord{Format: TranscriptFormat, Works: Works(checks), Interfaces: []CheckedInterface{}}
	for _, c := range checks {
		ci := CheckedInterface{URL: c.Interface.URL, Binding: c.Interface.Binding, ProtocolVersion: c.Interface.ProtocolVersion,
			Works: c.Works, Cause: c.Cause, Detail: c.Detail, DurationMS: ms(c.Duration), State: c.State}
		for _, v := range c.Violations {
			ci.Violations = append(ci.Violations, TurnViolation(v))
		}
		r.Interfaces = append(r.Interfaces, ci)
	}
	return r
}
