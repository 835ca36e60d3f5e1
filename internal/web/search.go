package web

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/query"
	"github.com/a2aregistry/registry/internal/web/view"
	"github.com/a2aregistry/registry/web/templates"
)

// facetLabels names the filter fields for people, in catalog.FilterFields
// order.
var facetLabels = map[string]string{
	catalog.FieldSkill:             "Skill",
	catalog.FieldTag:               "Tag",
	catalog.FieldInputMode:         "Input media type",
	catalog.FieldOutputMode:        "Output media type",
	catalog.FieldBinding:           "Binding",
	catalog.FieldProtocolVersion:   "Protocol version",
	catalog.FieldSecurityScheme:    "Security scheme",
	catalog.FieldProvider:          "Provider",
	catalog.FieldSignature:         "Signature",
	catalog.FieldHealth:            "Health",
	catalog.FieldAudit:             "Security audit",
	catalog.FieldSeverity:          "Finding severity",
	catalog.FieldPublisher:         "Publisher",
	catalog.FieldPublisherVerified: "Publisher verified",
	catalog.FieldOwnerTeam:         "Owner team",
	catalog.FieldClassification:    "Classification",
	catalog.FieldLabel:             "Label",
	catalog.FieldWorks:             "Interfaces work (last check)",
	catalog.FieldListing:           "Listing",
	catalog.FieldCollection:        "Collection",
	catalog.FieldPolicy:            "Admission policy (rules failing)",
}

// howLabels say in words how a search word met a result
// (catalog.WordMatch.How).
var howLabels = map[string]string{
	"word":    "the word itself",
	"prefix":  "a word it begins",
	"typo":    "a word one typo away",
	"related": "a related word",
}

// facetShown is how many values of a facet field show before the rest
// fold away.
const facetShown = 6

// excerptLen is how much of a description a result shows, in runes.
const excerptLen = 240

// search serves the search page. The query string is the API's (both
// read it with query.Parse), so a console URL and an API URL with the
// same query find the same agents.
func (h *Console) search(c echo.Context) error {
	raw := c.Request().URL.RawQuery
	values, err := url.ParseQuery(raw)
	dropEmpty(values)
	s := view.Search{Q: values.Get(query.ParamText)}
	if h.opts.APIPath != "" {
		s.RegisterURL = h.opts.APIPath + "/agents"
	}
	status := http.StatusOK

	var req query.Request
	if err != nil {
		err = &query.Error{Message: "The address holds a malformed query string."}
	} else {
		// Each result says why it matched when asked (its own request,
		// /agents/{id}/why): most are never opened.
		req, err = query.Parse(values)
	}
	var res catalog.Page
	if err == nil {
		res, err = h.opts.Searcher.Search(c.Request().Context(), req.Query(h.scope(c)))
	}
	var qerr *query.Error
	switch {
	case errors.As(err, &qerr):
		s.State, s.Message, status = view.StateInvalid, qerr.Message, http.StatusBadRequest
	case errors.Is(err, catalog.ErrInvalidCursor):
		s.State, status = view.StateInvalid, http.StatusBadRequest
		s.Message = "This page of results has expired. Start again from the first page."
	case errors.Is(err, catalog.ErrInvalidQuery):
		s.State, s.Message, status = view.StateInvalid, "The search cannot run as given.", http.StatusBadRequest
	case h.opts.IndexNotReady != nil && errors.Is(err, h.opts.IndexNotReady):
		s.State, status = view.StateIndexBuilding, http.StatusServiceUnavailable
		c.Response().Header().Set("Retry-After", "5")
	case err != nil:
		h.log.ErrorContext(c.Request().Context(), "console search failed", "err", err,
			"request_id", c.Response().Header().Get(echo.HeaderXRequestID))
		s.State, status = view.StateFailed, http.StatusInternalServerError
	}
	s.URL = searchURL(values)
	s.Groups = facetGroups(res.Facets, values)
	s.Active = activeFilters(values)
	if err == nil {
		s.Suggested = suggestedFilters(query.Suggest(req.Text, req.Filters), values)
	}
	for _, it := range res.Items {
		r := resultView(it)
		if strings.TrimSpace(req.Text) != "" {
			r.WhyURL = r.URL + "/why?" + url.Values{query.ParamText: {req.Text}}.Encode()
		}
		s.Results = append(s.Results, r)
	}
	s.Total = res.Total
	if sem := res.Semantic; err == nil && sem != nil {
		s.Semantic = &view.Semantic{Hybrid: sem.Hybrid, Degraded: sem.Degraded}
		if h.opts.Semantic != nil {
			st := h.opts.Semantic()
			s.Semantic.Model, s.Semantic.Embedded, s.Semantic.Agents = st.Model, st.Embedded, st.Agents
		}
	}
	if err == nil && len(res.Items) == 0 && len(s.Active) == 0 && s.Q == "" && h.opts.Curator != nil {
		// Nothing to browse: say so honestly when agents are waiting
		// for review rather than calling the catalog empty. The count is
		// of those the caller would see once approved, and no more.
		n, cerr := h.opts.Curator.PendingCount(c.Request().Context(), h.scope(c))
		if cerr != nil {
			h.log.ErrorContext(c.Request().Context(), "console pending count failed", "err", cerr)
		}
		s.Pending = n
	}
	if res.NextCursor != "" {
		next := cloneValues(values)
		next.Set(query.ParamCursor, res.NextCursor)
		s.NextURL = "/?" + next.Encode()
	}
	if values.Has(query.ParamCursor) {
		first := cloneValues(values)
		first.Del(query.ParamCursor)
		s.FirstURL = searchURL(first)
	}
	title := "Search agents"
	if s.Q != "" {
		title = s.Q + " · " + title
	}
	if isFragmentRequest(c.Request()) {
		// The form submits every field, empty ones included; the address
		// bar gets the same search without them.
		c.Response().Header().Set(hxPushURL, s.URL)
	}
	return h.render(c, status, page{title: title, body: templates.SearchPage(s), fragment: templates.SearchFragment(title, s)})
}

