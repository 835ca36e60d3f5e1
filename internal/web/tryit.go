package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/proxy"
	"github.com/a2aregistry/registry/internal/runs"
	"github.com/a2aregistry/registry/internal/sse"
	"github.com/a2aregistry/registry/internal/web/view"
	"github.com/a2aregistry/registry/web/templates"
)

// The "Try it" panel sends a tester's message to an agent through the
// run service (runs.Service, the API's too) and shows the run: streamed
// into the page as server-rendered fragments when the page's script runs,
// as a plain form post answered with the run's page when it does not.

// tryScript is the asset that streams a run into the page.
const tryScript = "tryit.js"

// maxRunsShown bounds the past runs the panel lists.
const maxRunsShown = 20

// mountTryIt adds the panel's routes when the console has a proxy.
func (h *Console) mountTryIt(e *echo.Echo) {
	if h.opts.Runs == nil {
		return
	}
	read := h.guarded(auth.Tester)
	_, maxMsg, _ := h.opts.Runs.Limits()
	// A file travels as raw bytes in multipart; the rest of the form is
	// small.
	write := append(h.guarded(auth.Tester), limitBody(maxMsg+64<<10), h.checkCSRF)
	e.GET("/agents/:id/try", h.tryPage, read...)
	e.POST("/agents/:id/try", h.tryStart, write...)
	e.GET("/agents/:id/runs/:run", h.runPage, read...)
	e.POST("/agents/:id/runs/:run/messages", h.tryReply, write...)
	e.POST("/agents/:id/runs/:run/cancel", h.tryCancel, write...)
	if h.oauthEnabled() {
		e.POST("/agents/:id/try/oauth", h.oauthStartNew, write...)
		e.POST("/agents/:id/runs/:run/oauth", h.oauthStartRun, write...)
		// The authorization server sends the browser back with a GET; the
		// state, bound to this tester's session, stands in for CSRF.
		e.GET(OAuthCallbackPath, h.oauthCallback, read...)
	}
}

// canTry tells whether the caller may use the panel.
func (h *Console) canTry(c echo.Context) bool {
	return h.opts.Runs != nil && h.holds(c, auth.Tester)
}

func tryURL(agentID string) string { return agentURL(agentID) + "/try" }

func runURL(agentID, runID string) string {
	return agentURL(agentID) + "/runs/" + url.PathEscape(runID)
}

func (h *Console) tryPage(c echo.Context) error {
	ctx := c.Request().Context()
	ag, err := h.tryAgent(c)
	if err != nil {
		return h.agentError(c, err)
	}
	rs, err := h.opts.Runs.List(ctx, h.scope(c), ag.ID, maxRunsShown)
	if err != nil {
		return h.agentError(c, err)
	}
	_, _, maxFile := h.opts.Runs.Limits()
	v := view.TryIt{
		AgentName: agentName(ag), AgentURL: agentURL(ag.ID), Action: tryURL(ag.ID),
		CSRFToken: h.csrfToken(c), Creds: credentialForm(ag.Card), MaxFile: maxFile,
		Script: h.assets.url(tryScript), OAuth: h.oauthForm(c, ag.Card, tryURL(ag.ID)+"/oauth"),
		Conversation: h.conversation(c, c.QueryParam(fieldConversation)),
	}
	v.Creds.Remembered = v.Conversation != ""
	for i, in := range ag.Card.Interfaces {
		label := in.URL + " · " + in.Binding + " · " + in.ProtocolVersion
		v.Interfaces = append(v.Interfaces, view.TryInterface{Value: strconv.Itoa(i), Label: label})
		v.AskVersion = v.AskVersion || in.ProtocolVersion == card.VersionUnknown
	}
	for _, r := range rs {
		v.Runs = append(v.Runs, view.RunSummary{URL: runURL(ag.ID, r.ID), State: r.State, ErrorCode: r.ErrorCode, CreatedAt: r.CreatedAt})
	}
	return h.render(c, http.StatusOK, page{title: "Try " + v.AgentName, body: templates.TryPage(v)})
}

func (h *Console) tryStart(c echo.Context) error {
	ag, err := h.tryAgent(c)
	if err != nil {
		return h.agentError(c, err)
	}
	msg, err := h.composed(c)
	if err != nil {
		return h.errorPage(c, http.StatusBadRequest, "Message not sent", err.Error())
	}
	choice, err := chosenInterface(ag.Card, c.FormValue(fieldInterface), c.FormValue(fieldSpeak))
	if err != nil {
		return h.errorPage(c, http.StatusBadRequest, "Message not sent", err.Error())
	}
	// The run takes the id a sign-in prepared, and with it the token.
	t := runs.Turn{Message: msg, Choice: choice, Credentials: h.formCredentials(c), NoStream: c.FormValue(fieldBlocking) != "",
		RunID: h.conversation(c, c.FormValue(fieldConversation))}
	return h.converse(c, ag, func(w runs.Watcher) (runs.Outcome, error) {
		return h.opts.Runs.Start(c.Request().Context(), h.caller(c), ag.ID, t, w)
	})
}

