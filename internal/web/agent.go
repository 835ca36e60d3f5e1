package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/verify"
	"github.com/a2aregistry/registry/internal/web/view"
	"github.com/a2aregistry/registry/web/templates"
)

// maxIDLen bounds an agent id from a URL; longer ones cannot exist.
const maxIDLen = 200

// errAgentGone: no agent the caller may see has the id of the path (a
// malformed id, an agent removed, or one removed between two reads).
var errAgentGone = errors.New("agent gone")

func (h *Console) agent(c echo.Context) error {
	a, err := h.loadAgent(c)
	if err != nil {
		return h.agentError(c, err)
	}
	d := diffForm(a)
	a.Diff = &d
	return h.render(c, http.StatusOK, page{title: a.Name, body: templates.AgentPage(a)})
}

// diff serves the comparison of two versions: as the agent page with the
// diff open, or (htmx) the diff alone.
func (h *Console) diff(c echo.Context) error {
	a, err := h.loadAgent(c)
	if err != nil {
		return h.agentError(c, err)
	}
	d := h.versionDiff(c, a)
	a.Diff = &d
	status := http.StatusOK
	if d.Error != "" {
		status = http.StatusNotFound
	}
	title := fmt.Sprintf("%s · v%d → v%d", a.Name, d.From, d.To)
	return h.render(c, status, page{title: title, body: templates.AgentPage(a), fragment: templates.DiffView(d)})
}

// agentError answers a failed agent read.
func (h *Console) agentError(c echo.Context, err error) error {
	if errors.Is(err, catalog.ErrNotFound) || errors.Is(err, errAgentGone) {
		return h.errorPage(c, http.StatusNotFound, "Agent not found",
			"No agent has this id. It may have been removed, or the link is mistyped.")
	}
	h.log.ErrorContext(c.Request().Context(), "console agent page failed", "err", err,
		"request_id", c.Response().Header().Get(echo.HeaderXRequestID))
	return h.errorPage(c, http.StatusInternalServerError, "Something went wrong",
		"The registry could not load this agent. The failure is in its log.")
}

// loadAgent reads everything the agent page shows.
func (h *Console) loadAgent(c echo.Context) (view.Agent, error) {
	id, ok := pathID(c)
	if !ok {
		return view.Agent{}, errAgentGone
	}
	ctx := c.Request().Context()
	v, err := h.opts.Agents.AgentView(ctx, h.scope(c), id, h.now())
	if err != nil {
		return view.Agent{}, fmt.Errorf("loading agent %s: %w", id, err)
	}
	ag, versions, health, ver := v.Agent, v.Versions, v.Health, v.Verification
	if ag.Removed != nil && !h.holds(c, auth.Admin) {
		// Only admins see what the registry kept of a removed agent.
		return view.Agent{}, errAgentGone
	}
	if ag.Card == nil {
		return view.Agent{}, fmt.Errorf("agent %s has no parsed card", id)
	}
	a, err := h.agentView(ag, versions, health, ver)
	if err != nil {
		return view.Agent{}, err
	}
	if err := h.scopeRelated(c, &a); err != nil {
		return view.Agent{}, fmt.Errorf("agent %s: %w", id, err)
	}
	if h.opts.Audit != nil && h.holds(c, auth.Admin) {
		entries, err := h.opts.Audit.AgentAudit(ctx, id, agentAuditSize)
		if err != nil {
			return view.Agent{}, fmt.Errorf("reading audit entries of agent %s: %w", id, err)
		}
		a.Audit = make([]view.AuditEntry, 0, len(entries))
		for _, e := range entries {
			a.Audit = append(a.Audit, auditEntryView(e))
		}
	}
	prov, err := h.provenanceView(c, id)
	if err != nil {
		return view.Agent{}, err
	}
	a.Provenance = prov
	if ag.Removed != nil {
		// History only: acting on it starts with registering it again.
		a.Removed = &view.Removal{At: ag.Removed.At, By: ag.Removed.By, Withdrawn: ag.Removed.Withdrawn}
		return a, nil
	}
	if h.canTry(c) {
		a.TryURL = tryURL(id)
	}
	if err := h.latestCheck(c, &a); err != nil {
		return view.Agent{}, err
	}
	a.Annotations = h.annotationsView(c, id, v.Annotations)
	ps, err := h.opts.Agents.PolicyState(ctx, h.scope(c), id)
	if err != nil {
		return view.Agent{}, fmt.Errorf("reading the policy results of agent %s: %w", id, err)
	}
	a.Policy = policyView(ps)
	a.Listing = h.listingView(c, ag.Listing)
	a.Collections = ag.Collections
	if h.canReview(c) {
		f := h.listingForm(c, id, "agent")
		a.Listing.Form = &f
	}
	if h.canOperate(c) {
		a.Actions = view.Actions{
			CSRFToken: h.csrfToken(c),
			Refresh:   h.opts.Refresher != nil,
			Pause:     h.opts.Pauser != nil,
			Remove:    h.opts.Remover != nil && h.holds(c, auth.Admin),
		}
	}
	return a, nil
}

