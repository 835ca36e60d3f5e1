package web

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"golang.org/x/oauth2"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/proxy"
	"github.com/a2aregistry/registry/internal/runs"
	"github.com/a2aregistry/registry/internal/web/view"
)

// The Try-it panel's OAuth 2.0 sign-in: the authorization-code grant with
// PKCE against an oauth2 scheme of the agent's card. The tester's browser
// goes to the scheme's authorizationUrl and comes back to
// OAuthCallbackPath; the state and the PKCE verifier wait here, in
// memory, bound to the tester and their session (the session's CSRF
// token), and serve once. The code is exchanged at the scheme's tokenUrl
// through the proxy's safe client, and the token goes into the proxy's
// Keeper for that run's conversation only: never into the database, a log
// or a page.

// OAuthCallbackPath is where authorization servers send the browser back;
// register {public-url}/tryit/oauth/callback with them.
const OAuthCallbackPath = "/tryit/oauth/callback"

// OAuthFlows runs the authorization-code grant against a card's scheme;
// *proxy.Proxy implements it.
type OAuthFlows interface {
	StartAuthCode(ctx context.Context, c *card.Card, ac proxy.AuthCode, state, verifier string) (proxy.Grant, error)
	ExchangeCode(ctx context.Context, g proxy.Grant, cb proxy.Callback, verifier string) (string, error)
}

// Form fields of the sign-in form, and the compose form's conversation.
const (
	fieldOAuthScheme   = "oauth_scheme"
	fieldOAuthClientID = "oauth_client_id"
	fieldOAuthSecret   = "oauth_client_secret"
	fieldOAuthScopes   = "oauth_scopes"
	fieldConversation  = "conversation"
)

// Bounds of the sign-ins waiting for their callback.
const (
	grantTTL = 10 * time.Minute
	maxGrant = 1000
)

// pendingGrant is a sign-in between the redirect to the authorization
// server and the callback.
type pendingGrant struct {
	subject, session string
	agentID, runID   string
	// existing: the run exists (a reply to auth-required); else runID is
	// the id the next run started from the Try page will take.
	existing bool
	scheme   string
	// grant is bound to the server decided as the sign-in started, from
	// the card as it was then: its token URL gets the code, whatever a
	// refresh stores before the callback.
	grant    proxy.Grant
	verifier string
	expires  time.Time
}

// grantStore keeps pending sign-ins by state.
type grantStore struct {
	mu sync.Mutex
	m  map[string]pendingGrant
}

func (g *grantStore) put(state string, p pendingGrant, now time.Time) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m == nil {
		g.m = map[string]pendingGrant{}
	}
	for s, old := range g.m {
		if !now.Before(old.expires) {
			delete(g.m, s)
		}
	}
	if len(g.m) >= maxGrant {
		return errors.New("too many sign-ins under way; try again in a few minutes")
	}
	g.m[state] = p
	return nil
}

// take returns the sign-in of state and forgets it: a state serves once.
func (g *grantStore) take(state string, now time.Time) (pendingGrant, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	p, ok := g.m[state]
	delete(g.m, state)
	return p, ok && now.Before(p.expires)
}

// oauthEnabled tells whether the panel offers the sign-in.
func (h *Console) oauthEnabled() bool {
	return h.opts.OAuth != nil && h.opts.Runs != nil
}

// oauthForm is the sign-in form for the card's authorization-code
// schemes, posting to action; empty when there is none.
func (h *Console) oauthForm(c echo.Context, cd *card.Card, action string) view.OAuthForm {
	if !h.oauthEnabled() {
		return view.OAuthForm{}
	}
	allowSignInRedirects(c, cd)
	f := view.OAuthForm{Action: action, CSRFToken: h.csrfToken(c), Callback: h.callbackURL(c)}
	for name, scopes := range proxy.AuthCodeSchemes(cd) {
		slices.Sort(scopes)
		f.Schemes = append(f.Schemes, view.OAuthScheme{Name: name, Scopes: strings.Join(scopes, " "), TokenHost: tokenHost(cd, name)})
	}
	slices.SortFunc(f.Schemes, func(a, b view.OAuthScheme) int { return strings.Compare(a.Name, b.Name) })
	return f
}

// allowSignInRedirects widens the page's form-action to the origins of
// the card's authorization endpoints: browsers apply form-action to the
// redirects a form submission follows (CSP3 §6.4.2), and the sign-in
// form's answer is a redirect there. Only origins that parse as plain
// http(s) hosts are added, so a card cannot inject a directive.
func allowSignInRedirects(c echo.Context, cd *card.Card) {
	var origins []string
	for _, s := range cd.SecuritySchemes {
		if s.Type != card.SchemeOAuth2 {
			continue
		}
		for _, f := range s.Flows {
			u, err := url.Parse(f.AuthorizationURL)
			if f.Name != "authorizationCode" || err != nil || (u.Scheme != "https" && u.Scheme != "http") || !cspHost.MatchString(u.Host) {
				continue
			}
			if o := u.Scheme + "://" + u.Host; !slices.Contains(origins, o) {
				origins = append(origins, o)
			}
		}
	}
	if len(origins) == 0 {
		return
	}
	c.Response().Header().Set("Content-Security-Policy",
		strings.Replace(contentSecurityPolicy, "form-action 'self'", "form-action 'self' "+strings.Join(origins, " "), 1))
}

// cspHost is a host[:port] safe in a CSP source expression.
var cspHost = regexp.MustCompile(`^[A-Za-z0-9.-]+(:[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$`)

// callbackURL is the redirect URI: under the public URL when one is set,
// else under the address this request reached.
func (h *Console) callbackURL(c echo.Context) string {
	base := strings.TrimSuffix(h.opts.PublicURL, "/")
	if base == "" {
		base = c.Scheme() + "://" + c.Request().Host
	}
	return base + OAuthCallbackPath
}

