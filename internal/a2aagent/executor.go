package a2aagent

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/a2aregistry/registry/internal/ardentry"
	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/query"
)

// Errors of a message the agent cannot read. They reach the client as
// A2A errors (a2a.Error wraps the protocol's own kinds).
var (
	errNoText = a2a.NewError(a2a.ErrInvalidParams,
		"the message has no text: say in words what agent you are looking for")
	errFilePart = a2a.NewError(a2a.ErrUnsupportedContentType,
		"file parts are not read: say in words what agent you are looking for (text/plain)")
)

// executor answers each message with a completed task.
type executor struct{ ag *Agent }

func (x *executor) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		text, err := messageText(ec.Message)
		if err != nil {
			yield(nil, err)
			return
		}
		ans, err := x.ag.answer(ctx, ec, text)
		if err != nil {
			yield(nil, err)
			return
		}
		// The answer is ready at once, so it is one event: the task,
		// completed, with its artifact. Each event costs the SDK a deep
		// copy of the task (encoding/gob) and a store update; three
		// events (submitted, artifact, completed) tripled that.
		task := ec.StoredTask
		if task == nil {
			task = a2a.NewSubmittedTask(ec, ec.Message)
		}
		now := x.ag.opts.Now()
		task.Artifacts = append(task.Artifacts, &a2a.Artifact{ID: a2a.NewArtifactID(), Name: "agents",
			Parts: []*a2a.Part{a2a.NewDataPart(ans.data), a2a.NewTextPart(ans.text)}})
		task.Status = a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: &now,
			Message: a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart(ans.status))}
		yield(task, nil)
	}
}

func (x *executor) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

// messageText is the words of m: its text parts joined. A message with a
// file part, or with no words, is refused.
func messageText(m *a2a.Message) (string, error) {
	if m == nil {
		return "", errNoText
	}
	var b strings.Builder
	for _, p := range m.Parts {
		if p == nil {
			continue
		}
		switch p.Content.(type) {
		case a2a.Text:
			b.WriteString(p.Text())
			b.WriteByte(' ')
		case a2a.Raw, a2a.URL:
			return "", errFilePart
		}
	}
	text := strings.TrimSpace(b.String())
	if text == "" {
		return "", errNoText
	}
	if !utf8.ValidString(text) {
		return "", a2a.NewError(a2a.ErrInvalidParams, "the message's text is not UTF-8")
	}
	if len(text) > maxMessageText {
		return "", a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf("the message is too long: say it in at most %d bytes", maxMessageText))
	}
	return text, nil
}

// answer is what the agent says back.
type answer struct {
	data   Result
	text   string
	status string
}

// describeRef finds the agent a describe-agent request names.
var describeRef = regexp.MustCompile(`(?i)^\s*(?:describe|tell me about|what is|show)\s+(?:the\s+)?(?:agent\s+)?(\S+)\s*$`)

func (ag *Agent) answer(ctx context.Context, ec *a2asrv.ExecutorContext, text string) (answer, error) {
	if m := describeRef.FindStringSubmatch(text); m != nil && looksLikeRef(m[1]) {
		return ag.describe(ctx, ec, strings.Trim(m[1], "<>\"'"))
	}
	owner := ""
	if ec.User != nil {
		owner = ec.User.Name
	}
	r := read(text)
	if prev, ok := ag.convs.get(ec.ContextID, owner); ok && (r.refine || r.text == "") {
		r = merge(prev, r)
	}
	vals := url.Values{}
	if r.text != "" {
		vals.Set(query.ParamText, excerpt(r.text, catalog.MaxQueryTextLen))
	}
	for f, vs := range r.filters {
		vals[f] = vs
	}
	vals.Set(query.ParamLimit, fmt.Sprint(resultSize))
	req, err := query.Parse(vals)
	if err != nil {
		return answer{}, a2a.NewError(a2a.ErrInvalidParams, err.Error())
	}
	q := req.Query(ag.scopeOf(ec))
	q.NoFacets = true // an answer shows agents, not facet counts
	page, err := ag.opts.Catalog.Search(ctx, q)
	if err != nil {
		return answer{}, ag.fault(ctx, err)
	}
	ag.convs.put(ec.ContextID, owner, r)
	return searchAnswer(r, page), nil
}

