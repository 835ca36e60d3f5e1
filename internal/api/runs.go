package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/proxy"
	"github.com/a2aregistry/registry/internal/runs"
	"github.com/a2aregistry/registry/internal/sse"
)

// The run routes decode a request, call runs.Service, and encode the run
// as JSON or, for a caller that accepts text/event-stream, as server-sent
// events.

// maxRunsListed bounds GET /agents/{id}/runs.
const maxRunsListed = 100

// isRunRoute tells the routes whose bodies carry messages (files
// included), which get a larger body limit than the rest of the API.
func isRunRoute(path string) bool {
	for _, suffix := range []string{"/runs", "/checks", "/messages", "/cancel", "/resubscribe"} {
		if strings.HasSuffix(path, suffix) {
			return true
		}
	}
	return false
}

// maxRunBody is the largest run request: the message limit, base64
// growth of its files (4/3), and room for the rest of the request.
func (a *API) maxRunBody() int64 {
	_, maxMsg, _ := a.runs.Limits()
	return maxMsg/3*4 + 64<<10
}

// caller is the caller of c as the run service takes them.
func (a *API) caller(c echo.Context) runs.Caller {
	p := auth.FromContext(c.Request().Context())
	// Without sign-in every route is open, and so is every run.
	return runs.Caller{Actor: actorOf(c), Scope: a.scope(c), Subject: p.Subject, AnyRun: a.authz == nil || p.Role >= auth.Admin}
}

func (a *API) startRun(c echo.Context) error {
	in, err := a.decodeRunRequest(c, true)
	if err != nil {
		return err
	}
	msg, err := in.message(in.ContextID, in.TaskID)
	if err != nil {
		return err
	}
	return a.answerTurn(c, true, func(w runs.Watcher) (runs.Outcome, error) {
		return a.runs.Start(c.Request().Context(), a.caller(c), c.Param("id"), in.turn(msg), w)
	})
}

func (a *API) continueRun(c echo.Context) error {
	in, err := a.decodeRunRequest(c, true)
	if err != nil {
		return err
	}
	// The run's context and task are the service's to set.
	msg, err := in.message("", "")
	if err != nil {
		return err
	}
	return a.answerTurn(c, false, func(w runs.Watcher) (runs.Outcome, error) {
		return a.runs.Continue(c.Request().Context(), a.caller(c), runs.Ref{RunID: c.Param("id")}, in.turn(msg), w)
	})
}

// resubscribeRun reopens the stream of the run's task, for a tester whose
// stream was cut.
func (a *API) resubscribeRun(c echo.Context) error {
	in, err := a.decodeRunRequest(c, false)
	if err != nil {
		return err
	}
	if in.Message != nil {
		e := newError(http.StatusBadRequest, CodeInvalidBody, "a resubscription sends no message")
		e.body.Parameter = "message"
		return e
	}
	return a.answerTurn(c, false, func(w runs.Watcher) (runs.Outcome, error) {
		return a.runs.Resubscribe(c.Request().Context(), a.caller(c), runs.Ref{RunID: c.Param("id")}, in.turn(nil), w)
	})
}

func (a *API) cancelRun(c echo.Context) error {
	in, err := a.decodeRunRequest(c, false)
	if err != nil {
		return err
	}
	out, err := a.runs.Cancel(c.Request().Context(), a.caller(c), runs.Ref{RunID: c.Param("id")}, in.turn(nil))
	if err != nil {
		return runError(c, err)
	}
	return c.JSON(http.StatusOK, newRunResponse(out.Run, out.Transcript))
}

func (a *API) getRun(c echo.Context) error {
	rd, err := a.runs.Get(c.Request().Context(), a.caller(c), c.Param("id"))
	if err != nil {
		return runError(c, err)
	}
	out := newRunResponse(rd.Run, rd.Transcript)
	out.TranscriptWithheld = rd.Withheld
	return c.JSON(http.StatusOK, out)
}

