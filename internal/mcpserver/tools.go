package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/a2aregistry/registry/internal/ardentry"
	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/query"
	"github.com/a2aregistry/registry/internal/verify"
)

// Tool names.
const (
	ToolSearch   = "search_agents"
	ToolAgent    = "get_agent"
	ToolCard     = "get_agent_card"
	ToolFacets   = "list_facets"
	argQuery     = "query"
	maxIDArgLen  = 2048
	textExcerpts = 10
)

var readOnly = &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)}

func (s *Server) addTools() {
	// The search tools encode their results once (addSearchTool); a
	// schema error is a bug in this package, as mcp.AddTool panics on.
	must(addSearchTool(s.mcp, &mcp.Tool{
		Name:  ToolSearch,
		Title: "Search agents",
		Description: "Find A2A agents by what they do (query: words, e.g. 'convert currencies, accepts JSON') and by filters " +
			"(skill, tag, input_mode, output_mode, binding, protocol_version, security_scheme, signature, health, works, label, …; " +
			"each a value or a list of values, all must match). Returns agents with their ids, URNs, card URLs, skills, " +
			"modes, bindings, health and signature status, and facet counts to narrow down. Page with cursor.",
		InputSchema: searchSchema(true),
		Annotations: readOnly,
	}, s.searchAgents))
	must(addSearchTool(s.mcp, &mcp.Tool{
		Name:        ToolFacets,
		Title:       "List facets",
		Description: "Count the agents matching a query and filters per value of each filter field, to choose filters for search_agents.",
		InputSchema: searchSchema(false),
		Annotations: readOnly,
	}, s.listFacets))
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  ToolAgent,
		Title: "Get agent",
		Description: "One agent by registry id, URN (urn:air:…) or card URL: its skills with effective input and output modes, " +
			"interfaces, security schemes, the registry's checks (signature verdicts, security audit, whether the interfaces work) and versions.",
		Annotations: readOnly,
	}, s.getAgent)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        ToolCard,
		Title:       "Get agent card",
		Description: "An agent's card as it published it (the current version, or the version named), by registry id, URN or card URL.",
		Annotations: readOnly,
	}, s.getAgentCard)
}

// searchSchema is the JSON Schema of search_agents' arguments (paged) or
// list_facets': the text, and one property per filter field of the
// catalog, so the tool accepts exactly what the JSON API's search does.
func searchSchema(paged bool) map[string]any {
	props := map[string]any{
		argQuery: map[string]any{"type": "string", "maxLength": catalog.MaxQueryTextLen,
			"description": "what the agent should do, in words"},
	}
	for _, f := range catalog.FilterFields {
		item := map[string]any{"type": "string", "minLength": 1, "maxLength": query.MaxFilterValueLen}
		if vals := query.EnumValues(f); vals != nil {
			item["enum"] = vals
		}
		props[f] = map[string]any{
			"description": "filter on " + strings.ReplaceAll(f, "_", " ") + ": one value, or a list all of which must match",
			"anyOf":       []any{item, map[string]any{"type": "array", "items": item, "maxItems": query.MaxFilterValues}},
		}
	}
	if paged {
		props[query.ParamLimit] = map[string]any{"type": "integer", "minimum": 1, "maximum": catalog.MaxLimit,
			"description": fmt.Sprintf("agents per page, %d by default", catalog.DefaultLimit)}
		props[query.ParamCursor] = map[string]any{"type": "string", "maxLength": query.MaxCursorLen,
			"description": "next_cursor of the previous page"}
	}
	return map[string]any{"type": "object", "properties": props, "additionalProperties": false}
}

// request maps a tool's arguments onto the shared search request, so a
// query means through MCP what it means through the JSON API.
func request(args map[string]any) (query.Request, error) {
	v := url.Values{}
	for k, a := range args {
		name := k
		if k == argQuery {
			name = query.ParamText
		} else if k == query.ParamText {
			return query.Request{}, userError("unknown argument %q; the text is %q", k, argQuery)
		}
		switch a := a.(type) {
		case string:
			v.Set(name, a)
		case float64:
			v.Set(name, strconv.FormatFloat(a, 'f', -1, 64))
		case []any:
			for _, e := range a {
				s, ok := e.(string)
				if !ok {
					return query.Request{}, userError("%s must be a string or a list of strings", k)
				}
				v.Add(name, s)
			}
		default:
			return query.Request{}, userError("%s has the wrong type", k)
		}
	}
	req, err := query.Parse(v)
	var qe *query.Error
	if errors.As(err, &qe) {
		msg := qe.Message
		if qe.Parameter == query.ParamText {
			msg = strings.Replace(msg, "q must", "query must", 1)
		}
		return req, userError("%s", msg)
	}
	return req, err
}

