package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/api"
	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/proxy"
	"github.com/a2aregistry/registry/internal/sse"
	"github.com/a2aregistry/registry/internal/web/view"
	"github.com/a2aregistry/registry/web/templates"
)

// The "Try it" panel sends a tester's message to an agent through the
// proxy, as the run API does (the same api.Runner and api.RunStore), and
// shows the run: streamed into the page as server-rendered fragments when
// the page's script runs, as a plain form post answered with the run's
// page when it does not.

// tryScript is the asset that streams a run into the page.
const tryScript = "tryit.js"

// maxRunsShown bounds the past runs the panel lists.
const maxRunsShown = 20

// errRunNotYours: only the tester who started a run (or an admin) may
// continue it, as in the API.
var errRunNotYours = errors.New("run belongs to another tester")

// mountTryIt adds the panel's routes when the console has a proxy.
func (h *Console) mountTryIt(e *echo.Echo) {
	if h.opts.Runner == nil || h.opts.Runs == nil {
		return
	}
	read := h.guarded(auth.Tester)
	_, maxMsg, _ := h.opts.Runner.Limits()
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
	return h.opts.Runner != nil && h.opts.Runs != nil && h.holds(c, auth.Tester)
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
	runs, err := h.opts.Runs.AgentRuns(ctx, h.scope(c), ag.ID, catalog.RunKindRun, maxRunsShown)
	if err != nil {
		return h.agentError(c, fmt.Errorf("listing runs of agent %s: %w", ag.ID, err))
	}
	_, _, maxFile := h.opts.Runner.Limits()
	v := view.TryIt{
		AgentName: agentName(ag), AgentURL: agentURL(ag.ID), Action: tryURL(ag.ID),
		CSRFToken: h.csrfToken(c), Creds: h.credentialForm(c, ag.Card), MaxFile: maxFile,
		Script: h.assets.url(tryScript), OAuth: h.oauthForm(c, ag.Card, tryURL(ag.ID)+"/oauth"),
		Conversation: h.conversation(c, c.QueryParam(fieldConversation)),
	}
	v.Creds.Remembered = v.Conversation != ""
	for i, in := range ag.Card.Interfaces {
		label := in.URL + " · " + in.Binding + " · " + in.ProtocolVersion
		v.Interfaces = append(v.Interfaces, view.TryInterface{Value: strconv.Itoa(i), Label: label})
		v.AskVersion = v.AskVersion || in.ProtocolVersion == card.VersionUnknown
	}
	for _, r := range runs {
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
	id := uuid.NewString()
	if conv := h.conversation(c, c.FormValue(fieldConversation)); conv != "" {
		// The run takes the id a sign-in prepared, and with it the token.
		if _, err := h.opts.Runs.Run(c.Request().Context(), catalog.ScopeAll, conv); errors.Is(err, catalog.ErrNotFound) {
			id = conv
		}
	}
	now := time.Now().UTC()
	run := catalog.Run{ID: id, AgentID: ag.ID, Kind: catalog.RunKindRun, Subject: h.subject(c),
		State: api.RunStateRunning, ContextID: msg.ContextID, CreatedAt: now, UpdatedAt: now}
	tr := proxy.Transcript{Format: proxy.TranscriptFormat, Turns: []proxy.Turn{}}
	return h.converse(c, ag, run, tr, choice, h.formCredentials(c, ag.Card), msg, true)
}

func (h *Console) tryReply(c echo.Context) error {
	run, ag, tr, err := h.ownRun(c)
	if err != nil {
		return h.runError(c, err)
	}
	msg, err := h.composed(c)
	if err != nil {
		return h.errorPage(c, http.StatusBadRequest, "Message not sent", err.Error())
	}
	msg.ContextID = run.ContextID
	if !a2a.TaskState(run.State).Terminal() {
		// A terminal task takes no more messages (v1.0 §3.1.1); the
		// conversation goes on in its context with a new task.
		msg.TaskID = a2a.TaskID(run.TaskID)
	}
	return h.converse(c, ag, run, tr, pinnedChoice(run), h.formCredentials(c, ag.Card), msg, false)
}

func (h *Console) tryCancel(c echo.Context) error {
	ctx := c.Request().Context()
	run, ag, tr, err := h.ownRun(c)
	if err != nil {
		return h.runError(c, err)
	}
	if run.TaskID == "" {
		return h.errorPage(c, http.StatusConflict, "Nothing to cancel", "The run has no task yet.")
	}
	release, err := h.acquireRun(c)
	if release == nil {
		return err
	}
	defer release()
	creds := h.opts.Keeper.Use(run.ID, h.subject(c), h.formCredentials(c, ag.Card))
	started := time.Now()
	x, cerr := h.opts.Runner.Cancel(ctx, proxy.Call{Card: ag.Card, Choice: pinnedChoice(run), Credentials: creds}, run.TaskID)
	base := len(tr.Turns)
	tr.Turns = append(tr.Turns, proxy.NewTurn(proxy.OpCancel, started, nil, run.TaskID, creds, false, x, cerr))
	run = h.settle(run, &tr, x, cerr)
	if err := api.SaveRun(ctx, h.opts.Runs, run, tr, base); err != nil {
		return h.agentError(c, err)
	}
	return c.Redirect(http.StatusSeeOther, runURL(ag.ID, run.ID))
}

// converse sends msg on run and answers with the run: as server-sent
// events of HTML fragments when the page's script asks for them, else
// with a redirect to the run's page. create stores run first, once the
// limits admit it.
func (h *Console) converse(c echo.Context, ag catalog.Agent, run catalog.Run, tr proxy.Transcript,
	choice proxy.Choice, creds proxy.Credentials, msg *a2a.Message, create bool) error {
	ctx := c.Request().Context()
	release, err := h.acquireRun(c)
	if release == nil {
		return err
	}
	defer release()
	if create {
		if err := h.opts.Runs.CreateRun(ctx, h.actor(c), run); err != nil {
			return h.agentError(c, fmt.Errorf("creating run: %w", err))
		}
	}
	// Credentials given are remembered (in memory) for the conversation's
	// next turns, as the API does; a reply offering none uses those.
	creds = h.opts.Keeper.Use(run.ID, h.subject(c), creds)
	call := proxy.Call{Card: ag.Card, Choice: choice, Credentials: creds}
	base := len(tr.Turns)
	var stream *sse.Stream
	if sse.Accepts(c.Request()) {
		maxRun, _, _ := h.opts.Runner.Limits()
		stream = sse.Start(c.Response(), maxRun)
		sendFragment(ctx, stream, "run", templates.TryLive(h.liveView(c, ag, run)))
	}
	// The task id is stored as soon as the agent names it, so a cancel
	// (another request) can act on the task while this one streams.
	noted := run.TaskID != ""
	emit := func(e proxy.Event) {
		if stream != nil {
			sendFragment(ctx, stream, "event", templates.TryEvent(eventView(e.Seq, e.Kind, e.State, e.Data)))
		}
		if noted || e.TaskID == "" {
			return
		}
		noted = true
		r := run
		r.TaskID, r.ContextID = e.TaskID, e.ContextID
		r.InterfaceURL, r.Binding, r.ProtocolVersion = e.Via.URL, e.Via.Binding, e.Via.Speaks
		if err := api.SaveRun(ctx, h.opts.Runs, r, tr, base); err != nil {
			h.log.WarnContext(ctx, "console: noting a run's task", "err", err, "run_id", run.ID)
		}
	}
	started := time.Now()
	x, serr := h.opts.Runner.Send(ctx, call, msg, true, emit)
	tr.Turns = append(tr.Turns, proxy.NewTurn(proxy.OpSend, started, msg, string(msg.TaskID), creds, ag.Card.Capabilities.Streaming, x, serr))
	run = h.settle(run, &tr, x, serr)
	// The caller may be gone (a closed page); the evidence is kept.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := api.SaveRun(sctx, h.opts.Runs, run, tr, base); err != nil {
		if stream != nil {
			h.log.ErrorContext(ctx, "console: storing run", "err", err, "run_id", run.ID)
			stream.Send("failed", "The run could not be stored.")
			return nil
		}
		return h.agentError(c, err)
	}
	if stream != nil {
		stream.Send("done", runURL(ag.ID, run.ID))
		return nil
	}
	return c.Redirect(http.StatusSeeOther, runURL(ag.ID, run.ID))
}