func (h *Console) tryReply(c echo.Context) error {
	ag, err := h.tryAgent(c)
	if err != nil {
		return h.runError(c, err)
	}
	msg, err := h.composed(c)
	if err != nil {
		return h.errorPage(c, http.StatusBadRequest, "Message not sent", err.Error())
	}
	t := runs.Turn{Message: msg, Credentials: h.formCredentials(c), NoStream: c.FormValue(fieldBlocking) != ""}
	return h.converse(c, ag, func(w runs.Watcher) (runs.Outcome, error) {
		return h.opts.Runs.Continue(c.Request().Context(), h.caller(c), runs.Ref{RunID: c.Param("run"), AgentID: ag.ID}, t, w)
	})
}

func (h *Console) tryCancel(c echo.Context) error {
	ag, err := h.tryAgent(c)
	if err != nil {
		return h.runError(c, err)
	}
	out, err := h.opts.Runs.Cancel(c.Request().Context(), h.caller(c), runs.Ref{RunID: c.Param("run"), AgentID: ag.ID},
		runs.Turn{Credentials: h.formCredentials(c)})
	if err != nil {
		return h.runError(c, err)
	}
	return c.Redirect(http.StatusSeeOther, runURL(ag.ID, out.Run.ID))
}

// converse runs one turn through do and answers with the run: as
// server-sent events of HTML fragments when the page's script asks for
// them, else with a redirect to the run's page.
func (h *Console) converse(c echo.Context, ag catalog.Agent, do func(runs.Watcher) (runs.Outcome, error)) error {
	ctx := c.Request().Context()
	var stream *sse.Stream
	w := runs.Watcher{Started: func(run catalog.Run, _ int) {
		if sse.Accepts(c.Request()) {
			maxRun, _, _ := h.opts.Runs.Limits()
			stream = sse.Start(c.Response(), maxRun)
			sendFragment(ctx, stream, "run", templates.TryLive(h.liveView(c, ag, run)))
		}
	}}
	w.Event = func(_ int, e proxy.Event) {
		if stream != nil {
			sendFragment(ctx, stream, "event", templates.TryEvent(eventView(e.Seq, e.Kind, e.State, e.Data)))
		}
	}
	out, err := do(w)
	if stream != nil {
		if err != nil {
			h.log.ErrorContext(ctx, "console: storing run", "err", err, "run_id", out.Run.ID)
			stream.Send("failed", "The run could not be stored.")
			return nil
		}
		stream.Send("done", runURL(ag.ID, out.Run.ID))
		return nil
	}
	if err != nil {
		return h.runError(c, err)
	}
	if p := runs.Preflight(out.Err); p != nil {
		// The attempt is kept in the run, but the tester's own mistake is
		// said here, as the API answers it.
		return h.errorPage(c, http.StatusBadRequest, "Message not sent", sentence(p.Message))
	}
	return c.Redirect(http.StatusSeeOther, runURL(ag.ID, out.Run.ID))
}

func (h *Console) runPage(c echo.Context) error {
	rd, ag, err := h.loadRun(c)
	if err != nil {
		return h.runError(c, err)
	}
	run, tr := rd.Run, rd.Transcript
	v := h.liveView(c, ag, run)
	v.CreatedAt, v.Withheld = run.CreatedAt, rd.Withheld
	for _, t := range tr.Turns {
		v.Turns = append(v.Turns, turnView(t))
	}
	result := tr.Task
	if result == nil {
		result = tr.Message
	}
	if result != nil {
		v.Result = resultItems(result)
	}
	waiting := a2a.TaskState(run.State)
	if run.State == runs.StateFailed && run.TaskID != "" {
		// A reply the agent answered with an error: the task, as the
		// agent last showed it, may still wait for the tester.
		waiting = a2a.TaskState(taskState(tr.Task))
	}
	switch waiting {
	case a2a.TaskStateInputRequired, a2a.TaskStateAuthRequired:
		if rd.Withheld {
			break
		}
		v.ReplyURL = v.URL + "/messages"
		v.OAuth = h.oauthForm(c, ag.Card, v.URL+"/oauth")
	}
	return h.render(c, http.StatusOK, page{title: "Run of " + v.AgentName, body: templates.RunPage(v)})
}