// Wire shapes of the tools' structured content.
type (
	// SearchOutput is search_agents' result.
	SearchOutput struct {
		Agents     []AgentSummary          `json:"agents"`
		Total      int                     `json:"total" jsonschema:"agents matching, over every page"`
		NextCursor string                  `json:"next_cursor,omitempty" jsonschema:"pass as cursor for the next page; absent on the last"`
		Facets     map[string][]FacetCount `json:"facets"`
		// Semantic says how a search with text was ranked when the
		// registry has an embeddings API.
		Semantic *Semantic `json:"semantic,omitempty" jsonschema:"how the text was ranked: hybrid (words and meaning) or lexical (words only, and why); absent without an embeddings API"`
	}
	Semantic struct {
		Mode     string `json:"mode" jsonschema:"hybrid or lexical"`
		Degraded string `json:"degraded,omitempty" jsonschema:"why the search was ranked by words only"`
	}
	// FacetsOutput is list_facets' result.
	FacetsOutput struct {
		Total  int                     `json:"total"`
		Facets map[string][]FacetCount `json:"facets"`
	}
	FacetCount struct {
		Value string `json:"value"`
		Count int    `json:"count"`
	}
	AgentSummary struct {
		ID               string   `json:"id"`
		URN              string   `json:"urn,omitempty"`
		Name             string   `json:"name"`
		Description      string   `json:"description"`
		CardURL          string   `json:"card_url"`
		Version          string   `json:"version,omitempty"`
		Provider         string   `json:"provider,omitempty"`
		Skills           []Skill  `json:"skills"`
		InputModes       []string `json:"input_modes"`
		OutputModes      []string `json:"output_modes"`
		Bindings         []string `json:"bindings"`
		ProtocolVersions []string `json:"protocol_versions"`
		SecuritySchemes  []string `json:"security_schemes"`
		Signature        string   `json:"signature"`
		Health           string   `json:"health"`
		Score            int      `json:"score,omitempty" jsonschema:"relevance from 0 to 100 within this result"`
	}
	Skill struct {
		ID          string   `json:"id"`
		Name        string   `json:"name"`
		Description string   `json:"description,omitempty"`
		Tags        []string `json:"tags,omitempty"`
		Examples    []string `json:"examples,omitempty"`
		InputModes  []string `json:"input_modes,omitempty"`
		OutputModes []string `json:"output_modes,omitempty"`
	}
	// AgentInput names an agent.
	AgentInput struct {
		ID string `json:"id" jsonschema:"registry id, URN (urn:air:…) or card URL"`
	}
	// CardInput names an agent and optionally a stored version.
	CardInput struct {
		ID      string `json:"id" jsonschema:"registry id, URN (urn:air:…) or card URL"`
		Version int    `json:"version,omitempty" jsonschema:"stored version number; the current one when absent"`
	}
	AgentOutput struct {
		AgentSummary
		DocumentationURL   string           `json:"documentation_url,omitempty"`
		Streaming          bool             `json:"streaming"`
		DefaultInputModes  []string         `json:"default_input_modes"`
		DefaultOutputModes []string         `json:"default_output_modes"`
		Interfaces         []Interface      `json:"interfaces"`
		SchemeDetails      []SecurityScheme `json:"security_scheme_details"`
		Listing            string           `json:"listing"`
		Versions           []Version        `json:"versions"`
		// Verification is the registry's report on the current version
		// (signature verdicts, security audit, probes), as the JSON API
		// gives it; absent until the verifier made one.
		Verification map[string]any `json:"verification,omitempty"`
	}
	Interface struct {
		URL             string `json:"url"`
		Binding         string `json:"binding"`
		ProtocolVersion string `json:"protocol_version"`
		Tenant          string `json:"tenant,omitempty"`
	}
	SecurityScheme struct {
		Name        string `json:"name"`
		Type        string `json:"type"`
		Description string `json:"description,omitempty"`
	}
	Version struct {
		Number     int       `json:"number"`
		SHA256     string    `json:"sha256"`
		ReceivedAt time.Time `json:"received_at"`
	}
	CardOutput struct {
		ID      string         `json:"id"`
		Version int            `json:"version"`
		CardURL string         `json:"card_url"`
		Card    map[string]any `json:"card" jsonschema:"the card as published"`
	}
)

