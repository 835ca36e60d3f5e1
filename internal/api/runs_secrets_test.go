package api

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	"github.com/labstack/echo/v4"
	_ "github.com/mattn/go-sqlite3" // database/sql driver "sqlite3"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/proxy"
	"github.com/a2aregistry/registry/internal/proxy/proxytest"
	"github.com/a2aregistry/registry/internal/runs"
)

// TestCredentialsNeverKept runs every kind of credential through the API
// against agents that require them (each echoes the credential back in
// every form proxytest.SayEcho knows: JSON-escaped, URL-encoded, base64, a
// file's bytes), on both databases, then searches every log line and
// every column of every table for the secrets in each of those forms. The
// secrets hold the characters that change under those encodings. Follow-ups (a reply,
// a cancel) send none: the conversation's own are remembered in memory,
// for their giver only.
func TestCredentialsNeverKept(t *testing.T) {
	const (
		bearer       = `bearer <s3cr3t> & "0001" \ +/=% x`
		apiKey       = `apikey <s3cr3t> & "0002" \ +/=% x`
		password     = `basic <s3cr3t> & "0003" \ +/=% x`
		clientSecret = `client <s3cr3t> & "0004" \ +/=% x`
		minted       = `minted <s3cr3t> & "0005" \ +/=% x`
	)
	var forms []string
	for _, s := range []string{bearer, apiKey, password, clientSecret, minted,
		base64.StdEncoding.EncodeToString([]byte("ann:" + password))} {
		forms = append(forms, encodedForms(s)...)
	}
	secrets := forms
	for _, backend := range []struct {
		name   string
		dsn    func(testing.TB) string
		driver string
		tables string
	}{
		{"sqlite", catalogtest.SQLiteDSN, "sqlite3", "SELECT name FROM sqlite_master WHERE type = 'table'"},
		{"postgres", catalogtest.PostgresDSN, "pgx", "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"},
	} {
		t.Run(backend.name, func(t *testing.T) {
			dsn := backend.dsn(t)
			store := catalogtest.Open(t, dsn)
			// The agent's SDK goroutines may still log while the test reads.
			var logs lockedBuffer
			logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			// The SDK logs through slog's default logger.
			prev := slog.Default()
			slog.SetDefault(logger)
			t.Cleanup(func() { slog.SetDefault(prev) })

			tokenURL := proxytest.TokenServer(t, "client-1", clientSecret, minted)
			peers := map[string]proxytest.Peer{
				"bearer": proxytest.Start(t, card.BindingJSONRPC, "1.0", proxytest.Options{Wrap: func(h http.Handler) http.Handler { return proxytest.Guard("Bearer "+bearer, h) }}),
				"key": proxytest.Start(t, card.BindingHTTPJSON, "1.0", proxytest.Options{Wrap: func(h http.Handler) http.Handler {
					return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						if r.URL.Query().Get("key") != apiKey {
							http.Error(w, "no key", http.StatusUnauthorized)
							return
						}
						h.ServeHTTP(w, r)
					})
				}}),
				"basic": proxytest.Start(t, card.BindingJSONRPC, "0.3", proxytest.Options{Wrap: func(h http.Handler) http.Handler {
					return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						if u, p, ok := r.BasicAuth(); !ok || u != "ann" || p != password {
							http.Error(w, "no", http.StatusUnauthorized)
							return
						}
						h.ServeHTTP(w, r)
					})
				}}),
				"oauth": proxytest.Start(t, card.BindingJSONRPC, "1.0", proxytest.Options{Wrap: func(h http.Handler) http.Handler { return proxytest.Guard("Bearer "+minted, h) }}),
				"ask":   proxytest.Start(t, card.BindingJSONRPC, "1.0", proxytest.Options{Wrap: func(h http.Handler) http.Handler { return proxytest.Guard("Bearer "+bearer, h) }}),
			}
			schemes := map[string]string{
				"bearer": `{"b": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}}`,
				"key":    `{"k": {"apiKeySecurityScheme": {"location": "query", "name": "key"}}}`,
				"basic":  `{"basic": {"type": "http", "scheme": "basic"}}`,
				"oauth":  fmt.Sprintf(`{"o": {"oauth2SecurityScheme": {"flows": {"clientCredentials": {"tokenUrl": %q, "scopes": {}}}}}}`, tokenURL),
				"ask":    `{"b": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}}`,
			}
			ids := map[string]string{}
			for name, pe := range peers {
				var raw string
				if pe.Interface.ProtocolVersion == "0.3" {
					raw = fmt.Sprintf(`{"name": %q, "description": "d", "version": "1", "protocolVersion": "0.3.0", "url": %q, "preferredTransport": "JSONRPC",
						"capabilities": {"streaming": true}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "skills": [],
						"securitySchemes": %s}`, name, pe.Interface.URL, schemes[name])
				} else {
					raw = fmt.Sprintf(`{"name": %q, "description": "d", "version": "1",
						"supportedInterfaces": [{"url": %q, "protocolBinding": %q, "protocolVersion": "1.0"}],
						"capabilities": {"streaming": true}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "skills": [],
						"securitySchemes": %s}`, name, pe.Interface.URL, pe.Interface.Binding, schemes[name])
				}
				c, err := card.Parse([]byte(raw), card.DefaultLimits())
				if err != nil {
					t.Fatalf("card %s: %v", name, err)
				}
				res, err := store.Upsert(context.Background(), catalog.System("test"), catalog.UpsertInput{CardURL: "https://" + name + ".example.com/.well-known/agent-card.json", Card: c, Source: catalog.SourceURL})
				if err != nil {
					t.Fatal(err)
				}
				ids[name] = res.Agent.ID
			}

			e := echo.New()
			ann := auth.Principal{Subject: "ann", Role: auth.Tester}
			as := ann
			keeper := proxy.NewKeeper(0, 0)
			New(Options{Catalog: store, Logger: logger,
				Runs: runs.New(runs.Options{Runner: proxy.New(proxy.Options{Client: proxytest.Loopback(), Logger: logger}), Store: store,
					Keeper: keeper, Logger: logger}),
				Authorizer: authorizerFunc(func(auth.Role) echo.MiddlewareFunc {
					return func(next echo.HandlerFunc) echo.HandlerFunc {
						return func(c echo.Context) error {
							c.SetRequest(c.Request().WithContext(auth.WithPrincipal(c.Request().Context(), as, "")))
							return next(c)
						}
					}
				})}).Mount(e)
			env := testEnv{e: e}
			credsWith := func(prefix string) map[string]string {
				q := func(s string) string { b, _ := json.Marshal(prefix + s); return string(b) }
				return map[string]string{
					"bearer": `{"bearer": ` + q(bearer) + `}`,
					"key":    `{"api_key": ` + q(apiKey) + `}`,
					"basic":  `{"basic": {"username": "ann", "password": ` + q(password) + `}}`,
					"oauth":  `{"oauth2_client_credentials": {"client_id": "client-1", "client_secret": ` + q(clientSecret) + `}}`,
				}
			}
			creds := credsWith("")
			for name, cr := range creds {
				for _, accept := range []string{"application/json", "text/event-stream"} {
					rec := env.do(t, http.MethodPost, "/api/v1/agents/"+ids[name]+"/runs", runBody(proxytest.SayEcho, `, "credentials": `+cr),
						map[string]string{"Content-Type": "application/json", "Accept": accept})
					body := rec.Body.String()
					if !strings.Contains(body, "TASK_STATE_COMPLETED") {
						t.Errorf("%s (%s): the agent did not accept the credentials: %d %s", name, accept, rec.Code, body)
					}
					for _, s := range secrets {
						if strings.Contains(body, s) {
							t.Errorf("%s (%s): the answer holds a secret: %s", name, accept, body)
						}
					}
				}
				// A wrong secret fails without echoing what was sent.
				bad := credsWith("x")[name]
				rec := env.do(t, http.MethodPost, "/api/v1/agents/"+ids[name]+"/runs", runBody("hi", `, "credentials": `+bad), jsonHeader)
				for _, s := range secrets {
					if strings.Contains(rec.Body.String(), s) {
						t.Errorf("%s refused: the answer holds a secret: %s", name, rec.Body)
					}
				}
			}
			// A conversation's follow-ups reuse its credentials, for the
			// tester who gave them and nobody else, and only until it ends.
			sse := map[string]string{"Content-Type": "application/json", "Accept": "text/event-stream"}
			first := decodeRun(t, env.do(t, http.MethodPost, "/api/v1/agents/"+ids["ask"]+"/runs", runBody(proxytest.SayAsk, `, "credentials": `+creds["bearer"]), jsonHeader))
			if first.Awaiting != "input" {
				t.Fatalf("asking agent: %+v", first)
			}
			as = auth.Principal{Subject: "root", Role: auth.Admin}
			rec := env.do(t, http.MethodPost, "/api/v1/runs/"+first.ID+"/messages", runBody("Paris", ""), jsonHeader)
			if strings.Contains(rec.Body.String(), "TASK_STATE_COMPLETED") || !strings.Contains(rec.Body.String(), `"error"`) {
				t.Errorf("an admin's follow-up used the tester's credentials: %d %s", rec.Code, rec.Body)
			}
			as = ann
			rec = env.do(t, http.MethodPost, "/api/v1/runs/"+first.ID+"/messages", runBody("Paris", ""), sse)
			if !strings.Contains(rec.Body.String(), "event: done") || !strings.Contains(rec.Body.String(), "TASK_STATE_COMPLETED") {
				t.Errorf("follow-up without credentials: %s", rec.Body)
			}
			if keeper.Holds(first.ID, "ann") {
				t.Error("credentials still remembered after the task completed")
			}
			second := decodeRun(t, env.do(t, http.MethodPost, "/api/v1/agents/"+ids["ask"]+"/runs", runBody(proxytest.SayAsk, `, "credentials": `+creds["bearer"]), jsonHeader))
			if !keeper.Holds(second.ID, "ann") {
				t.Fatalf("credentials of a waiting run (%s) not remembered", second.State)
			}
			// The a2asrv peer may still be closing the event queue of the
			// turn that asked for input ("queue is closed"): the cancel is
			// tried again then, each time on the remembered credentials.
			for try := 0; ; try++ {
				rec = env.do(t, http.MethodPost, "/api/v1/runs/"+second.ID+"/cancel", "", nil)
				if try < 20 && strings.Contains(rec.Body.String(), "queue is closed") {
					time.Sleep(50 * time.Millisecond)
					continue
				}
				break
			}
			if canceled := decodeRun(t, rec); canceled.State != "TASK_STATE_CANCELED" {
				t.Errorf("cancel without credentials: %d %s", rec.Code, rec.Body)
			}
			if keeper.Len() != 0 {
				t.Errorf("%d conversations' credentials remembered after every run ended", keeper.Len())
			}
			for _, s := range secrets {
				if strings.Contains(rec.Body.String(), s) {
					t.Errorf("follow-up answer holds a secret: %s", rec.Body)
				}
			}

			// A check with credentials, then the agent shows it.
			rec = env.do(t, http.MethodPost, "/api/v1/agents/"+ids["bearer"]+"/checks", `{"credentials": `+creds["bearer"]+`}`, jsonHeader)
			if rec.Code != http.StatusCreated {
				t.Fatalf("check: %d %s", rec.Code, rec.Body)
			}
			var detail AgentDetail
			if err := json.Unmarshal(env.do(t, http.MethodGet, "/api/v1/agents/"+ids["bearer"], "", nil).Body.Bytes(), &detail); err != nil {
				t.Fatal(err)
			}
			if detail.Check == nil || detail.Check.Works != "all" {
				t.Errorf("agent check = %+v, want works all", detail.Check)
			}
			if !strings.Contains(logs.String(), "run turn") {
				t.Fatalf("no run was logged; the log search would prove nothing: %s", logs.String())
			}
			for _, s := range secrets {
				if strings.Contains(logs.String(), s) {
					t.Errorf("a log line holds secret %q", s)
				}
			}
			dump := dumpTables(t, backend.driver, dsnForDriver(backend.driver, dsn), backend.tables)
			if !strings.Contains(dump, "TASK_STATE_COMPLETED") {
				t.Fatalf("no run was stored; the table search would prove nothing")
			}
			for _, s := range secrets {
				if strings.Contains(dump, s) {
					t.Errorf("a table holds secret %q", s)
				}
			}
		})
	}
}