func (a *API) listRuns(c echo.Context) error {
	limit := maxRunsListed
	if v := c.QueryParam(paramLimit); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxRunsListed {
			return invalidParameter(paramLimit, "limit must be an integer between 1 and %d", maxRunsListed)
		}
		limit = n
	}
	rs, err := a.runs.List(c.Request().Context(), a.scope(c), c.Param("id"), limit)
	if err != nil {
		return runError(c, err)
	}
	out := RunList{Runs: []RunSummary{}}
	for _, r := range rs {
		out.Runs = append(out.Runs, newRunSummary(r))
	}
	return c.JSON(http.StatusOK, out)
}

// answerTurn runs one turn through do and answers with the run: as JSON,
// or as server-sent events when the caller accepts them. create answers
// 201 with the run's Location.
func (a *API) answerTurn(c echo.Context, create bool, do func(runs.Watcher) (runs.Outcome, error)) error {
	var stream *sse.Stream
	w := runs.Watcher{Started: func(run catalog.Run, _ int) {
		if create {
			c.Response().Header().Set(echo.HeaderLocation, BasePath+"/runs/"+run.ID)
		}
		if sse.Accepts(c.Request()) {
			stream = sse.Start(c.Response(), a.maxRun())
			stream.SendJSON("run", RunStarted{ID: run.ID, AgentID: run.AgentID})
		}
	}}
	w.Event = func(turn int, e proxy.Event) {
		if stream != nil {
			stream.SendJSON("a2a", RunEvent{Turn: turn, Seq: e.Seq, AtMS: float64(e.At.Microseconds()) / 1000, Kind: e.Kind, State: e.State, Data: e.Data})
		}
	}
	out, err := do(w)
	if stream == nil {
		return a.turnJSON(c, create, out, err)
	}
	if err != nil {
		a.log.Error("api: storing run", "err", err, "run_id", out.Run.ID)
		stream.SendJSON("error", RunFailure{RunError: RunError{Code: CodeInternal, Message: "the run could not be stored"}})
		return nil
	}
	resp := newRunResponse(out.Run, out.Transcript)
	if out.Err != nil {
		stream.SendJSON("error", RunFailure{RunError: *resp.Error, Run: &resp})
		return nil
	}
	stream.SendJSON("done", resp)
	return nil
}

// turnJSON answers a turn that did not stream.
func (a *API) turnJSON(c echo.Context, create bool, out runs.Outcome, err error) error {
	if err != nil {
		return runError(c, err)
	}
	if p := runs.Preflight(out.Err); p != nil {
		// The attempt is kept as evidence, but the answer is the
		// caller's mistake, not a run to go and read.
		c.Response().Header().Del(echo.HeaderLocation)
		return runError(c, p)
	}
	status := http.StatusOK
	if create {
		status = http.StatusCreated
	}
	return c.JSON(status, newRunResponse(out.Run, out.Transcript))
}

func (a *API) maxRun() time.Duration {
	d, _, _ := a.runs.Limits()
	return d
}

// runKinds maps the run service's refusals onto answers.
var runKinds = map[runs.Kind]struct {
	status    int
	code      string
	parameter string
}{
	runs.KindNotFound:             {http.StatusNotFound, CodeNotFound, ""},
	runs.KindNotYours:             {http.StatusForbidden, CodeForbidden, ""},
	runs.KindNoTask:               {http.StatusConflict, CodeRunNoTask, ""},
	runs.KindTooManyRuns:          {http.StatusTooManyRequests, CodeTooManyRuns, ""},
	runs.KindRateLimited:          {http.StatusTooManyRequests, CodeTooManyRequests, ""},
	runs.KindExtension:            {http.StatusBadRequest, CodeInvalidBody, "extensions"},
	runs.KindBadRequest:           {http.StatusBadRequest, CodeInvalidBody, "message"},
	runs.KindInterfaceNotDeclared: {http.StatusBadRequest, CodeInterfaceNotDeclared, "interface"},
	runs.KindCredentials:          {http.StatusBadRequest, CodeCredentialsInvalid, "credentials"},
	runs.KindVersionUnknown:       {http.StatusUnprocessableEntity, CodeVersionUnknown, ""},
	runs.KindNoUsableInterface:    {http.StatusUnprocessableEntity, CodeNoUsableInterface, ""},
	runs.KindInvalidMessage:       {http.StatusBadRequest, CodeInvalidMessage, "message"},
	runs.KindMessageTooLarge:      {http.StatusRequestEntityTooLarge, CodePayloadTooLarge, ""},
}

