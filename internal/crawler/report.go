package crawler

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
)

// CrawlReport is what `registry crawl URL` prints: one fetch and parse of a
// card, without a catalog, for an agent owner checking their card.
type CrawlReport struct {
	Input string `json:"input"`
	// Tried lists the URLs requested, in order.
	Tried []string `json:"tried"`
	// URL is the URL that answered; FinalURL where its redirects ended.
	URL        string `json:"url,omitempty"`
	FinalURL   string `json:"final_url,omitempty"`
	LegacyPath bool   `json:"legacy_path"`
	Status     int    `json:"status,omitempty"`
	LatencyMS  int64  `json:"latency_ms"`
	Headers    struct {
		ContentType  string `json:"content_type,omitempty"`
		ETag         string `json:"etag,omitempty"`
		LastModified string `json:"last_modified,omitempty"`
		CacheControl string `json:"cache_control,omitempty"`
		Expires      string `json:"expires,omitempty"`
		RetryAfter   string `json:"retry_after,omitempty"`
	} `json:"headers"`
	// OK is true when the card was fetched and parsed.
	OK bool `json:"ok"`
	// Failure is the failure class and message when OK is false.
	Failure *ReportFailure `json:"failure,omitempty"`
	// Health and NextCheckIn are what the registry's crawler would record
	// and schedule after this check, for an agent with no earlier failure.
	Health      string  `json:"health"`
	NextCheckIn Seconds `json:"next_check_in_seconds"`

	Card *ReportCard `json:"card,omitempty"`
}

// Seconds marshals a duration as whole seconds.
type Seconds time.Duration

// MarshalJSON writes whole seconds.
func (s Seconds) MarshalJSON() ([]byte, error) {
	return fmt.Appendf(nil, "%d", int64(time.Duration(s)/time.Second)), nil
}

// ReportFailure is a failure class (see Class*) and its message.
type ReportFailure struct {
	Class   string `json:"class"`
	Message string `json:"message"`
}

// ReportCard summarizes a parsed card.
type ReportCard struct {
	Name             string           `json:"name"`
	Version          string           `json:"version"`
	Shape            card.Shape       `json:"shape"`
	ProtocolVersions []string         `json:"protocol_versions"`
	Interfaces       []card.Interface `json:"interfaces"`
	Skills           int              `json:"skills"`
	Bytes            int              `json:"bytes"`
	// Findings are the lint findings grouped by severity.
	Findings map[card.Severity][]card.Finding `json:"findings"`
}

// Inspect fetches and parses the card at input (a card URL or an origin)
// and describes what happened. It never fails: every problem is in the
// report. pol schedules the next check as the crawler would.
func Inspect(ctx context.Context, f *Fetcher, input string, lim card.Limits, pol Policy) CrawlReport {
	r := CrawlReport{Input: input}
	urls, _ := ResolveCardURLs(input)
	res, err := f.Fetch(ctx, input, Conditional{})
	r.Tried = triedURLs(urls, res, err)
	if res != nil {
		r.URL, r.FinalURL, r.LegacyPath, r.Status = res.URL, res.FinalURL, res.LegacyPath, res.Status
		r.LatencyMS = res.Latency.Milliseconds()
		r.Headers.ContentType = res.ContentType
		r.Headers.ETag, r.Headers.LastModified = res.ETag, res.LastModified
		r.Headers.CacheControl, r.Headers.Expires, r.Headers.RetryAfter = res.CacheControl, res.Expires, res.RetryAfter
	}

	o := catalog.FetchOutcome{}
	var fe *FetchError
	switch {
	case errors.As(err, &fe):
		o.Class, o.Message, o.Status = fe.Class, fe.Err.Error(), fe.Status
		if r.URL == "" {
			r.URL = fe.URL
		}
	case err != nil:
		o.Class, o.Message = ClassConnect, err.Error()
	default:
		c, perr := card.Parse(res.Body, lim)
		if perr != nil {
			o.Class, o.Message = ClassNotACard, perr.Error()
			break
		}
		r.Card = summarizeCard(c)
	}
	now := time.Now()
	pol.Apply(now, catalog.CrawlTarget{}, cacheHeadersOf(res), &o)
	r.OK = o.Class == ""
	if !r.OK {
		r.Failure = &ReportFailure{Class: o.Class, Message: o.Message}
	}
	r.Health = o.Health
	r.NextCheckIn = Seconds(o.NextCheckAt.Sub(now).Round(time.Second))
	return r
}