// liveView is the head of a run's page: what a streaming page shows
// before the run ends.
func (h *Console) liveView(c echo.Context, ag catalog.Agent, run catalog.Run) view.Run {
	_, _, maxFile := h.opts.Runs.Limits()
	v := view.Run{
		AgentName: agentName(ag), AgentURL: agentURL(ag.ID), TryURL: tryURL(ag.ID), MaxFile: maxFile,
		URL: runURL(ag.ID, run.ID), State: run.State, ErrorCode: run.ErrorCode,
		CSRFToken: h.csrfToken(c), Creds: credentialForm(ag.Card), Script: h.assets.url(tryScript),
	}
	v.Creds.Remembered = h.opts.Runs.Remembers(run.ID, h.subject(c))
	if !runs.Ended(run.State) && run.State != runs.StateMessage {
		v.CancelURL = v.URL + "/cancel"
	}
	return v
}

// tryAgent reads the agent named in the path.
func (h *Console) tryAgent(c echo.Context) (catalog.Agent, error) {
	id, ok := pathID(c)
	if !ok {
		return catalog.Agent{}, errAgentGone
	}
	v, err := h.opts.Agents.AgentView(c.Request().Context(), h.scope(c), id, h.now())
	if err != nil {
		return catalog.Agent{}, fmt.Errorf("loading agent %s: %w", id, err)
	}
	if v.Agent.Removed != nil {
		// A removed agent keeps its history, not its test panel.
		return catalog.Agent{}, errAgentGone
	}
	if v.Agent.Card == nil {
		return catalog.Agent{}, fmt.Errorf("agent %s has no parsed card", id)
	}
	return v.Agent, nil
}

// loadRun reads the run named in the path, of the agent named in the
// path.
func (h *Console) loadRun(c echo.Context) (runs.Read, catalog.Agent, error) {
	ag, err := h.tryAgent(c)
	if err != nil {
		return runs.Read{}, ag, err
	}
	rd, err := h.opts.Runs.Get(c.Request().Context(), h.caller(c), c.Param("run"))
	if err == nil && rd.Run.AgentID != ag.ID {
		err = fmt.Errorf("run %s of agent %s: %w", rd.Run.ID, ag.ID, catalog.ErrNotFound)
	}
	return rd, ag, err
}

// runError shows why a run could not be read or a turn not taken.
func (h *Console) runError(c echo.Context, err error) error {
	var re *runs.Error
	errors.As(err, &re)
	switch {
	case errors.Is(err, catalog.ErrNotFound) || errors.Is(err, errAgentGone) || runs.KindOf(err) == runs.KindNotFound:
		return h.errorPage(c, http.StatusNotFound, "Run not found", "This agent has no run with this id.")
	case re == nil:
		return h.agentError(c, err)
	case re.Kind == runs.KindNotYours:
		return h.errorPage(c, http.StatusForbidden, "Not your run", "Only the tester who started this run may continue it.")
	case re.Kind == runs.KindNoTask:
		return h.errorPage(c, http.StatusConflict, "Nothing to cancel", "The run has no task yet.")
	case re.Kind == runs.KindTooManyRuns || re.Kind == runs.KindRateLimited:
		secs := int((re.RetryAfter + time.Second - 1) / time.Second)
		c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
		return h.errorPage(c, http.StatusTooManyRequests, "Too many runs",
			fmt.Sprintf("You have too many runs going or started recently. Try again in %d s.", secs))
	}
	return h.errorPage(c, http.StatusBadRequest, "Message not sent", sentence(re.Message))
}

// subject names the caller as the owner of their runs and of the
// credentials they offer.
func (h *Console) subject(c echo.Context) string {
	if s := h.principalSubject(c); s != "" {
		return s
	}
	return "anonymous"
}

func (h *Console) principalSubject(c echo.Context) string {
	if h.opts.Principal != nil {
		if p, ok := h.opts.Principal(c); ok {
			return p.Subject
		}
	}
	return ""
}

// caller is the caller of c as the run service takes them. Without
// sign-in every page is open, and so is every run.
func (h *Console) caller(c echo.Context) runs.Caller {
	return runs.Caller{Actor: h.actor(c), Scope: h.scope(c), Subject: h.principalSubject(c),
		AnyRun: h.opts.Authorizer == nil || h.holds(c, auth.Admin)}
}

func agentName(ag catalog.Agent) string {
	if ag.Card != nil && ag.Card.Name != "" {
		return ag.Card.Name
	}
	return ag.ID
}

// url is the content-hashed address of the asset name.
func (as *assets) url(name string) string {
	a, ok := as.byName[name]
	if !ok {
		return ""
	}
	return assetPrefix + a.hash + "/" + name
}