// dropEmpty removes empty values: a plain form submits an empty q, and the
// API's parser rightly refuses empty filter values.
func dropEmpty(values url.Values) {
	for k, vs := range values {
		vs = slices.DeleteFunc(vs, func(v string) bool { return v == "" })
		if len(vs) == 0 {
			delete(values, k)
		} else {
			values[k] = vs
		}
	}
}

func cloneValues(v url.Values) url.Values {
	out := make(url.Values, len(v))
	for k, vs := range v {
		out[k] = slices.Clone(vs)
	}
	return out
}

func searchURL(v url.Values) string {
	if len(v) == 0 {
		return "/"
	}
	return "/?" + v.Encode()
}

// facetGroups lists every filter field with its counted values. A selected
// value that no longer has matches is listed too, with count 0, so it can
// be unticked.
func facetGroups(facets map[string][]catalog.FacetCount, values url.Values) []view.FacetGroup {
	groups := make([]view.FacetGroup, 0, len(catalog.FilterFields))
	for _, f := range catalog.FilterFields {
		selected := values[f]
		g := view.FacetGroup{Field: f, Label: facetLabels[f]}
		if g.Label == "" {
			g.Label = f
		}
		seen := make(map[string]bool)
		for _, fc := range facets[f] {
			seen[fc.Value] = true
			g.Values = append(g.Values, view.FacetValue{
				Value: fc.Value, Count: fc.Count, Selected: slices.Contains(selected, fc.Value),
			})
		}
		for _, v := range selected {
			if !seen[v] {
				seen[v] = true
				g.Values = append(g.Values, view.FacetValue{Value: v, Selected: true})
			}
		}
		all := g.Values
		g.Values = nil
		for _, v := range all {
			v.ID = facetID(f, v.Value)
			// Selected values stay in sight so they can be unticked.
			if v.Selected || len(g.Values) < facetShown {
				g.Values = append(g.Values, v)
			} else {
				g.More = append(g.More, v)
			}
		}
		groups = append(groups, g)
	}
	return groups
}

// facetID is an element id unique per field and value, made of characters
// that need no escaping in a CSS selector.
func facetID(field, value string) string {
	var b strings.Builder
	b.WriteString("f-")
	b.WriteString(field)
	b.WriteByte('-')
	for _, r := range value {
		if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			fmt.Fprintf(&b, "_%x_", r)
		}
	}
	return b.String()
}

// activeFilters lists the selected values, each with the URL that drops it.
func activeFilters(values url.Values) []view.ActiveFilter {
	var out []view.ActiveFilter
	for _, f := range catalog.FilterFields {
		for _, v := range values[f] {
			rest := cloneValues(values)
			rest.Del(query.ParamCursor)
			rest[f] = slices.DeleteFunc(slices.Clone(values[f]), func(x string) bool { return x == v })
			if len(rest[f]) == 0 {
				delete(rest, f)
			}
			out = append(out, view.ActiveFilter{Label: facetLabels[f], Value: v, RemoveURL: searchURL(rest)})
		}
	}
	return out
}

// suggestedFilters are the suggestions with the URL of the same search,
// from its first page, with each added.
func suggestedFilters(sugg []query.Suggestion, values url.Values) []view.SuggestedFilter {
	var out []view.SuggestedFilter
	for _, sg := range sugg {
		with := cloneValues(values)
		with.Del(query.ParamCursor)
		with.Add(sg.Field, sg.Value)
		out = append(out, view.SuggestedFilter{Label: cmp.Or(facetLabels[sg.Field], sg.Field), Value: sg.Value,
			Words: sg.Words, AddURL: searchURL(with)})
	}
	return out
}