func (h *Console) agentView(ag catalog.Agent, versions []catalog.VersionSummary, health catalog.HealthReport, ver *catalog.Verification) (view.Agent, error) {
	cd := ag.Card
	a := view.Agent{
		ID: ag.ID, URL: agentURL(ag.ID), CardURL: ag.CardURL,
		RawURL: h.opts.APIPath + "/agents/" + url.PathEscape(ag.ID) + "/card",
		Name:   cd.Name, Description: cd.Description, Version: cd.Version,
		DocumentationURL: cd.DocumentationURL, IconURL: cd.IconURL,
		Shape: string(cd.Shape), ProtocolVersions: cd.ProtocolVersions,
		Capabilities: cd.Capabilities, DefaultInput: cd.DefaultInputModes, DefaultOutput: cd.DefaultOutputModes,
		Skills: cd.Skills, Schemes: cd.SecuritySchemes, Requirements: cd.SecurityRequirements,
		Signature: ag.SignatureStatus, Health: healthView(health), Lint: cd.Findings,
		Current: ag.CurrentVersion, RawPretty: prettyJSON(cd.Raw),
	}
	if a.Name == "" {
		a.Name = ag.ID
	}
	if cd.Provider != nil {
		a.Provider, a.ProviderURL = cd.Provider.Organization, cd.Provider.URL
	}
	for _, v := range versions {
		a.Versions = append(a.Versions, h.versionView(ag.ID, v))
	}
	var probes []verify.Probe
	// A report on an older version says nothing about the bytes served
	// now (the API makes the same choice).
	if ver != nil && ver.Version == ag.CurrentVersion {
		var r verify.Report
		if err := json.Unmarshal(ver.Report, &r); err != nil {
			return view.Agent{}, fmt.Errorf("reading verification report of agent %s: %w", ag.ID, err)
		}
		a.Verification = &view.Verification{
			Status: string(r.Signatures.Status), CheckedAt: r.CheckedAt, Stale: ver.Stale,
			Signer: r.Signatures.Signer, Entries: r.Signatures.Entries, Rotation: r.Signatures.Rotation,
			Audit: r.Security, Content: contentView(r.Content), Scanned: r.Content != nil,
			Publisher: r.Publisher,
		}
		if r.Publisher != nil {
			a.Verification.PublisherURL = publisherURL(r.Publisher.Domain)
		}
		probes = r.Transports
	}
	for _, in := range cd.Interfaces {
		iv := view.Interface{Interface: in}
		for i := range probes {
			if probes[i].Path == in.Path && probes[i].URL == in.URL {
				iv.Probe = &probes[i]
				break
			}
		}
		a.Interfaces = append(a.Interfaces, iv)
	}
	return a, nil
}