// runError answers a *runs.Error with its status and code (429 with
// Retry-After); other errors are the registry's own.
func runError(c echo.Context, err error) error {
	var re *runs.Error
	if !errors.As(err, &re) {
		return err
	}
	k, ok := runKinds[re.Kind]
	if !ok {
		return err
	}
	if re.Kind == runs.KindTooManyRuns || re.Kind == runs.KindRateLimited {
		secs := int((re.RetryAfter + time.Second - 1) / time.Second)
		c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
	}
	e := newError(k.status, k.code, "%s", re.Message)
	e.body.Parameter = k.parameter
	return e
}

// decodeRunRequest reads a run request body. An empty body is allowed
// where no message is needed (cancel).
func (a *API) decodeRunRequest(c echo.Context, needMessage bool) (RunRequest, error) {
	var in RunRequest
	req := c.Request()
	limit := a.maxRunBody()
	if req.ContentLength == 0 && !needMessage {
		return in, nil
	}
	if err := decodeJSONBody(c, &in, limit, `{"message": {...}, ...} (a run request)`); err != nil {
		return in, err
	}
	if needMessage && in.Message == nil {
		e := newError(http.StatusBadRequest, CodeInvalidBody, "message is required")
		e.body.Parameter = "message"
		return in, e
	}
	return in, nil
}

// message builds the A2A message from the request's v1.0-shaped message,
// carrying the conversation's ids.
func (in RunRequest) message(contextID, taskID string) (*a2a.Message, error) {
	bad := func(format string, args ...any) error {
		e := newError(http.StatusBadRequest, CodeInvalidMessage, format, args...)
		e.body.Parameter = "message"
		return e
	}
	m := in.Message
	switch strings.ToLower(strings.TrimPrefix(strings.ToUpper(m.Role), "ROLE_")) {
	case "", "user":
	default:
		return nil, bad("message.role must be user")
	}
	if len(m.Parts) == 0 {
		return nil, bad("message.parts must hold at least one part")
	}
	msg := a2a.NewMessage(a2a.MessageRoleUser)
	if m.MessageID != "" {
		msg.ID = m.MessageID
	}
	for i, raw := range m.Parts {
		var p a2a.Part
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, bad("message.parts[%d] must have exactly one of text, raw, data, url", i)
		}
		msg.Parts = append(msg.Parts, &p)
	}
	msg.ContextID, msg.TaskID = contextID, a2a.TaskID(taskID)
	return msg, nil
}

// turn is the run service's turn of in, sending msg.
func (in RunRequest) turn(msg *a2a.Message) runs.Turn {
	return runs.Turn{Message: msg, Credentials: in.credentials(), Extensions: in.Extensions, NoStream: in.Stream != nil && !*in.Stream,
		Choice: proxy.Choice{URL: in.Interface, Binding: in.Binding, Version: in.ProtocolVersion, SpeakVersion: in.ProtocolVersion}}
}

func (in RunRequest) credentials() proxy.Credentials {
	var cr proxy.Credentials
	if in.Credentials == nil {
		return cr
	}
	k := in.Credentials
	cr.Bearer, cr.APIKey = k.Bearer, k.APIKey
	if k.Basic != nil {
		cr.Basic = &proxy.Basic{Username: k.Basic.Username, Password: k.Basic.Password}
	}
	if k.OAuth2ClientCredentials != nil {
		o := k.OAuth2ClientCredentials
		cr.OAuth2ClientCredentials = &proxy.ClientCredentials{ClientID: o.ClientID, ClientSecret: o.ClientSecret, Scopes: o.Scopes}
	}
	return cr
}