func (h *Console) runPage(c echo.Context) error {
	run, ag, tr, err := h.loadRun(c)
	if err != nil {
		return h.runError(c, err)
	}
	v := h.liveView(c, ag, run)
	v.CreatedAt = run.CreatedAt
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
	switch a2a.TaskState(run.State) {
	case a2a.TaskStateInputRequired, a2a.TaskStateAuthRequired:
		v.ReplyURL = v.URL + "/messages"
		v.OAuth = h.oauthForm(c, ag.Card, v.URL+"/oauth")
	}
	return h.render(c, http.StatusOK, page{title: "Run of " + v.AgentName, body: templates.RunPage(v)})
}

// liveView is the head of a run's page: what a streaming page shows
// before the run ends.
func (h *Console) liveView(c echo.Context, ag catalog.Agent, run catalog.Run) view.Run {
	_, _, maxFile := h.opts.Runner.Limits()
	v := view.Run{
		AgentName: agentName(ag), AgentURL: agentURL(ag.ID), TryURL: tryURL(ag.ID), MaxFile: maxFile,
		URL: runURL(ag.ID, run.ID), State: run.State, ErrorCode: run.ErrorCode,
		CSRFToken: h.csrfToken(c), Creds: h.credentialForm(c, ag.Card), Script: h.assets.url(tryScript),
	}
	v.Creds.Remembered = h.opts.Keeper.Holds(run.ID, h.subject(c))
	if !a2a.TaskState(run.State).Terminal() && run.State != api.RunStateMessage && run.State != api.RunStateFailed {
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
func (h *Console) loadRun(c echo.Context) (catalog.Run, catalog.Agent, proxy.Transcript, error) {
	var tr proxy.Transcript
	ag, err := h.tryAgent(c)
	if err != nil {
		return catalog.Run{}, ag, tr, err
	}
	run, err := h.opts.Runs.Run(c.Request().Context(), h.scope(c), c.Param("run"))
	if err != nil {
		return run, ag, tr, fmt.Errorf("reading run: %w", err)
	}
	if run.AgentID != ag.ID || run.Kind != catalog.RunKindRun {
		return run, ag, tr, fmt.Errorf("run %s of agent %s: %w", run.ID, ag.ID, catalog.ErrNotFound)
	}
	if err := json.Unmarshal(run.Transcript, &tr); err != nil {
		return run, ag, tr, fmt.Errorf("decoding transcript of run %s: %w", run.ID, err)
	}
	return run, ag, tr, nil
}

// ownRun is loadRun for a caller who may continue the run.
func (h *Console) ownRun(c echo.Context) (catalog.Run, catalog.Agent, proxy.Transcript, error) {
	run, ag, tr, err := h.loadRun(c)
	if err == nil && h.opts.Authorizer != nil && run.Subject != h.subject(c) && !h.holds(c, auth.Admin) {
		err = errRunNotYours
	}
	return run, ag, tr, err
}

func (h *Console) runError(c echo.Context, err error) error {
	if errors.Is(err, errRunNotYours) {
		return h.errorPage(c, http.StatusForbidden, "Not your run", "Only the tester who started this run may continue it.")
	}
	if errors.Is(err, catalog.ErrNotFound) || errors.Is(err, errAgentGone) {
		return h.errorPage(c, http.StatusNotFound, "Run not found", "This agent has no run with this id.")
	}
	return h.agentError(c, err)
}

// subject names the caller as the owner of their runs.
func (h *Console) subject(c echo.Context) string {
	if h.opts.Principal != nil {
		if p, ok := h.opts.Principal(c); ok && p.Subject != "" {
			return p.Subject
		}
	}
	return "anonymous"
}

// acquireRun admits the caller's run under the limits the API applies.
// A nil release means it was not admitted: the refusal has been rendered
// (err is what rendering returned) or err says what failed.
func (h *Console) acquireRun(c echo.Context) (func(), error) {
	if h.opts.RunLimiter == nil {
		return func() {}, nil
	}
	release, err := h.opts.RunLimiter.Acquire(h.subject(c))
	var le *proxy.LimitError
	if errors.As(err, &le) {
		secs := int((le.RetryAfter + time.Second - 1) / time.Second)
		c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
		return nil, h.errorPage(c, http.StatusTooManyRequests, "Too many runs",
			fmt.Sprintf("You have too many runs going or started recently. Try again in %d s.", secs))
	}
	if err != nil {
		return nil, fmt.Errorf("admitting run: %w", err)
	}
	return release, nil
}

// settle folds an operation's outcome into the run.
func (h *Console) settle(run catalog.Run, tr *proxy.Transcript, x *proxy.Exchange, err error) catalog.Run {
	run = api.SettleRun(run, tr, x, err)
	if api.RunEnded(run.State) {
		h.opts.Keeper.Forget(run.ID)
	}
	h.log.Info("console: run turn", "run_id", run.ID, "agent_id", run.AgentID, "state", run.State, "error_code", run.ErrorCode)
	return run
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
