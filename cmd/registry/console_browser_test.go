package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/oauth2-proxy/mockoidc"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/config"
	"github.com/a2aregistry/registry/internal/crawler"
	"github.com/a2aregistry/registry/internal/proxy"
	"github.com/a2aregistry/registry/internal/proxy/proxytest"
	"github.com/a2aregistry/registry/internal/runs"
	"github.com/a2aregistry/registry/internal/verify"
)

// Environment of the browser test.
const (
	// requireBrowserEnv=1 turns a missing chromium into a failure (CI).
	requireBrowserEnv = "REGISTRY_TEST_REQUIRE_BROWSER"
	// screenshotDirEnv names where screenshots go; a temporary directory
	// when unset.
	screenshotDirEnv = "REGISTRY_TEST_SCREENSHOTS"
)

// browserXSS would set window.__xss if any part of it ran.
const browserXSS = `<img src=x onerror="window.__xss='img'"><script>window.__xss='script'</script>` +
	`<svg onload="window.__xss='svg'">`

// TestConsoleInBrowser drives serve's handler in Debian's chromium, signed
// in through an in-process OIDC provider (mockoidc, which approves at
// once): an anonymous visitor clicks "Sign in", passes the provider's
// authorize endpoint and comes back as an editor; then search as you
// type, tick a media-type facet, go back, open an agent, open a version
// diff, register an agent (audited under the user's name) under
// --require-approval, approve it on the review page so that anonymous
// searches find it, Try it — and a
// card whose description is an XSS payload shows it as text and runs none
// of it. Signing out kills the session; a viewer then signs in and can
// neither see nor use the register form. Along the way it checks what
// issue 11 calls feel: keyboard reach and visible focus, labelled
// controls, dark mode and a phone's width.
func TestConsoleInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	browser := findChromium()
	if browser == "" {
		if os.Getenv(requireBrowserEnv) == "1" {
			t.Fatalf("no chromium on PATH and %s=1", requireBrowserEnv)
		}
		t.Skipf("browser test skipped: no chromium on PATH (apt-get install chromium; set %s=1 to require it)", requireBrowserEnv)
	}

	store := catalogtest.SQLite(t)
	ids := fillBrowserCatalog(t, store)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	// An agent on loopback to register through the console; the registrar
	// is told to allow loopback, as an operator would with --allow-networks.
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"name":"Loopback Agent","description":"Registered from the console.","url":"http://`+r.Host+`/a2a",`+
			`"version":"1.0.0","protocolVersion":"0.3.0","capabilities":{},"defaultInputModes":["text/plain"],`+
			`"defaultOutputModes":["text/plain"],"skills":[{"id":"echo","name":"Echo","description":"Echoes.","tags":["echo"]}]}`)
	}))
	t.Cleanup(agent.Close)
	provider, authorizations := startBrowserProvider(t)
	var handler http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)

	// Configured as an operator would: the provider's groups claim maps
	// "eng" to editor, anyone else who signs in is a viewer (the default),
	// and browsing is open without sign-in (--anonymous-role viewer), so
	// the first page has a "Sign in" link to click.
	cfg := config.Default()
	cfg.Outbound.AllowNetworks = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	cfg.Server.PublicURL = srv.URL
	cfg.Auth.Issuer, cfg.Auth.ClientID, cfg.Auth.ClientSecret = provider.Issuer(), provider.ClientID, config.Secret(provider.ClientSecret)
	cfg.Auth.APIAudience = apiAudience
	cfg.Auth.Scopes = append(cfg.Auth.Scopes, "groups")
	cfg.Auth.Roles = []config.RoleClaim{{Role: "editor", Value: "eng"}, {Role: "admin", Value: "ops"}}
	cfg.Auth.AnonymousRole = "viewer"
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	self, err := registrySelf(cfg.Server)
	if err != nil {
		t.Fatal(err)
	}
	client := newOutboundClient(cfg, self, cfg.Crawl.PerHost)
	t.Cleanup(client.CloseIdleConnections)
	registrar := crawler.NewRegistrar(crawler.NewFetcher(client, cfg.Outbound.MaxCardBytes), store, cardLimits(cfg), log)
	authn, err := newAuthenticator(cfg, store, log)
	if err != nil {
		t.Fatal(err)
	}
	// An honest A2A agent on loopback for the Try it panel.
	peer := proxytest.Start(t, card.BindingJSONRPC, "0.3", proxytest.Options{})
	// And one that wants a token from its own OAuth 2.0 authorization
	// server, which the panel signs in to (authorization code, PKCE).
	authServer := proxytest.StartAuthServer(t, "registry-console", "console-secret", "browser-oauth-token")
	guarded := proxytest.Start(t, card.BindingJSONRPC, "0.3", proxytest.Options{
		Wrap: func(h http.Handler) http.Handler { return proxytest.Guard("Bearer browser-oauth-token", h) },
	})
	px := proxy.New(proxy.Options{Client: proxytest.Loopback(), Logger: log})
	handler = newHandler(handlerDeps{log: log, store: store, registrar: registrar, auth: authn,
		agents: store, pauser: store, keys: store, annotator: store, oauth: px, ops: store,
		runs:    runs.New(runs.Options{Runner: px, Store: store, Keeper: proxy.NewKeeper(0, 0), Logger: log}),
		curator: store})

	shots := os.Getenv(screenshotDirEnv)
	if shots == "" {
		shots = t.TempDir()
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}

	// Not t.TempDir: chromium's helper processes may still write into
	// their profile for a moment after the browser is gone, and a failed
	// RemoveAll would fail the test. The cleanup is registered before the
	// browser's, so it runs after the browser is closed.
	profile, err := os.MkdirTemp("", "registry-browser-profile-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeProfile(t, profile) })
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 900),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancelCtx := chromedp.NewContext(actx)
	t.Cleanup(cancelCtx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(cancelTimeout)

	// Every console message and browser log entry, to catch Content
	// Security Policy violations (htmx injecting styles, say).
	var mu sync.Mutex
	var logs []string
	chromedp.ListenTarget(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *cdplog.EventEntryAdded:
			logs = append(logs, string(ev.Entry.Level)+": "+ev.Entry.Text)
		case *runtime.EventExceptionThrown:
			logs = append(logs, "exception: "+ev.ExceptionDetails.Error())
		}
	})

	shot := func(name string) chromedp.Action {
		return chromedp.ActionFunc(func(ctx context.Context) error {
			var buf []byte
			if err := chromedp.CaptureScreenshot(&buf).Do(ctx); err != nil {
				return err
			}
			path := filepath.Join(shots, name)
			if err := os.WriteFile(path, buf, 0o644); err != nil {
				return err
			}
			t.Logf("screenshot: %s", path)
			return nil
		})
	}
	// waitFor polls a JavaScript predicate; Poll runs through the DevTools
	// protocol, which the page's CSP does not restrict.
	waitFor := func(expr string) chromedp.Action {
		return chromedp.Poll(expr, nil, chromedp.WithPollingTimeout(20*time.Second))
	}
	// htmxReady waits until htmx has taken over the element sel: clicked
	// before (a section swapped in moments ago, whose new content htmx
	// processes as it settles), a form posts plainly and the page
	// navigates away under the next poll.
	htmxReady := func(sel string) chromedp.Action {
		return waitFor(`(e => !!(e && e['htmx-internal-data'] && e['htmx-internal-data'].initHash))(document.querySelector('` + sel + `'))`)
	}
	var location, xss, descText string
	checkNoXSS := func(where string) chromedp.Action {
		return chromedp.ActionFunc(func(ctx context.Context) error {
			if err := chromedp.Evaluate(`String(window.__xss)`, &xss).Do(ctx); err != nil {
				return err
			}
			if xss != "undefined" {
				t.Errorf("%s: the XSS payload ran: window.__xss = %s", where, xss)
			}
			return nil
		})
	}
	run := func(step string, actions ...chromedp.Action) {
		t.Helper()
		start := time.Now()
		for i, a := range actions {
			if err := chromedp.Run(ctx, a); err != nil {
				t.Fatalf("%s, action %d (%T): %v", step, i+1, a, err)
			}
		}
		t.Logf("%s: %v", step, time.Since(start).Round(time.Millisecond))
	}
	count := `document.querySelector('.status strong') && document.querySelector('.status strong').textContent`
	await := func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }

	user := `document.querySelector('header .user').textContent`
	signIn := `header .user a[href^="/auth/login"]`
	signOut := `header .user form[action="/auth/logout"] button`
	// An anonymous visitor may browse (viewer) but is offered no register
	// link; "Sign in" goes to the provider and comes back to this page.
	provider.QueueUser(&mockoidc.MockUser{Subject: "ada-1", Email: "ada@example.com", PreferredUsername: "ada", Groups: []string{"eng"}})
	run("open the search page",
		cdplog.Enable(),
		chromedp.Navigate(srv.URL+"/?q=invoice"),
		waitFor(count+` === '1 agent'`),
		waitFor(`document.querySelector('header nav a[href="/register"]') === null`),
	)
	run("sign in",
		chromedp.Click(signIn, chromedp.ByQuery),
		chromedp.WaitVisible(signOut, chromedp.ByQuery),
		waitFor(user+`.includes('ada') && `+user+`.includes('editor')`),
		waitFor(`location.pathname + location.search === '/?q=invoice'`),
		waitFor(`document.querySelector('header nav a[href="/register"]') !== null`),
		chromedp.Navigate(srv.URL+"/"),
		waitFor(count+` === '7 agents'`),
		labelled(t, "search page"),
		shot("search.png"),
	)
	if n := authorizations.Load(); n != 1 {
		t.Errorf("the provider's authorize endpoint was called %d times, want 1", n)
	}
	checkKeyboard(ctx, t)

	// htmx read its configuration from the meta tag (JSON, no eval).
	var configured bool
	run("htmx configuration",
		chromedp.Evaluate(`htmx.config.allowEval === false && htmx.config.includeIndicatorStyles === false && `+
			`htmx.config.responseHandling.length === 2`, &configured),
	)
	if !configured {
		t.Error("htmx did not take the console's configuration")
	}

	// Typing searches after a pause (htmx, debounced) and puts the query
	// in the address bar.
	run("type a search",
		chromedp.SendKeys("#q", "evil"),
		waitFor(count+` === '1 agent'`),
		waitFor(`location.search === '?q=evil'`),
		waitFor(`document.title.startsWith('evil · ')`),
		chromedp.Text(".result .desc", &descText, chromedp.ByQuery),
		checkNoXSS("search results"),
	)
	if !strings.Contains(descText, `<img src=x onerror=`) || !strings.Contains(descText, "<script>") {
		t.Errorf("the payload is not shown as text in the result: %q", descText)
	}

	// An error answer is swapped in, not dropped: a stale cursor says so
	// (and its URL is pushed, as any search's).
	run("follow a stale next link",
		chromedp.Evaluate(`htmx.ajax('GET', '/?q=evil&cursor=stale', {target: '#results-area'}); true`, &configured),
		waitFor(`document.querySelector('#results-area .notice.warn') !== null`),
	)

	// Back walks the searches in reverse, to the unfiltered list.
	run("go back",
		chromedp.NavigateBack(),
		waitFor(`location.search === '?q=evil'`),
		waitFor(count+` === '1 agent'`),
		chromedp.NavigateBack(),
		waitFor(`location.search === ''`),
		waitFor(count+` === '7 agents'`),
	)

	// Ticking a facet filters at once and keeps the filter in the URL.
	// The skill facet then counts only the skills that take a PDF (the
	// spend summary takes JSON), and the output facet what they give back.
	run("tick a media-type facet",
		chromedp.Click(`input[name="input_mode"][value="application/pdf"]`, chromedp.ByQuery),
		waitFor(count+` === '1 agent'`),
		waitFor(`location.search === '?input_mode=application%2Fpdf'`),
		waitFor(`document.querySelector('input[name="skill"][value="extract-invoice"]') !== null && `+
			`document.querySelector('input[name="skill"][value="summarize-spend"]') === null && `+
			`document.querySelector('input[name="output_mode"][value="text/csv"]') === null`),
		shot("search-facet.png"),
		chromedp.Location(&location),
	)
	if !strings.Contains(location, "input_mode=application%2Fpdf") {
		t.Errorf("URL after the facet = %s", location)
	}

	run("open the agent",
		chromedp.Click(`.result h2 a`, chromedp.ByQuery),
		// Wait on the new document before evaluating in it: a poll
		// started during the navigation loses its context.
		chromedp.WaitVisible(`#signatures`, chromedp.ByQuery),
		waitFor(`location.pathname === '/agents/`+ids["invoice"]+`'`),
		labelled(t, "agent page"),
		shot("agent.png"),
		chromedp.ScrollIntoView(`#signatures`, chromedp.ByQuery),
		shot("agent-signatures.png"),
	)
	// The diff, opened by its link in place or at its address, is
	// scrolled into view.
	diffInView := `(r => r.top >= 0 && r.top < window.innerHeight)(document.getElementById('diff').getBoundingClientRect())`
	var diffHref string
	run("open the agent's version diff",
		chromedp.AttributeValue(`a[href*="/diff?from=1&to=2"]`, "href", &diffHref, nil, chromedp.ByQuery),
		chromedp.Click(`a[href*="/diff?from=1&to=2"]`, chromedp.ByQuery),
		waitFor(`document.querySelectorAll('table.diff tr.changed').length > 0`),
		waitFor(diffInView),
		shot("agent-diff.png"),
		chromedp.ActionFunc(func(ctx context.Context) error { return chromedp.Navigate(srv.URL + diffHref).Do(ctx) }),
		chromedp.WaitVisible(`table.diff`, chromedp.ByQuery),
		waitFor(diffInView),
	)

	run("open the evil agent",
		chromedp.Navigate(srv.URL+"/agents/"+ids["evil"]),
		chromedp.WaitVisible(`#versions`, chromedp.ByQuery),
		chromedp.Text(".agent-head .desc", &descText, chromedp.ByQuery),
		checkNoXSS("agent page"),
		chromedp.ScrollIntoView(`#security`, chromedp.ByQuery),
		shot("signatures.png"),
	)
	if !strings.Contains(descText, `<img src=x onerror=`) {
		t.Errorf("the payload is not shown as text on the agent page: %q", descText)
	}

	// The diff opens in place (htmx) and its URL is pushed.
	run("open the version diff",
		chromedp.Click(`a[href*="/diff?from=1&to=2"]`, chromedp.ByQuery),
		waitFor(`document.querySelectorAll('table.diff tr.changed').length > 0`),
		waitFor(`location.search === '?from=1&to=2'`),
		chromedp.ScrollIntoView(`#diff`, chromedp.ByQuery),
		shot("diff.png"),
		checkNoXSS("diff"),
	)
	// The agent page (with its action forms' CSRF tokens) was left by a
	// pushed URL; htmx must not have kept a copy in the browser's storage.
	var stored bool
	run("no page in web storage",
		chromedp.Evaluate(`[localStorage, sessionStorage].some(s => Object.keys(s).some(k => s.getItem(k).includes('csrf_token')))`, &stored),
	)
	if stored {
		t.Error("a page with a CSRF token was kept in web storage")
	}

	// The security report is reached from the header, and each number
	// leads to the search listing its agents.
	run("open the security report",
		// Followed with Navigate: a click's navigation races the next action.
		waitFor(`document.querySelector('header nav a[href="/security"]') !== null`),
		chromedp.Navigate(srv.URL+"/security"),
		chromedp.WaitVisible(`main h1`, chromedp.ByQuery),
		waitFor(`document.querySelector('main h1').textContent === 'Security' && document.querySelector('main a[href="/?security_scheme=none"]') !== null`),
		checkNoXSS("security report"),
		chromedp.Navigate(srv.URL+"/?security_scheme=none"),
		chromedp.WaitVisible(`#q`, chromedp.ByQuery),
	)

	// The editor registers; the form posts through htmx with the CSRF
	// token in a header, and the audit log names the signed-in user. The
	// registry requires approval for this one: it starts pending.
	store.SetListingPolicy(catalog.ListingPolicy{RequireApproval: true})
	run("register an agent",
		chromedp.Navigate(srv.URL+"/register"),
		chromedp.WaitVisible(`#urls`, chromedp.ByQuery),
		labelled(t, "register page"),
		chromedp.SendKeys(`#urls`, agent.URL, chromedp.ByQuery),
		chromedp.Click(`form.register button`, chromedp.ByQuery),
		waitFor(`document.querySelector('#register-results .badge') && document.querySelector('#register-results .badge').textContent === 'created'`),
		shot("register.png"),
		chromedp.Click(`#register-results a`, chromedp.ByQuery),
		chromedp.WaitVisible(`#signatures`, chromedp.ByQuery),
		waitFor(`document.querySelector('h1').textContent === 'Loopback Agent'`),
	)
	audit, err := store.AuditLog(context.Background(), "", 10)
	if err != nil {
		t.Fatal(err)
	}
	// The sign-in, then the registration.
	if len(audit.Entries) != 2 || audit.Entries[0].Action != catalog.ActionRegister ||
		audit.Entries[0].Subject != "ada-1" || audit.Entries[0].Role != "editor" || audit.Entries[0].ActorKind != catalog.ActorUser ||
		audit.Entries[1].Action != catalog.ActionSignIn || audit.Entries[1].Subject != "ada-1" {
		t.Errorf("audit log after registering = %+v, want ada-1's sign-in and one register by ada-1 as editor", audit.Entries)
	}
	store.SetListingPolicy(catalog.ListingPolicy{})
	// Review: hidden from anonymous searches (the API's and the console's,
	// fetched without the session cookie) until the editor approves it on
	// the review page, reached from the header.
	anonymous := `Promise.all([` +
		`fetch('/api/v1/agents?q=loopback', {credentials: 'omit'}).then(r => r.json()).then(j => j.total === 1 && j.items[0].name === 'Loopback Agent'),` +
		`fetch('/?q=loopback', {credentials: 'omit'}).then(r => r.text()).then(t => t.includes('Loopback Agent'))]).then(a => a)`
	var found []bool
	run("the pending agent is hidden from anonymous searches",
		chromedp.Evaluate(anonymous, &found, await),
	)
	if len(found) != 2 || found[0] || found[1] {
		t.Errorf("anonymous searches (API, console) find the pending agent: %v", found)
	}
	review := `.review-item`
	run("approve it on the review page",
		chromedp.Click(`header nav a[href="/review"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`main h1 .count`, chromedp.ByQuery),
		waitFor(`document.querySelectorAll('`+review+`').length === 1 && `+
			`document.querySelector('`+review+` h2').textContent.includes('Loopback Agent')`),
		labelled(t, "review page"),
		shot("review.png"),
		chromedp.Click(review+` form input[name=state][value=approved] ~ button`, chromedp.ByQuery),
		// A plain form post answered 303 to the review page: wait on the
		// new document (a poll started during the navigation loses its
		// context).
		chromedp.WaitNotPresent(review, chromedp.ByQuery),
		waitFor(`location.pathname === '/review' && document.querySelector('main h1 .count') !== null && `+
			`document.querySelector('main h1 .count').textContent === '0'`),
		chromedp.Evaluate(anonymous, &found, await),
	)
	if len(found) != 2 || !found[0] || !found[1] {
		t.Errorf("after approval, anonymous searches (API, console) find the agent: %v, want both", found)
	}
	if audit, err = store.AuditLog(context.Background(), "", 10); err != nil {
		t.Fatal(err)
	}
	if e := audit.Entries[0]; len(audit.Entries) != 3 || e.Action != catalog.ActionListing || e.Subject != "ada-1" ||
		!strings.Contains(string(e.Detail), `"to":"approved"`) || !strings.Contains(string(e.Detail), `"from":"pending"`) {
		t.Errorf("audit log after approving = %+v, want the approval by ada-1 on top", audit.Entries)
	}

	// Annotations: the form posts through htmx and the section is swapped
	// in place; a label chip leads to the search for that label.
	run("annotate an agent",
		chromedp.Navigate(srv.URL+"/agents/"+ids["invoice"]),
		chromedp.WaitVisible(`#annotations`, chromedp.ByQuery),
		chromedp.Click(`#annotations summary`, chromedp.ByQuery),
		chromedp.SendKeys(`#ann-owner`, "Payments Platform", chromedp.ByQuery),
		chromedp.SendKeys(`#ann-labels`, "env prod", chromedp.ByQuery),
		htmxReady(`#annotations form`),
		chromedp.Click(`#annotations form button`, chromedp.ByQuery),
		waitFor(`document.querySelector('#annotations .notice.warn') !== null`),
		htmxReady(`#annotations form`),
		chromedp.SetValue(`#ann-labels`, "env=prod\ntier=1", chromedp.ByQuery),
		chromedp.Click(`#annotations form button`, chromedp.ByQuery),
		waitFor(`document.querySelectorAll('#annotations a.chip').length === 2`),
		waitFor(`location.pathname === '/agents/`+ids["invoice"]+`'`),
		chromedp.ScrollIntoView(`#annotations`, chromedp.ByQuery),
		shot("annotations.png"),
		chromedp.Click(`#annotations a.chip`, chromedp.ByQuery),
		chromedp.WaitVisible(`#filters`, chromedp.ByQuery),
		waitFor(`location.search === '?label=env%3Aprod'`),
		waitFor(count+` === '1 agent'`),
	)

	// Try it: the run streams into the page (tryit.js, no inline script);
	// the agent asks a question, the reply box answers it on the same
	// task, and the agent's text arrives in the page.
	// It is stored only now, so the search steps above count the same
	// agents as before.
	ids["peer"] = storeTestAgent(t, store, peer.Interface.URL)
	live := `document.getElementById('tryit-live').textContent`
	run("try an agent",
		chromedp.Navigate(srv.URL+"/agents/"+ids["peer"]),
		chromedp.Click(`nav.toc a[href$="/try"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#tryit-text`, chromedp.ByQuery),
		labelled(t, "Try it"),
		shot("tryit-form.png"),
		chromedp.SendKeys(`#tryit-text`, proxytest.SayAsk, chromedp.ByQuery),
		chromedp.Click(`#compose button[type=submit]`, chromedp.ByQuery),
		waitFor(live+`.includes('which city?')`),
		chromedp.WaitVisible(`#tryit-live #reply textarea[name=text]`, chromedp.ByQuery),
		labelled(t, "Try it, reply"),
		chromedp.SendKeys(`#tryit-live #reply textarea[name=text]`, "Paris", chromedp.ByQuery),
		chromedp.Click(`#tryit-live #reply button[type=submit]`, chromedp.ByQuery),
		waitFor(live+`.includes('Paris') && `+live+`.includes('TASK_STATE_COMPLETED')`),
		shot("tryit.png"),
		chromedp.Evaluate(`location.pathname`, &location),
	)
	if want := "/agents/" + ids["peer"] + "/try"; location != want {
		t.Errorf("after the run the page is %s, want it to stay on %s", location, want)
	}
	// "Past runs" lists the run just made without a reload; a reply sent
	// from the run's own page updates that page in place (it once nested
	// a second copy of the run inside the first), and the artifact's
	// streamed chunks read as one text.
	var runPath string
	run("reply on a run's page",
		waitFor(`document.querySelector('#runs .count').textContent === '1'`),
		chromedp.Evaluate(`document.getElementById('tryit-text').value = ''`, nil),
		chromedp.SendKeys(`#tryit-text`, proxytest.SayAsk, chromedp.ByQuery),
		chromedp.Click(`#compose button[type=submit]`, chromedp.ByQuery),
		waitFor(live+`.includes('which city?')`),
		waitFor(`document.querySelector('#runs .count').textContent === '2'`),
		// Followed with Navigate: a click's navigation races the next
		// query's execution context.
		chromedp.AttributeValue(`#runs tbody tr:first-child a`, "href", &runPath, nil, chromedp.ByQuery),
		chromedp.ActionFunc(func(ctx context.Context) error { return chromedp.Navigate(srv.URL + runPath).Do(ctx) }),
		chromedp.WaitVisible(`article.run #reply textarea[name=text]`, chromedp.ByQuery),
		chromedp.SendKeys(`#reply textarea[name=text]`, "Paris", chromedp.ByQuery),
		chromedp.Click(`#reply button[type=submit]`, chromedp.ByQuery),
		waitFor(`document.querySelector('article.run h1 .badge').textContent === 'TASK_STATE_COMPLETED'`),
		waitFor(`document.querySelectorAll('article.run').length === 1 && document.querySelector('#reply') === null`),
		waitFor(`[...document.querySelectorAll('#result .part-text')].some(li => li.textContent.includes('done: Paris'))`),
	)
	// An agent that answers with a JSON-RPC error: the run says failed and
	// the page shows the agent's code and message.
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":"1","error":{"code":-32603,"message":"the model is overloaded"}}`)
	}))
	t.Cleanup(failing.Close)
	ids["failing"] = storeTestAgentAt(t, store, failing.URL, "https://failing.example/.well-known/agent-card.json")
	run("an agent's error is shown",
		chromedp.Navigate(srv.URL+"/agents/"+ids["failing"]+"/try"),
		chromedp.WaitVisible(`#tryit-text`, chromedp.ByQuery),
		chromedp.SendKeys(`#tryit-text`, "hi", chromedp.ByQuery),
		chromedp.Click(`#compose button[type=submit]`, chromedp.ByQuery),
		waitFor(live+`.includes('the model is overloaded') && `+live+`.includes('-32603') && `+live+`.includes('failed')`),
		chromedp.ScrollIntoView(`#tryit-live article.run`, chromedp.ByQuery),
		shot("tryit-error.png"),
	)
	// A task that works until canceled: the Cancel button appears while
	// the stream is open and ends it.
	run("cancel a working task",
		chromedp.Navigate(srv.URL+"/agents/"+ids["peer"]+"/try"),
		chromedp.WaitVisible(`#tryit-text`, chromedp.ByQuery),
		chromedp.SendKeys(`#tryit-text`, proxytest.SayWait, chromedp.ByQuery),
		chromedp.Click(`#compose button[type=submit]`, chromedp.ByQuery),
		waitFor(live+`.includes('TASK_STATE_WORKING')`),
		chromedp.Click(`#tryit-live form[data-tryit-post] button`, chromedp.ByQuery),
		waitFor(live+`.includes('TASK_STATE_CANCELED')`),
	)

	// OAuth sign-in from the panel: the browser goes to the agent's
	// authorization server and back, and the conversation then runs on
	// the token the registry got, with no credential typed.
	ids["oauth"] = storeOAuthAgent(t, store, guarded.Interface.URL, authServer)
	run("sign in to an agent with OAuth and converse",
		chromedp.Navigate(srv.URL+"/agents/"+ids["oauth"]+"/try"),
		chromedp.WaitVisible(`#tryit-oauth input[name=oauth_client_id]`, chromedp.ByQuery),
		shot("tryit-oauth.png"),
		chromedp.SendKeys(`#tryit-oauth input[name=oauth_client_id]`, "registry-console", chromedp.ByQuery),
		chromedp.SendKeys(`#tryit-oauth input[name=oauth_client_secret]`, "console-secret", chromedp.ByQuery),
		// Clicked from script: the page leaves for another origin at once,
		// which a click that waits on the page it clicked would report.
		chromedp.Evaluate(`setTimeout(() => document.querySelector('#tryit-oauth button[name=oauth_scheme]').click(), 0)`, nil),
		chromedp.WaitReady(`#compose input[name=conversation]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#tryit-text`, chromedp.ByQuery),
		chromedp.SendKeys(`#tryit-text`, proxytest.SayAsk, chromedp.ByQuery),
		chromedp.Click(`#compose button[type=submit]`, chromedp.ByQuery),
		waitFor(live+`.includes('which city?')`),
		chromedp.WaitVisible(`#tryit-live #reply textarea[name=text]`, chromedp.ByQuery),
		chromedp.SendKeys(`#tryit-live #reply textarea[name=text]`, "Paris", chromedp.ByQuery),
		chromedp.Click(`#tryit-live #reply button[type=submit]`, chromedp.ByQuery),
		waitFor(live+`.includes('Paris') && `+live+`.includes('TASK_STATE_COMPLETED')`),
	)
	if authServer.Exchanged() != 1 {
		t.Errorf("the authorization server exchanged %d codes, want 1", authServer.Exchanged())
	}
	// Signing out deletes the session: the browser is anonymous again and
	// the old cookie, replayed, is worth nothing.
	var cookies []*network.Cookie
	run("sign out",
		chromedp.ActionFunc(func(ctx context.Context) error {
			var err error
			cookies, err = network.GetCookies().WithURLs([]string{srv.URL}).Do(ctx)
			return err
		}),
		chromedp.Click(signOut, chromedp.ByQuery),
		chromedp.WaitVisible(signIn, chromedp.ByQuery),
		// A page of its own, not "/": the provider's session would sign
		// the browser straight back in from there where pages need a role.
		waitFor(`location.pathname === '/signed-out'`),
		waitFor(`document.querySelector('main a[href="/auth/login?next=%2F"]').textContent === 'Sign in again'`),
		waitFor(`document.querySelector('header nav a[href="/register"]') === null`),
		// Signed out, the approved agent is found; the review page is not
		// offered.
		waitFor(`document.querySelector('header nav a[href="/review"]') === null`),
		chromedp.Navigate(srv.URL+"/?q=loopback"),
		waitFor(count+` === '1 agent'`),
		waitFor(`document.querySelector('.result h2').textContent.includes('Loopback Agent')`),
	)
	if len(cookies) == 0 {
		t.Fatal("no cookie of the signed-in browser")
	}
	if got := replayCookies(t, srv.URL+"/register", cookies); got != http.StatusSeeOther {
		t.Errorf("GET /register with the signed-out session's cookies = %d, want 303 to sign-in", got)
	}

	// A viewer (a group no mapping names: the default role) signs in and
	// gets no register link, form or agent actions; the page and the API
	// answer 403.
	provider.QueueUser(&mockoidc.MockUser{Subject: "vic-2", Email: "vic@example.com", PreferredUsername: "vic", Groups: []string{"design"}})
	var registerStatus, apiStatus int
	run("sign in as a viewer",
		chromedp.Click(signIn, chromedp.ByQuery),
		chromedp.WaitVisible(signOut, chromedp.ByQuery),
		waitFor(user+`.includes('vic') && `+user+`.includes('viewer')`),
		waitFor(`document.querySelector('header nav a[href="/register"]') === null`),
		chromedp.Navigate(srv.URL+"/agents/"+ids["evil"]),
		chromedp.WaitVisible(`#versions`, chromedp.ByQuery),
		waitFor(`document.querySelector('.actions') === null && document.querySelector('form[action$="/pause"]') === null`),
		chromedp.Evaluate(`fetch('/register').then(r => r.status)`, &registerStatus, await),
		chromedp.Evaluate(`fetch('/api/v1/agents', {method: 'POST', headers: {'Content-Type': 'application/json'}, `+
			`body: JSON.stringify({url: location.origin + '/agent'})}).then(r => r.status)`, &apiStatus, await),
		chromedp.Navigate(srv.URL+"/register"),
		chromedp.WaitVisible(`main h1`, chromedp.ByQuery),
		waitFor(`document.querySelector('#urls') === null`),
		shot("viewer-register.png"),
	)
	if registerStatus != http.StatusForbidden || apiStatus != http.StatusForbidden {
		t.Errorf("viewer: GET /register = %d, POST /api/v1/agents = %d, want 403 and 403", registerStatus, apiStatus)
	}
	if n := authorizations.Load(); n != 2 {
		t.Errorf("the provider's authorize endpoint was called %d times, want 2", n)
	}

	// Dark mode follows the system setting; on a phone nothing runs off
	// the side of the screen.
	var overflow bool
	run("dark mode",
		emulation.SetEmulatedMedia().WithFeatures([]*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}),
		chromedp.Navigate(srv.URL+"/agents/"+ids["invoice"]),
		chromedp.WaitVisible(`#signatures`, chromedp.ByQuery),
		shot("agent-dark.png"),
	)
	run("dark mode on a phone",
		emulation.SetDeviceMetricsOverride(390, 844, 2, true),
		chromedp.Navigate(srv.URL+"/?q=invoice"),
		waitFor(count+` === '1 agent'`),
		shot("search-phone-dark.png"),
		chromedp.Evaluate(`document.documentElement.scrollWidth > window.innerWidth`, &overflow),
	)
	if overflow {
		t.Error("the search page is wider than a phone screen")
	}
	var broken []string
	run("agent page on a phone",
		chromedp.Navigate(srv.URL+"/agents/"+ids["evil"]),
		chromedp.WaitVisible(`#versions`, chromedp.ByQuery),
		chromedp.Evaluate(`document.documentElement.scrollWidth > window.innerWidth`, &overflow),
		chromedp.Evaluate(brokenWordsJS, &broken),
	)
	if overflow {
		t.Error("the agent page is wider than a phone screen")
	}
	// A table cell of short words wraps between words, never inside one
	// ("Bindi-ng"): the cell's text takes no more lines than it has words.
	for _, b := range broken {
		t.Errorf("a table cell on a phone breaks a word: %q", b)
	}

	// An admin puts an agent in a collection by typing its name: the
	// agents it names appear as they type (htmx), each with its card's
	// place, and a click on one adds it.
	provider.QueueUser(&mockoidc.MockUser{Subject: "ana-3", Email: "ana@example.com", PreferredUsername: "ana", Groups: []string{"ops"}})
	run("add an agent to a collection by name",
		emulation.ClearDeviceMetricsOverride(),
		emulation.SetEmulatedMedia().WithFeatures([]*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "light"}}),
		chromedp.Navigate(srv.URL+"/"),
		chromedp.Click(signOut, chromedp.ByQuery),
		chromedp.WaitVisible(`main a[href^="/auth/login"]`, chromedp.ByQuery),
		chromedp.Navigate(srv.URL+"/"),
		chromedp.Click(signIn, chromedp.ByQuery),
		chromedp.WaitVisible(signOut, chromedp.ByQuery),
		waitFor(user+`.includes('ana') && `+user+`.includes('admin')`),
		chromedp.Navigate(srv.URL+"/collections"),
		chromedp.SendKeys(`form[action="/collections"] input[name="name"]`, "Finance", chromedp.ByQuery),
		chromedp.Click(`form[action="/collections"] button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`form.member-form input[name="agent"]`, chromedp.ByQuery),
		chromedp.SendKeys(`form.member-form input[name="agent"]`, "invoice", chromedp.ByQuery),
		waitFor(`[...document.querySelectorAll('form.member-form .candidate-list li')].some(li => `+
			`li.textContent.includes('Invoice Extractor') && li.textContent.includes('invoice-extractor.example/'))`),
		shot("collections.png"),
		chromedp.Click(`form.member-form .candidate-list button[name="agent_id"][value="`+ids["invoice"]+`"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`main li a[href="/agents/`+ids["invoice"]+`"]`, chromedp.ByQuery),
	)

	// The admin subscribes a webhook: a bad URL comes back with the boxes
	// still ticked and says why; the secret is shown once, on the answer
	// only; deleting asks first.
	var secretShown, secretListed string
	hook := `form[action="/webhooks"]`
	run("subscribe a webhook and delete it",
		chromedp.Navigate(srv.URL+"/webhooks"),
		chromedp.WaitVisible(hook+` input[name="url"]`, chromedp.ByQuery),
		chromedp.SendKeys(hook+` input[name="url"]`, "hooks.example.com/in", chromedp.ByQuery),
		chromedp.Click(hook+` input[name="event_types"][value="agent.registered"]`, chromedp.ByQuery),
		chromedp.Click(hook+` button[type="submit"]`, chromedp.ByQuery),
		// Polls only once the answer is in: a poll across a navigation fails.
		chromedp.WaitVisible(`.field-error[data-field="url"]`, chromedp.ByQuery),
		waitFor(`document.querySelector('`+hook+` input[name="event_types"][value="agent.registered"]').checked`),
		chromedp.SetValue(hook+` input[name="url"]`, "https://hooks.example.com/in", chromedp.ByQuery),
		chromedp.Click(hook+` button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#webhook-secret`, chromedp.ByQuery),
		chromedp.Text(`#webhook-secret`, &secretShown, chromedp.ByQuery),
		chromedp.Navigate(srv.URL+"/webhooks"),
		chromedp.WaitVisible(`a[href$="/delete"]`, chromedp.ByQuery),
		chromedp.Evaluate(`document.body.textContent.includes('whsec_') ? 'shown' : ''`, &secretListed),
		chromedp.Click(`a[href$="/delete"]`, chromedp.ByQuery),
		chromedp.Click(`main form button.danger`, chromedp.ByQuery),
		chromedp.WaitVisible(hook, chromedp.ByQuery),
		waitFor(`location.pathname === '/webhooks' && document.body.textContent.includes('No subscriptions')`),
	)
	if !strings.HasPrefix(secretShown, "whsec_") || secretListed != "" {
		t.Errorf("secret on the answer %q, on the list %q; want it on the answer only", secretShown, secretListed)
	}

	mu.Lock()
	defer mu.Unlock()
	for _, l := range logs {
		if strings.Contains(l, "Content Security Policy") || strings.HasPrefix(l, "exception") {
			t.Errorf("browser reported: %s", l)
		}
	}
}