func resultView(s catalog.Summary) view.Result {
	r := view.Result{
		// A card stored before nameless cards were refused has no name;
		// its link still needs words, as on the agent page.
		ID: s.ID, URL: agentURL(s.ID), Name: cmp.Or(s.Name, s.ID), Provider: s.Provider,
		Description: excerpt(s.Description, excerptLen), Version: s.Version,
		InputModes: s.InputModes, OutputModes: s.OutputModes,
		ProtocolVersions: s.ProtocolVersions, Bindings: s.Bindings,
		Health: s.Health, Signature: s.SignatureStatus, Listing: s.Listing, CardAt: cardAt(s.CardURL),
		Publisher: s.Publisher, PublisherVerified: s.PublisherVerified,
	}
	if s.Publisher != "" {
		r.PublisherURL = publisherURL(s.Publisher)
	}
	if s.Works != catalog.WorksUnchecked {
		r.Works = s.Works
	}
	for _, sk := range s.Skills {
		name := sk.Name
		if name == "" {
			name = sk.ID
		}
		r.Skills = append(r.Skills, name)
	}
	return r
}

// why answers GET /agents/{id}/why?q=…: how the agent meets the words
// of q, for "why this result" on the search page, as a fragment (htmx) or
// a page. An agent the caller does not see is not found, as on its page.
func (h *Console) why(c echo.Context) error {
	id := c.Param("id")
	values, err := url.ParseQuery(c.Request().URL.RawQuery)
	q := values.Get(query.ParamText)
	if err != nil || strings.TrimSpace(q) == "" {
		return h.errorPage(c, http.StatusBadRequest, "Nothing to explain", "Explanations are of a search's words: this address names none.")
	}
	e, err := h.opts.Searcher.Explain(c.Request().Context(), h.scope(c), id, q)
	switch {
	case errors.Is(err, catalog.ErrNotFound):
		return h.notFound(c)
	case errors.Is(err, catalog.ErrInvalidQuery):
		return h.errorPage(c, http.StatusBadRequest, "Nothing to explain", "The search cannot run as given.")
	case err != nil:
		return fmt.Errorf("explaining agent %s: %w", id, err)
	}
	w := view.Why{AgentID: id, AgentURL: agentURL(id), Q: q, SearchURL: "/?" + url.Values{query.ParamText: {q}}.Encode()}
	if e != nil {
		w.Matched, w.Near = true, e.Near
		w.Similarity, w.HasSimilarity = e.Similarity, e.HasSimilarity
		for _, m := range e.Words {
			ww := view.WhyWord{Word: m.Word, How: howLabels[m.How], Fields: strings.Join(m.Fields, ", ")}
			if m.How != "word" {
				// The word itself needs no second mention.
				ww.Matched = m.Matched
			}
			w.Words = append(w.Words, ww)
		}
	}
	return h.render(c, http.StatusOK, page{title: "Why this result", body: templates.WhyPage(w), fragment: templates.WhyList(w)})
}

// complete answers GET /complete?q=…: the tags and skill names of the
// agents the caller sees that the search box's text begins, as the
// options of its <datalist> (htmx), or as a page of links to the searches
// they filter (a browser without script never asks; a link might).
func (h *Console) complete(c echo.Context) error {
	values, err := url.ParseQuery(c.Request().URL.RawQuery)
	if err != nil {
		// A malformed address (a bad escape, a semicolon: no browser
		// sends one): nothing to offer, as for text the search refuses.
		values = url.Values{}
	}
	got, err := h.opts.Searcher.Complete(c.Request().Context(), h.scope(c), values.Get(query.ParamText), 0)
	switch {
	case err == nil:
	case h.opts.IndexNotReady != nil && errors.Is(err, h.opts.IndexNotReady), errors.Is(err, catalog.ErrInvalidQuery):
		// Nothing to offer; the search itself will say what is wrong.
		got = nil
	default:
		return fmt.Errorf("completing: %w", err)
	}
	cs := make([]view.Completion, len(got))
	for i, g := range got {
		cs[i] = view.Completion{Value: g.Value, Label: facetLabels[g.Field], Count: g.Count,
			URL: "/?" + url.Values{g.Field: {g.Value}}.Encode()}
	}
	return h.render(c, http.StatusOK, page{title: "Completions", body: templates.CompletionsPage(cs), fragment: templates.CompletionOptions(cs)})
}

// cardAt is a card URL's host and path, the part that tells two agents
// apart (the scheme is https for all but local ones).
func cardAt(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	return u.Host + u.EscapedPath()
}

// excerpt cuts s to at most n runes at a word boundary.
func excerpt(s string, n int) string {
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	cut := []rune(s)[:n]
	if i := strings.LastIndexAny(string(cut), " \n\t"); i > n/2 {
		return strings.TrimRight(string(cut)[:i], " ,.;:") + "…"
	}
	return string(cut) + "…"
}

// agentURL is the console's page of an agent.
func agentURL(id string) string {
	return "/agents/" + url.PathEscape(id)
}