func looksLikeRef(s string) bool {
	s = strings.Trim(s, "<>\"'")
	return card.IsURN(s) || strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://") || len(s) == 36 && strings.Count(s, "-") == 4
}

// Entry is an agent in an answer: an ARD entry (ARD v0.91 §3) and the
// registry's id, for the describe-agent skill.
type Entry struct {
	Identifier  string   `json:"identifier"`
	DisplayName string   `json:"displayName"`
	Type        string   `json:"type"`
	URL         string   `json:"url"`
	Description string   `json:"description,omitempty"`
	Tags        []string `json:"tags,omitempty"`
	Skills      []Skill  `json:"skills"`
	Score       int      `json:"score"`
	ID          string   `json:"id"`
	Signature   string   `json:"signature,omitempty"`
	Health      string   `json:"health,omitempty"`
	Bindings    []string `json:"bindings,omitempty"`
}

type Skill struct {
	ID   string   `json:"id"`
	Name string   `json:"name"`
	Tags []string `json:"tags,omitempty"`
}

// Result is the data part of a search answer.
type Result struct {
	Query ResultQuery `json:"query"`
	Total int         `json:"total"`
	// Entries is absent when nothing matched: the SDK copies events
	// through encoding/gob, which turns an empty list into null.
	Entries []Entry `json:"entries,omitempty"`
}

// ResultQuery is the search the agent made of the conversation so far.
type ResultQuery struct {
	Text    string              `json:"text"`
	Filters map[string][]string `json:"filters,omitempty"`
}

func searchAnswer(r reading, page catalog.Page) answer {
	res := Result{Query: ResultQuery{Text: r.text, Filters: r.filters}, Total: page.Total, Entries: []Entry{}}
	top := 0.0
	for _, it := range page.Items {
		top = max(top, it.Score)
	}
	var b strings.Builder
	switch {
	case page.Total == 0:
		b.WriteString("No agent matches")
	case page.Total == 1:
		b.WriteString("1 agent matches")
	default:
		fmt.Fprintf(&b, "%d agents match", page.Total)
	}
	b.WriteString(describeQuery(r))
	b.WriteString(".")
	if page.Total > len(page.Items) {
		fmt.Fprintf(&b, " The best %d:", len(page.Items))
	}
	for i, it := range page.Items {
		e := ardentry.FromSummary(it, top)
		en := Entry{Identifier: e.Identifier, DisplayName: e.DisplayName, Type: e.Type, URL: e.URL, Description: e.Description,
			Tags: e.Tags, Score: e.Score, ID: e.ID, Signature: it.SignatureStatus, Health: it.Health, Bindings: it.Bindings, Skills: []Skill{}}
		for _, s := range e.Skills {
			en.Skills = append(en.Skills, Skill(s))
		}
		res.Entries = append(res.Entries, en)
		fmt.Fprintf(&b, "\n%d. %s — %s (%s)", i+1, it.Name, excerpt(it.Description, 140), it.CardURL)
	}
	if page.Total > 0 {
		b.WriteString("\nSay \"only signed ones\", \"over gRPC\" or \"accepts JSON\" to narrow this down.")
	}
	if sem := page.Semantic; sem != nil && !sem.Hybrid {
		// Never silently: the answer says it matched words alone.
		b.WriteString("\n(Matched by words only: " + sem.Degraded + ".)")
	}
	status := fmt.Sprintf("found %d agents", page.Total)
	return answer{data: res, text: b.String(), status: status}
}