// findChromium returns the path of a chromium binary, or "".
func findChromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// fillBrowserCatalog stores the example cards and an XSS card in two
// versions; it returns the ids of the invoice agent and the XSS agent.
func fillBrowserCatalog(t *testing.T, store *catalog.Store) map[string]string {
	t.Helper()
	ctx := context.Background()
	ids := map[string]string{}
	upsert := func(cardURL string, raw []byte, at time.Time) string {
		c, err := card.Parse(raw, card.DefaultLimits())
		if err != nil {
			t.Fatalf("parsing %s: %v", cardURL, err)
		}
		res, err := store.Upsert(ctx, catalog.System("test"), catalog.UpsertInput{CardURL: cardURL, Card: c, Source: catalog.SourceURL, ReceivedAt: at})
		if err != nil {
			t.Fatalf("storing %s: %v", cardURL, err)
		}
		return res.Agent.ID
	}
	files, err := filepath.Glob("../../examples/cards/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example cards: %v", err)
	}
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		cardURL := "https://" + name + ".example/.well-known/agent-card.json"
		if name == "invoice-extractor" {
			// An older version first, for a diff worth reading: 2.7
			// added the HTTP+JSON interface.
			upsert(cardURL, olderInvoice(t, raw), at.Add(-30*24*time.Hour))
		}
		id := upsert(cardURL, raw, at)
		if name == "invoice-extractor" {
			ids["invoice"] = id
		}
	}
	evil := func(version string) []byte {
		raw, err := json.Marshal(map[string]any{
			"name": "Evil Agent", "description": "Looks harmless. " + browserXSS,
			"url": "https://evil.example/a2a", "version": version, "protocolVersion": "0.3.0",
			"capabilities": map[string]any{}, "defaultInputModes": []string{"text/plain"},
			"defaultOutputModes": []string{"text/plain"},
			"skills":             []any{map[string]any{"id": "s", "name": "Skill " + browserXSS, "description": "d", "tags": []string{"evil"}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	const evilURL = "https://evil.example/.well-known/agent-card.json"
	upsert(evilURL, evil("1.0.0"), at)
	ids["evil"] = upsert(evilURL, evil("2.0.0"), at.Add(time.Hour))

	// A signature report for the agent page to show: one signature that
	// does not verify, over a form that leaves a field unsigned.
	report, err := json.Marshal(verify.Report{
		CardURL: evilURL, Origins: []string{"https://evil.example"}, CheckedAt: at.Add(2 * time.Hour),
		Signatures: verify.SignatureReport{Status: verify.StatusInvalid, Entries: []verify.SignatureResult{{
			Index: 0, Result: verify.ResultBadSignature, Alg: "ES256", KID: "2026-03",
			Signer: &verify.Signer{KID: "2026-03", Thumbprint: "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs", Source: verify.KeySourceJKU,
				JKU: "https://evil.example/.well-known/jwks.json", KeyType: "EC", Curve: "P-256"},
			Form: verify.FormJCS, UnsignedFields: []string{"$.url"}, Problem: "the signature does not match the card",
		}}},
		Security: []verify.Finding{{Code: "no_security", Severity: verify.SeverityWarning, Path: "$",
			Message: "the card declares no security scheme"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	// The invoice agent's report: the current key verifies, the retired
	// one is past its expiry (a key rotation).
	invoiceReport, err := json.Marshal(verify.Report{
		CardURL: "https://invoice-extractor.example/.well-known/agent-card.json", Origins: []string{"https://invoice-extractor.example"},
		CheckedAt: at.Add(2 * time.Hour),
		Signatures: verify.SignatureReport{Status: verify.StatusVerified, Entries: []verify.SignatureResult{
			{Index: 0, Result: verify.ResultVerified, Alg: "ES256", KID: "ap-2026-01",
				Signer: &verify.Signer{KID: "ap-2026-01", Thumbprint: "h3Yq0Fvbm2t8kEx4r3c1Wj5pU7sZ9aLdN6oQfGyTiKw", Source: verify.KeySourcePinned,
					KeyType: "EC", Curve: "P-256"},
				Form: verify.FormJCS},
			{Index: 1, Result: verify.ResultKeyExpired, Alg: "RS256", KID: "ap-2025-02",
				Signer: &verify.Signer{KID: "ap-2025-02", Thumbprint: "Q2sL8vRk0bXn4cYw7eTg1mHa9uJd5pZf3oKiEs6yNrU", Source: verify.KeySourcePinned,
					KeyType: "RSA"},
				Form: verify.FormJCS, Problem: "the pinned key expired on 2026-02-01"},
		}},
		Security: []verify.Finding{},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.RecordVerifications(ctx, catalog.System("test"), []catalog.VerificationInput{{
		AgentID: ids["evil"], Version: 2, Status: catalog.SignatureInvalid, Report: report,
		VerifiedAt: at.Add(2 * time.Hour), RecheckAt: at.Add(26 * time.Hour), KIDs: []string{"2026-03"},
		AuditCodes: []string{"no_security"},
	}, {
		AgentID: ids["invoice"], Version: 2, Status: catalog.SignatureVerified, Report: invoiceReport,
		VerifiedAt: at.Add(2 * time.Hour), RecheckAt: at.Add(26 * time.Hour), KIDs: []string{"ap-2026-01", "ap-2025-02"},
		Trust: string(verify.TrustPinned),
	}}); err != nil {
		t.Fatalf("storing the verification report: %v", err)
	}
	return ids
}

// olderInvoice is the invoice example card as it was before version 2.7:
// without its HTTP+JSON interface, and with a shorter description.
func olderInvoice(t *testing.T, raw []byte) []byte {
	t.Helper()
	var c map[string]any
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	c["version"] = "2.6.3"
	c["description"] = "Extracts structured data from supplier invoices: parties, line items, taxes and totals. Accepts PDFs and photos."
	var ifaces []any
	for _, i := range c["supportedInterfaces"].([]any) {
		if i.(map[string]any)["protocolBinding"] != "HTTP+JSON" {
			ifaces = append(ifaces, i)
		}
	}
	c["supportedInterfaces"] = ifaces
	out, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// storeTestAgent stores a card for an A2A agent served at url (JSON-RPC,
// v0.3, streaming) and returns its id.
func storeTestAgent(t *testing.T, store *catalog.Store, url string) string {
	t.Helper()
	return storeTestAgentAt(t, store, url, "https://peer.example/.well-known/agent-card.json")
}

// storeTestAgentAt stores the test agent's card for an agent at url, as
// found at cardURL.
func storeTestAgentAt(t *testing.T, store *catalog.Store, url, cardURL string) string {
	t.Helper()
	raw, err := json.Marshal(map[string]any{
		"name": "Peer Agent", "description": "An in-process A2A agent.", "url": url, "version": "1.0.0",
		"protocolVersion": "0.3.0", "preferredTransport": "JSONRPC", "capabilities": map[string]any{"streaming": true},
		"defaultInputModes": []string{"text/plain"}, "defaultOutputModes": []string{"text/plain"},
		"skills": []any{map[string]any{"id": "ask", "name": "Ask", "description": "Asks back.", "tags": []string{"test"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := card.Parse(raw, card.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	res, err := store.Upsert(context.Background(), catalog.System("test"), catalog.UpsertInput{
		CardURL: cardURL, Card: c, Source: catalog.SourceURL, ReceivedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	return res.Agent.ID
}

// storeOAuthAgent stores an agent at url whose card asks for a token
// from the authorization server as.
func storeOAuthAgent(t *testing.T, store *catalog.Store, url string, as *proxytest.AuthServer) string {
	t.Helper()
	raw, err := json.Marshal(map[string]any{
		"name": "OAuth Agent", "description": "An in-process A2A agent behind OAuth 2.0.", "url": url, "version": "1.0.0",
		"protocolVersion": "0.3.0", "preferredTransport": "JSONRPC", "capabilities": map[string]any{"streaming": true},
		"defaultInputModes": []string{"text/plain"}, "defaultOutputModes": []string{"text/plain"},
		"skills": []any{map[string]any{"id": "ask", "name": "Ask", "description": "Asks back.", "tags": []string{"test"}}},
		"securitySchemes": map[string]any{"login": map[string]any{"type": "oauth2", "flows": map[string]any{
			"authorizationCode": map[string]any{"authorizationUrl": as.AuthorizeURL, "tokenUrl": as.TokenURL, "scopes": map[string]string{"a2a": "talk"}}}}},
		"security": []any{map[string]any{"login": []string{"a2a"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := card.Parse(raw, card.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	res, err := store.Upsert(context.Background(), catalog.System("test"), catalog.UpsertInput{
		CardURL: "https://oauth-peer.example/.well-known/agent-card.json", Card: c, Source: catalog.SourceURL, ReceivedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	return res.Agent.ID
}

// removeProfile deletes a browser profile directory, retrying while the
// browser's last helper processes finish writing into it; what is left
// after that is logged, not failed on: it is a temporary directory.
func removeProfile(t *testing.T, dir string) {
	var err error
	for range 50 {
		if err = os.RemoveAll(dir); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("leaving browser profile %s: %v", dir, err)
}

// startBrowserProvider runs mockoidc on loopback and counts the browser's
// visits to its authorize endpoint.
func startBrowserProvider(t *testing.T) (*mockoidc.MockOIDC, *atomic.Int32) {
	t.Helper()
	m, err := mockoidc.NewServer(nil)
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int32
	if err := m.AddMiddleware(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == mockoidc.AuthorizationEndpoint {
				n.Add(1)
			}
			next.ServeHTTP(w, r)
		})
	}); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(ln, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown() })
	return m, &n
}

// replayCookies sends a GET with the browser's cookies, as a thief who
// copied them would, and returns the status without following redirects.
func replayCookies(t *testing.T, url string, cookies []*network.Cookie) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cookies {
		req.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// focusJS describes the focused element: what it is and whether its
// focus shows, that is whether it looks different once blurred (outline,
// ring, border, background or colour); then it puts the focus back.
const focusJS = `(() => {
	const el = document.activeElement;
	const look = () => {
		const s = getComputedStyle(el);
		return [s.outlineStyle, s.outlineWidth, s.outlineColor, s.boxShadow, s.borderColor,
			s.backgroundColor, s.color, s.left, s.textDecorationLine].join('|');
	};
	const focused = look();
	el.blur();
	const blurred = look();
	el.focus();
	return {
		desc: el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.name ? '[name=' + el.name + ']' : '') +
			(el.tagName === 'A' ? '[href=' + el.getAttribute('href') + ']' : ''),
		visible: focused !== blurred,
		search: el.id === 'q',
		facet: el.matches('.facets input[type=checkbox]'),
	};
})()`

// checkKeyboard tabs through the page in ctx from its start: the search
// box and then a facet must be reached, and every stop must show focus
// (issue 11: keyboard reachable, visible focus).
func checkKeyboard(ctx context.Context, t *testing.T) {
	t.Helper()
	type focus struct {
		Desc                   string
		Visible, Search, Facet bool
	}
	var path []string
	var search, facet bool
	err := chromedp.Run(ctx,
		chromedp.Evaluate(`document.activeElement.blur(); true`, &search),
		chromedp.ActionFunc(func(ctx context.Context) error {
			search = false
			for range 40 {
				if err := chromedp.KeyEvent(kb.Tab).Do(ctx); err != nil {
					return err
				}
				var f focus
				if err := chromedp.Evaluate(focusJS, &f).Do(ctx); err != nil {
					return err
				}
				path = append(path, f.Desc)
				if !f.Visible {
					t.Errorf("keyboard focus on %s does not show", f.Desc)
				}
				search = search || f.Search
				if f.Facet {
					facet = true
					return nil
				}
			}
			return nil
		}),
	)
	if err != nil {
		t.Fatalf("tabbing through the search page: %v", err)
	}
	if !search || !facet {
		t.Errorf("tabbing reached the search box %v and a facet %v, want both; focus went %v", search, facet, path)
	}
	t.Logf("tab order to the first facet: %s", strings.Join(path, " → "))
}

// unnamedControlsJS lists the form controls that have no accessible name:
// no label, aria-label, aria-labelledby, title, or (buttons) text.
const unnamedControlsJS = `[...document.querySelectorAll('input:not([type=hidden]), select, textarea, button')].filter(el => {
	const byIDs = (el.getAttribute('aria-labelledby') || '').split(/\s+/).filter(Boolean)
		.map(id => (document.getElementById(id) || {}).textContent || '').join('');
	const name = (el.getAttribute('aria-label') || '') + byIDs +
		[...(el.labels || [])].map(l => l.textContent).join('') + (el.getAttribute('title') || '') +
		(el.tagName === 'BUTTON' ? el.textContent : '') +
		(el.type === 'submit' || el.type === 'button' ? el.value || '' : '');
	return name.trim() === '';
}).map(el => el.outerHTML.slice(0, 160))`

// labelled fails the test for every form control of the current page
// that a screen reader could not name (issue 11: labelled controls).
func labelled(t *testing.T, where string) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		var unnamed []string
		if err := chromedp.Evaluate(unnamedControlsJS, &unnamed).Do(ctx); err != nil {
			return fmt.Errorf("listing form controls: %w", err)
		}
		for _, u := range unnamed {
			t.Errorf("%s: a form control without a label: %s", where, u)
		}
		return nil
	})
}

// brokenWordsJS lists the table cells made of words short enough to fit
// a column (under 16 characters) whose text takes more lines than it has
// words: a word was broken.
const brokenWordsJS = `[...document.querySelectorAll('th, td')].filter(c => {
	if (c.querySelector('.vh')) return false;
	const walk = document.createTreeWalker(c, NodeFilter.SHOW_TEXT);
	for (let n = walk.nextNode(); n; n = walk.nextNode()) {
		const words = n.textContent.trim().split(/\s+/).filter(Boolean);
		if (words.length === 0 || words.some(w => w.length >= 16)) continue;
		const r = document.createRange();
		r.selectNodeContents(n);
		const lines = new Set([...r.getClientRects()].map(x => Math.round(x.top)));
		if (lines.size > words.length) return true;
	}
	return false;
}).map(c => c.textContent.trim())`