// oauthStartNew signs in for a new conversation from the Try page.
func (h *Console) oauthStartNew(c echo.Context) error {
	ag, err := h.tryAgent(c)
	if err != nil {
		return h.agentError(c, err)
	}
	return h.oauthStart(c, ag.Card, ag.ID, uuid.NewString(), false)
}

// oauthStartRun signs in again for a run's next turn (auth-required).
func (h *Console) oauthStartRun(c echo.Context) error {
	ag, err := h.tryAgent(c)
	if err != nil {
		return h.runError(c, err)
	}
	run, err := h.opts.Runs.Own(c.Request().Context(), h.caller(c), runs.Ref{RunID: c.Param("run"), AgentID: ag.ID})
	if err != nil {
		return h.runError(c, err)
	}
	return h.oauthStart(c, ag.Card, ag.ID, run.ID, true)
}

func (h *Console) oauthStart(c echo.Context, cd *card.Card, agentID, runID string, existing bool) error {
	ac := proxy.AuthCode{
		Scheme: c.FormValue(fieldOAuthScheme), ClientID: strings.TrimSpace(c.FormValue(fieldOAuthClientID)),
		ClientSecret: c.FormValue(fieldOAuthSecret), Scopes: strings.Fields(c.FormValue(fieldOAuthScopes)),
		RedirectURL: h.callbackURL(c),
	}
	state, verifier := rand.Text(), oauth2.GenerateVerifier()
	g, err := h.opts.OAuth.StartAuthCode(c.Request().Context(), cd, ac, state, verifier)
	if err != nil {
		return h.errorPage(c, http.StatusBadRequest, "Sign-in not started", err.Error())
	}
	now := h.now()
	p := pendingGrant{subject: h.subject(c), session: h.csrfToken(c), agentID: agentID, runID: runID, existing: existing,
		scheme: ac.Scheme, grant: g, verifier: verifier, expires: now.Add(grantTTL)}
	if err := h.grants.put(state, p, now); err != nil {
		return h.errorPage(c, http.StatusServiceUnavailable, "Sign-in not started", err.Error())
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.Redirect(http.StatusSeeOther, g.URL)
}

// oauthCallback finishes a sign-in: the state must be one this tester
// started in this session; the code is exchanged and the token kept for
// the conversation.
func (h *Console) oauthCallback(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "no-store")
	p, ok := h.grants.take(c.QueryParam("state"), h.now())
	if !ok || p.subject != h.subject(c) || subtle.ConstantTimeCompare([]byte(p.session), []byte(h.csrfToken(c))) != 1 {
		return h.errorPage(c, http.StatusBadRequest, "Sign-in not accepted",
			"This sign-in expired, was already used, or was not started in this session. Start it again from the Try it panel.")
	}
	cb := proxy.Callback{Code: c.QueryParam("code"), Iss: c.QueryParam("iss")}
	_, cb.HasIss = c.QueryParams()["iss"]
	// RFC 9207 §2.4: a response from another issuer, error or not, is
	// not this sign-in's.
	if err := p.grant.CheckIssuer(cb); err != nil {
		h.log.Warn("console: oauth callback refused", "agent_id", p.agentID, "scheme", p.scheme, "err", err)
		return h.errorPage(c, http.StatusBadRequest, "Sign-in not accepted", err.Error())
	}
	if e := c.QueryParam("error"); e != "" {
		// RFC 6749 §4.1.2.1: the authorization server refused.
		return h.errorPage(c, http.StatusUnauthorized, "Sign-in refused", "The agent's authorization server answered: "+e)
	}
	v, err := h.opts.Agents.AgentView(c.Request().Context(), h.scope(c), p.agentID, h.now())
	if err != nil || v.Agent.Card == nil {
		return h.agentError(c, fmt.Errorf("loading agent %s: %w", p.agentID, err))
	}
	token, err := h.opts.OAuth.ExchangeCode(c.Request().Context(), p.grant, cb, p.verifier)
	if err != nil {
		h.log.Warn("console: oauth code exchange failed", "agent_id", p.agentID, "scheme", p.scheme, "err", err)
		return h.errorPage(c, http.StatusBadGateway, "Sign-in failed", err.Error())
	}
	h.opts.Runs.Remember(p.runID, p.subject, proxy.Credentials{Bearer: token})
	h.log.Info("console: signed in to an agent", "agent_id", p.agentID, "scheme", p.scheme, "run_id", p.runID, "token_host", p.grant.TokenHost, "basis", p.grant.Basis)
	if p.existing {
		return c.Redirect(http.StatusSeeOther, runURL(p.agentID, p.runID))
	}
	return c.Redirect(http.StatusSeeOther, tryURL(p.agentID)+"?"+url.Values{fieldConversation: {p.runID}}.Encode())
}

// conversation is the run id the Try page's next run takes: one a sign-in
// prepared for this tester (its token waits in the Keeper), else "".
func (h *Console) conversation(c echo.Context, id string) string {
	if id == "" || uuid.Validate(id) != nil || !h.opts.Runs.Remembers(id, h.subject(c)) {
		return ""
	}
	return id
}

// tokenHost is the host of scheme name's authorization-code token URL:
// the server that will receive the code and the client secret.
func tokenHost(cd *card.Card, name string) string {
	for _, s := range cd.SecuritySchemes {
		if s.Name != name {
			continue
		}
		for _, f := range s.Flows {
			if f.Name == "authorizationCode" {
				if u, err := url.Parse(f.TokenURL); err == nil {
					return u.Host
				}
			}
		}
	}
	return ""
}