func describeQuery(r reading) string {
	var parts []string
	if r.text != "" {
		parts = append(parts, fmt.Sprintf("%q", r.text))
	}
	for _, f := range catalog.FilterFields {
		if vs := r.filters[f]; len(vs) > 0 {
			parts = append(parts, strings.ReplaceAll(f, "_", " ")+" "+strings.Join(vs, " and "))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " " + strings.Join(parts, ", ")
}

// describe answers the describe-agent skill.
func (ag *Agent) describe(ctx context.Context, ec *a2asrv.ExecutorContext, ref string) (answer, error) {
	sc := ag.scopeOf(ec)
	id := ref
	if catalog.IsAgentRef(ref) {
		var err error
		id, err = ag.opts.Catalog.AgentIDOf(ctx, sc, ref)
		switch {
		case errors.Is(err, catalog.ErrNotFound):
			return notFoundAnswer(ref), nil
		case errors.Is(err, card.ErrMalformedURN) || errors.Is(err, card.ErrInvalidURL):
			return answer{}, a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf("%s is not a card URL or an ARD identifier", excerpt(ref, 200)))
		case err != nil:
			return answer{}, ag.fault(ctx, err)
		}
	}
	v, err := ag.opts.Catalog.AgentView(ctx, sc, id, ag.opts.Now())
	if errors.Is(err, catalog.ErrNotFound) || err == nil && (v.Agent.Card == nil || v.Agent.Removed != nil && !sc.All) {
		return notFoundAnswer(ref), nil
	}
	if err != nil {
		return answer{}, ag.fault(ctx, err)
	}
	a, c := v.Agent, v.Agent.Card
	en := Entry{Identifier: ardentry.URN(a.CardURL), DisplayName: c.Name, Type: ardentry.TypeA2ACard, URL: a.CardURL,
		Description: c.Description, ID: a.ID, Signature: a.SignatureStatus, Health: a.Health, Skills: []Skill{}, Score: 100}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\nCard: %s\nSignature: %s; health: %s.", c.Name, c.Description, a.CardURL, a.SignatureStatus, a.Health)
	for _, s := range c.Skills {
		en.Skills = append(en.Skills, Skill{ID: s.ID, Name: s.Name, Tags: s.Tags})
		fmt.Fprintf(&b, "\nSkill %s: %s (accepts %s; returns %s)", s.Name, excerpt(s.Description, 140),
			strings.Join(s.InputModes, ", "), strings.Join(s.OutputModes, ", "))
	}
	for _, i := range c.Interfaces {
		en.Bindings = append(en.Bindings, i.Binding)
		fmt.Fprintf(&b, "\nInterface %s %s at %s", i.Binding, i.ProtocolVersion, i.URL)
	}
	return answer{data: Result{Total: 1, Entries: []Entry{en}, Query: ResultQuery{Text: ref, Filters: map[string][]string{}}},
		text: b.String(), status: "described " + c.Name}, nil
}

func notFoundAnswer(ref string) answer {
	return answer{data: Result{Entries: []Entry{}, Query: ResultQuery{Text: ref, Filters: map[string][]string{}}},
		text: fmt.Sprintf("No agent %s in this registry (or not one you may see).", excerpt(ref, 200)), status: "not found"}
}

// fault turns an error of the application layer into an A2A error that
// leaks nothing.
func (ag *Agent) fault(ctx context.Context, err error) error {
	if errors.Is(err, catalog.ErrIndexNotReady) {
		return a2a.NewError(a2a.ErrServerError, "the search index is still being built; retry in a few seconds")
	}
	if errors.Is(err, catalog.ErrInvalidQuery) {
		return a2a.NewError(a2a.ErrInvalidParams, err.Error())
	}
	ag.log.ErrorContext(ctx, "a2a agent failed", "err", err)
	return a2a.NewError(a2a.ErrInternalError, "the registry failed to search; try again later")
}

func excerpt(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