func (s *Server) searchAgents(ctx context.Context, req *mcp.CallToolRequest, args map[string]any) (*mcp.CallToolResult, SearchOutput, error) {
	r, err := request(args)
	if err != nil {
		return nil, SearchOutput{}, err
	}
	page, err := s.opts.Catalog.Search(ctx, r.Query(scope(req)))
	if errors.Is(err, catalog.ErrInvalidCursor) {
		return nil, SearchOutput{}, userError("cursor is invalid or expired; repeat the search without it")
	}
	if errors.Is(err, catalog.ErrInvalidQuery) {
		return nil, SearchOutput{}, userError("%v", err)
	}
	if err != nil {
		return nil, SearchOutput{}, s.fault(ctx, "search", err)
	}
	out := SearchOutput{Total: page.Total, NextCursor: page.NextCursor, Facets: facets(page.Facets), Agents: []AgentSummary{}}
	if sem := page.Semantic; sem != nil {
		out.Semantic = &Semantic{Mode: "lexical", Degraded: sem.Degraded}
		if sem.Hybrid {
			out.Semantic.Mode = "hybrid"
		}
	}
	top := 0.0
	for _, it := range page.Items {
		top = max(top, it.Score)
	}
	for _, it := range page.Items {
		out.Agents = append(out.Agents, summary(it, top))
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: searchText(out)}}}, out, nil
}

func (s *Server) listFacets(ctx context.Context, req *mcp.CallToolRequest, args map[string]any) (*mcp.CallToolResult, FacetsOutput, error) {
	r, err := request(args)
	if err != nil {
		return nil, FacetsOutput{}, err
	}
	r.Limit = 1
	page, err := s.opts.Catalog.Search(ctx, r.Query(scope(req)))
	if errors.Is(err, catalog.ErrInvalidQuery) {
		return nil, FacetsOutput{}, userError("%v", err)
	}
	if err != nil {
		return nil, FacetsOutput{}, s.fault(ctx, "count facets", err)
	}
	out := FacetsOutput{Total: page.Total, Facets: facets(page.Facets)}
	var b strings.Builder
	fmt.Fprintf(&b, "%d agents match.", out.Total)
	for _, f := range catalog.FilterFields {
		vals := out.Facets[f]
		if len(vals) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n%s:", f)
		for i, v := range vals {
			if i == 5 {
				b.WriteString(" …")
				break
			}
			fmt.Fprintf(&b, " %s (%d)", v.Value, v.Count)
		}
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: b.String()}}}, out, nil
}

func (s *Server) getAgent(ctx context.Context, req *mcp.CallToolRequest, in AgentInput) (*mcp.CallToolResult, AgentOutput, error) {
	sc := scope(req)
	id, err := s.resolve(ctx, sc, in.ID)
	if err != nil {
		return nil, AgentOutput{}, err
	}
	v, err := s.opts.Catalog.AgentView(ctx, sc, id, s.opts.Now())
	if errors.Is(err, catalog.ErrNotFound) || err == nil && (v.Agent.Card == nil || v.Agent.Removed != nil && !sc.All) {
		return nil, AgentOutput{}, notFound(in.ID)
	}
	if err != nil {
		return nil, AgentOutput{}, s.fault(ctx, "read the agent", err)
	}
	out := s.agentOutput(v)
	if v.Verification != nil {
		rep, err := s.scopedReport(ctx, sc, v.Verification.Report)
		if err != nil {
			return nil, AgentOutput{}, s.fault(ctx, "read the agent", err)
		}
		out.Verification = rep
	}
	text := fmt.Sprintf("%s (%s): %s\ncard: %s\nskills: %s\ninterfaces: %s\nsignature: %s, health: %s",
		out.Name, out.ID, out.Description, out.CardURL, skillNames(out.Skills), interfaceList(out.Interfaces), out.Signature, out.Health)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, out, nil
}