// contentView links each finding's related agents; scopeRelated then
// drops those the caller may not see.
func contentView(fs []verify.ContentFinding) []view.ContentFinding {
	out := make([]view.ContentFinding, len(fs))
	for i, f := range fs {
		out[i] = view.ContentFinding{Code: f.Code, Severity: string(f.Severity), Path: f.Path,
			Message: f.Message, Excerpt: f.Excerpt, Why: f.Why}
		for _, r := range f.Related {
			out[i].Related = append(out[i].Related, view.AgentRef{ID: r.AgentID, URL: agentURL(r.AgentID), Text: r.Text})
		}
	}
	return out
}

// scopeRelated drops from a's content findings the related agents the
// caller does not see (a finance-only agent whose name a public one
// imitates is not named to outsiders); the findings stay.
func (h *Console) scopeRelated(c echo.Context, a *view.Agent) error {
	if a.Verification == nil {
		return nil
	}
	var ids []string
	for _, f := range a.Verification.Content {
		for _, r := range f.Related {
			ids = append(ids, r.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	seen, err := h.opts.Agents.VisibleAgents(c.Request().Context(), h.scope(c), ids)
	if err != nil {
		return fmt.Errorf("checking related agents: %w", err)
	}
	for i := range a.Verification.Content {
		f := &a.Verification.Content[i]
		f.Related = slices.DeleteFunc(f.Related, func(r view.AgentRef) bool { return !seen[r.ID] })
	}
	return nil
}

func (h *Console) versionView(id string, v catalog.VersionSummary) view.Version {
	return view.Version{
		Number: v.Number, SHA256: v.SHA256, Size: v.Size, Source: v.Source, ReceivedAt: v.ReceivedAt,
		URL: h.opts.APIPath + "/agents/" + url.PathEscape(id) + "/versions/" + strconv.Itoa(v.Number),
	}
}

func healthView(r catalog.HealthReport) view.Health {
	h := view.Health{
		State: r.State, Failures: r.ConsecutiveFailures, Paused: r.Paused,
		LastCheck: deref(r.LastCheckAt), LastSuccess: deref(r.LastSuccessAt), NextCheck: deref(r.NextCheckAt),
		Uptime24h: percent(r.Uptime24h), Uptime7d: percent(r.Uptime7d),
	}
	if e := r.LastError; e != nil {
		h.LastError = &view.FetchError{Class: e.Class, Message: e.Message, Status: e.Status, At: e.At}
	}
	return h
}

func deref(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

func percent(p *float64) string {
	if p == nil {
		return ""
	}
	return strconv.FormatFloat(*p*100, 'f', 1, 64) + " %"
}

// latestCheck puts the latest check's per-interface results beside the
// interfaces the card declares: which of them answered a message.
func (h *Console) latestCheck(c echo.Context, a *view.Agent) error {
	if h.opts.Runs == nil {
		return nil
	}
	run, rec, ok, err := h.opts.Runs.LatestCheck(c.Request().Context(), h.scope(c), a.ID)
	if err != nil {
		return fmt.Errorf("agent %s: %w", a.ID, err)
	}
	if !ok {
		return nil
	}
	for i, in := range a.Interfaces {
		for _, ci := range rec.Interfaces {
			if ci.URL == in.URL && ci.Binding == in.Binding && ci.ProtocolVersion == in.ProtocolVersion {
				a.Interfaces[i].Check = &view.InterfaceCheck{Works: ci.Works, Detail: ci.Detail, CheckedAt: run.CreatedAt}
				break
			}
		}
	}
	return nil
}

// policyView is the agent page's admission-policy panel; nil when there
// is nothing to show.
func policyView(ps catalog.PolicyState) *view.AgentPolicy {
	if len(ps.Results) == 0 && ps.RefusedBy == "" {
		return nil
	}
	p := &view.AgentPolicy{RefusedBy: ps.RefusedBy}
	for _, r := range ps.Results {
		p.Results = append(p.Results, view.PolicyResult{Rule: r.RuleID, Action: r.Action, Outcome: r.Outcome, Message: r.Message,
			SearchURL: "/?" + url.Values{catalog.FieldPolicy: {r.RuleID}}.Encode()})
	}
	return p
}