func dsnForDriver(driver, dsn string) string {
	if driver == "sqlite3" {
		return strings.TrimPrefix(dsn, "sqlite:")
	}
	return dsn
}

// dumpTables reads every column of every row of every table as text.
func dumpTables(t *testing.T, driver, dsn, listTables string) string {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(listTables)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, n)
	}
	rows.Close()
	var out strings.Builder
	for _, tb := range tables {
		rs, err := db.Query(`SELECT * FROM "` + tb + `"`)
		if err != nil {
			t.Fatalf("reading %s: %v", tb, err)
		}
		cols, _ := rs.Columns()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rs.Next() {
			if err := rs.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for _, v := range vals {
				fmt.Fprintf(&out, "%s\t", v)
			}
			out.WriteByte('\n')
		}
		rs.Close()
	}
	if len(tables) < 5 {
		t.Fatalf("found only tables %v", tables)
	}
	return out.String()
}

// lockedBuffer is a log sink safe to read while other goroutines write.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// encodedForms are s as an agent could echo it: raw, JSON-escaped (with
// and without HTML escaping), URL query and path encoded, and base64 in
// both alphabets, padded and not.
func encodedForms(s string) []string {
	out := []string{s, url.QueryEscape(s), url.PathEscape(s)}
	for _, html := range []bool{true, false} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		_ = enc.Encode(s)
		out = append(out, strings.Trim(strings.TrimSpace(b.String()), `"`))
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		out = append(out, enc.EncodeToString([]byte(s)))
	}
	return out
}