// triedURLs reconstructs which candidates Fetch requested: the legacy path
// only when the well-known one answered 404.
func triedURLs(urls []string, res *Result, err error) []string {
	if len(urls) < 2 {
		return urls
	}
	var fe *FetchError
	if (res != nil && res.LegacyPath) || (errors.As(err, &fe) && (fe.URL == urls[1] || fe.Status == 404)) {
		return urls
	}
	return urls[:1]
}

func summarizeCard(c *card.Card) *ReportCard {
	rc := &ReportCard{
		Name: c.Name, Version: c.Version, Shape: c.Shape,
		ProtocolVersions: c.ProtocolVersions, Interfaces: c.Interfaces,
		Skills: len(c.Skills), Bytes: len(c.Raw),
		Findings: make(map[card.Severity][]card.Finding),
	}
	for _, f := range c.Findings {
		rc.Findings[f.Severity] = append(rc.Findings[f.Severity], f)
	}
	return rc
}

// printable quotes s when it holds control or other non-graphic
// characters: names, headers and messages come from the agent, and an
// escape sequence must not reach the owner's terminal.
func printable(s string) string {
	for _, r := range s {
		if !unicode.IsGraphic(r) {
			return strconv.QuoteToGraphic(s)
		}
	}
	return s
}

// WriteText prints the report for a person.
func (r CrawlReport) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	line := func(k, format string, args ...any) {
		fmt.Fprintf(tw, "%s\t%s\n", k, printable(fmt.Sprintf(format, args...)))
	}
	line("input", "%s", r.Input)
	line("tried", "%s", strings.Join(r.Tried, ", "))
	if r.URL != "" {
		served := r.URL
		if r.LegacyPath {
			served += " (legacy v0.2 path)"
		}
		line("served by", "%s", served)
	}
	if r.FinalURL != "" && r.FinalURL != r.URL {
		line("redirected to", "%s", r.FinalURL)
	}
	if r.Status != 0 {
		line("status", "%d, %d ms", r.Status, r.LatencyMS)
	}
	h := r.Headers
	for _, kv := range [][2]string{
		{"Content-Type", h.ContentType}, {"ETag", h.ETag}, {"Last-Modified", h.LastModified},
		{"Cache-Control", h.CacheControl}, {"Expires", h.Expires}, {"Retry-After", h.RetryAfter},
	} {
		if kv[1] != "" {
			line(kv[0], "%s", kv[1])
		}
	}
	if r.Failure != nil {
		line("result", "FAILED: %s: %s", r.Failure.Class, r.Failure.Message)
	} else {
		line("result", "ok")
	}
	line("health", "%s, next check in %s", r.Health, time.Duration(r.NextCheckIn))
	if c := r.Card; c != nil {
		line("name", "%s (version %s)", c.Name, c.Version)
		line("card", "%s shape, %d bytes, protocol versions %s", c.Shape, c.Bytes, strings.Join(c.ProtocolVersions, ", "))
		line("skills", "%d", c.Skills)
		for i, in := range c.Interfaces {
			k := ""
			if i == 0 {
				k = "interfaces"
			}
			line(k, "%s %s %s", in.Binding, in.ProtocolVersion, in.URL)
		}
		for _, sev := range []card.Severity{card.SeverityError, card.SeverityWarning, card.SeverityInfo} {
			fs := c.Findings[sev]
			line(string(sev)+"s", "%d", len(fs))
			for _, f := range fs {
				line("", "%s %s: %s", f.Code, f.Path, f.Message)
			}
		}
	}
	return tw.Flush()
}