func (s *Server) getAgentCard(ctx context.Context, req *mcp.CallToolRequest, in CardInput) (*mcp.CallToolResult, CardOutput, error) {
	sc := scope(req)
	id, err := s.resolve(ctx, sc, in.ID)
	if err != nil {
		return nil, CardOutput{}, err
	}
	if in.Version < 0 {
		return nil, CardOutput{}, userError("version must be a positive number")
	}
	v, err := s.opts.Catalog.AgentView(ctx, sc, id, s.opts.Now())
	if errors.Is(err, catalog.ErrNotFound) || err == nil && v.Agent.Removed != nil && !sc.All {
		return nil, CardOutput{}, notFound(in.ID)
	}
	if err != nil {
		return nil, CardOutput{}, s.fault(ctx, "read the card", err)
	}
	n := in.Version
	if n == 0 {
		n = v.Agent.CurrentVersion
	}
	ver, err := s.opts.Catalog.Version(ctx, sc, id, n)
	if errors.Is(err, catalog.ErrNotFound) {
		return nil, CardOutput{}, userError("agent %s has no version %d; it has %d", in.ID, n, len(v.Versions))
	}
	if err != nil {
		return nil, CardOutput{}, s.fault(ctx, "read the card", err)
	}
	out := CardOutput{ID: id, Version: n, CardURL: v.Agent.CardURL}
	if err := json.Unmarshal(ver.Raw, &out.Card); err != nil || out.Card == nil {
		// Stored cards parsed as JSON objects once; a version that does
		// not is ours to explain, not the caller's.
		return nil, CardOutput{}, s.fault(ctx, "read the card", fmt.Errorf("agent %s version %d is not a JSON object: %v", id, n, err))
	}
	// The text is the card byte for byte, as published: signatures are
	// over those bytes.
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(ver.Raw)}}}, out, nil
}

// resolve maps a registry id, URN or card URL onto a registry id. An
// agent the scope does not see is not found, as a missing one.
func (s *Server) resolve(ctx context.Context, sc catalog.Scope, ref string) (string, error) {
	ref = strings.TrimSpace(ref)
	switch {
	case ref == "":
		return "", userError("id is required: a registry id, URN or card URL")
	case len(ref) > maxIDArgLen:
		return "", userError("id is too long (at most %d bytes)", maxIDArgLen)
	case strings.HasPrefix(ref, "urn:") && !card.IsURN(ref):
		return "", userError("%q is not an ARD agent URN (urn:air:<publisher>:…)", ref)
	case !catalog.IsAgentRef(ref):
		return ref, nil
	}
	id, err := s.opts.Catalog.AgentIDOf(ctx, sc, ref)
	switch {
	case errors.Is(err, catalog.ErrNotFound):
		return "", notFound(ref)
	case errors.Is(err, card.ErrMalformedURN) || errors.Is(err, card.ErrInvalidURL):
		return "", userError("%q is not a card URL or an ARD identifier: %v", ref, err)
	case err != nil:
		return "", s.fault(ctx, "find the agent", err)
	}
	return id, nil
}

func notFound(ref string) error {
	return userError("no agent %s in this registry (or not one you may see); search_agents finds agents", ref)
}

// scopedReport decodes a verification report, dropping the content
// findings that name agents the scope does not see, as the JSON API does.
func (s *Server) scopedReport(ctx context.Context, sc catalog.Scope, raw json.RawMessage) (map[string]any, error) {
	if raw == nil {
		return nil, nil
	}
	var rep struct {
		Content []verify.ContentFinding `json:"content_findings"`
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		return nil, fmt.Errorf("reading verification report: %w", err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("reading verification report: %w", err)
	}
	ids := verify.RelatedAgents(rep.Content)
	if len(ids) == 0 {
		return doc, nil
	}
	seen, err := s.opts.Catalog.VisibleAgents(ctx, sc, ids)
	if err != nil {
		return nil, fmt.Errorf("checking related agents: %w", err)
	}
	kept, err := json.Marshal(verify.KeepRelated(rep.Content, func(id string) bool { return seen[id] }))
	if err != nil {
		return nil, err
	}
	var content any
	if err := json.Unmarshal(kept, &content); err != nil {
		return nil, err
	}
	doc["content_findings"] = content
	return doc, nil
}

func (s *Server) agentOutput(v catalog.AgentView) AgentOutput {
	a, c := v.Agent, v.Agent.Card
	out := AgentOutput{
		AgentSummary: AgentSummary{
			ID: a.ID, URN: ardentry.URN(a.CardURL), Name: c.Name, Description: c.Description, CardURL: a.CardURL,
			Version: c.Version, Signature: a.SignatureStatus, Health: a.Health,
			ProtocolVersions: nonNil(c.ProtocolVersions), InputModes: []string{}, OutputModes: []string{},
			Bindings: []string{}, SecuritySchemes: []string{}, Skills: []Skill{},
		},
		DocumentationURL: c.DocumentationURL, Streaming: c.Capabilities.Streaming,
		DefaultInputModes: nonNil(c.DefaultInputModes), DefaultOutputModes: nonNil(c.DefaultOutputModes),
		Interfaces: []Interface{}, SchemeDetails: []SecurityScheme{}, Listing: a.Listing.State, Versions: []Version{},
	}
	if c.Provider != nil {
		out.Provider = c.Provider.Organization
	}
	for _, sk := range c.Skills {
		out.Skills = append(out.Skills, Skill{ID: sk.ID, Name: sk.Name, Description: sk.Description, Tags: sk.Tags,
			Examples: sk.Examples, InputModes: sk.InputModes, OutputModes: sk.OutputModes})
		out.InputModes = union(out.InputModes, sk.InputModes)
		out.OutputModes = union(out.OutputModes, sk.OutputModes)
	}
	out.InputModes = union(out.InputModes, c.DefaultInputModes)
	out.OutputModes = union(out.OutputModes, c.DefaultOutputModes)
	for _, i := range c.Interfaces {
		out.Interfaces = append(out.Interfaces, Interface{URL: i.URL, Binding: i.Binding, ProtocolVersion: i.ProtocolVersion, Tenant: i.Tenant})
		out.Bindings = union(out.Bindings, []string{i.Binding})
	}
	for _, sch := range c.SecuritySchemes {
		out.SchemeDetails = append(out.SchemeDetails, SecurityScheme{Name: sch.Name, Type: sch.Type, Description: sch.Description})
		out.SecuritySchemes = append(out.SecuritySchemes, sch.Name)
	}
	for _, vs := range v.Versions {
		out.Versions = append(out.Versions, Version{Number: vs.Number, SHA256: vs.SHA256, ReceivedAt: vs.ReceivedAt})
	}
	return out
}

func summary(it catalog.Summary, top float64) AgentSummary {
	out := AgentSummary{
		ID: it.ID, URN: ardentry.URN(it.CardURL), Name: it.Name, Description: it.Description, CardURL: it.CardURL,
		Version: it.Version, Provider: it.Provider, InputModes: nonNil(it.InputModes), OutputModes: nonNil(it.OutputModes),
		Bindings: nonNil(it.Bindings), ProtocolVersions: nonNil(it.ProtocolVersions), SecuritySchemes: nonNil(it.SecuritySchemes),
		Signature: it.SignatureStatus, Health: it.Health, Score: ardentry.Score(it.Score, top), Skills: []Skill{},
	}
	for _, sk := range it.Skills {
		out.Skills = append(out.Skills, Skill{ID: sk.ID, Name: sk.Name, Tags: sk.Tags})
	}
	return out
}

func facets(in map[string][]catalog.FacetCount) map[string][]FacetCount {
	out := make(map[string][]FacetCount, len(in))
	for f, vals := range in {
		fc := make([]FacetCount, 0, len(vals))
		for _, v := range vals {
			fc = append(fc, FacetCount{Value: v.Value, Count: v.Count})
		}
		out[f] = fc
	}
	return out
}

// searchText is the short rendering of a result for clients that show
// only text content.
func searchText(out SearchOutput) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d agents match", out.Total)
	if len(out.Agents) < out.Total {
		fmt.Fprintf(&b, " (showing %d)", len(out.Agents))
	}
	b.WriteString(".")
	for i, a := range out.Agents {
		if i == textExcerpts {
			b.WriteString("\n…")
			break
		}
		fmt.Fprintf(&b, "\n- %s (id %s): %s; skills: %s; card: %s", a.Name, a.ID, excerpt(a.Description, 160), skillNames(a.Skills), a.CardURL)
	}
	if out.NextCursor != "" {
		b.WriteString("\nMore: call again with cursor=" + out.NextCursor)
	}
	if out.Semantic != nil && out.Semantic.Degraded != "" {
		b.WriteString("\n(Matched by words only: " + out.Semantic.Degraded + ".)")
	}
	return b.String()
}

func skillNames(sk []Skill) string {
	names := make([]string, 0, len(sk))
	for _, s := range sk {
		n := s.Name
		if n == "" {
			n = s.ID
		}
		names = append(names, n)
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func interfaceList(ifs []Interface) string {
	parts := make([]string, 0, len(ifs))
	for _, i := range ifs {
		parts = append(parts, i.Binding+" "+i.ProtocolVersion+" "+i.URL)
	}
	return strings.Join(parts, "; ")
}

func excerpt(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func union(a, b []string) []string {
	for _, v := range b {
		if !slices.Contains(a, v) {
			a = append(a, v)
		}
	}
	return a
}
