// Package proxytest runs honest A2A agents in-process (a2asrv from the
// official Go SDK) over every binding and version, for tests of the proxy
// and of what drives it.
package proxytest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"iter"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	grpcv0 "github.com/a2aproject/a2a-go/v2/a2agrpc/v0"
	grpcv1 "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"google.golang.org/grpc"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/safehttp"
)

// Words the test agent understands, as the text of the first part.
const (
	// SayAsk makes the agent ask for input; the next message on the task
	// completes it.
	SayAsk = "ask"
	// SayWait makes the agent work until canceled.
	SayWait = "wait"
	// SayEcho makes the agent answer the Authorization header it got (or
	// its X-Api-Key), to prove the transcript scrubs it: as text, in a
	// data part, JSON-escaped in text, URL query and path encoded, in
	// base64 (std and url, padded or not) and as a file's bytes.
	SayEcho = "echo-auth"
	// SayExtensions makes the agent answer the extensions it was asked
	// to activate, and SayTenant the tenant it was called for.
	SayExtensions = "echo-extensions"
	SayTenant     = "echo-tenant"
)

// Agent is an honest a2asrv executor: a task, working, one artifact per
// word, completed; or input-required, or work until canceled.
type Agent struct {
	// Started is closed (once) when a SayWait task is working.
	Started chan struct{}
}

func (a *Agent) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		text := ""
		if ec.Message != nil && len(ec.Message.Parts) > 0 {
			text = ec.Message.Parts[0].Text()
		}
		if ec.StoredTask == nil {
			if !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
				return
			}
		}
		if !yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, nil), nil) {
			return
		}
		switch {
		case text == SayAsk && ec.StoredTask == nil:
			q := a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart("which city?"))
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateInputRequired, q), nil)
			return
		case text == SayWait:
			if a.Started != nil {
				close(a.Started)
			}
			<-ctx.Done()
			return
		case text == SayEcho:
			got := ""
			if ec.ServiceParams != nil {
				for _, h := range []string{"authorization", "x-api-key"} {
					if v, ok := ec.ServiceParams.Get(h); ok && len(v) > 0 && got == "" {
						got = v[0]
					}
				}
			}
			if !yield(a2a.NewArtifactEvent(ec, echoForms(got)...), nil) {
				return
			}
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, nil), nil)
			return
		case text == SayExtensions:
			text = "extensions"
			if ec.ServiceParams != nil {
				if v, ok := ec.ServiceParams.Get(a2a.SvcParamExtensions); ok {
					text += " " + strings.Join(v, " ")
				}
			}
		case text == SayTenant:
			text = "tenant " + ec.Tenant
		}
		var id a2a.ArtifactID
		for i, w := range strings.Fields("done: " + text) {
			var ev *a2a.TaskArtifactUpdateEvent
			if i == 0 {
				ev = a2a.NewArtifactEvent(ec, a2a.NewTextPart(w))
				id = ev.Artifact.ID
			} else {
				ev = a2a.NewArtifactUpdateEvent(ec, id, a2a.NewTextPart(" "+w))
			}
			if !yield(ev, nil) {
				return
			}
		}
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, nil), nil)
	}
}

func (a *Agent) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

// Peer is one in-process agent serving one binding of one version.
type Peer struct {
	Interface card.Interface
	Agent     *Agent
}

// Guard wraps h so that it answers 401 unless the request carries
// Authorization: want.
func Guard(want string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != want {
			http.Error(w, "unauthenticated", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Options shape Start.
type Options struct {
	// Wrap guards the HTTP handler (credentials).
	Wrap func(http.Handler) http.Handler
	// Tenant serves HTTP+JSON v1.0 under /{tenant}/ (v1.0 §11.3).
	Tenant bool
}

// Start serves a fresh agent over binding and version ("1.0" or
// "0.3") on loopback.
func Start(t testing.TB, binding, version string, o Options) Peer {
	t.Helper()
	ag := &Agent{}
	h := a2asrv.NewHandler(ag)
	v1 := version == "1.0"
	if binding == card.BindingGRPC {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		s := grpc.NewServer()
		if v1 {
			grpcv1.NewHandler(h).RegisterWith(s)
		} else {
			grpcv0.NewHandler(h).RegisterWith(s)
		}
		go func() { _ = s.Serve(lis) }()
		t.Cleanup(s.Stop)
		return Peer{Interface: card.Interface{URL: lis.Addr().String(), Binding: binding, ProtocolVersion: version}, Agent: ag}
	}
	var hh http.Handler
	switch {
	case binding == card.BindingJSONRPC && v1:
		hh = a2asrv.NewJSONRPCHandler(h)
	case binding == card.BindingJSONRPC:
		hh = a2av0.NewJSONRPCHandler(h)
	case v1 && o.Tenant:
		hh = a2asrv.NewTenantRESTHandler("/{*}", h)
	case v1:
		hh = a2asrv.NewRESTHandler(h)
	default:
		hh = a2av0.NewRESTHandler(h)
	}
	if o.Wrap != nil {
		hh = o.Wrap(hh)
	}
	srv := httptest.NewServer(hh)
	t.Cleanup(srv.Close)
	return Peer{Interface: card.Interface{URL: srv.URL, Binding: binding, ProtocolVersion: version}, Agent: ag}
}

// Loopback is the safe client tests use, configured as serve's proxy
// client is: loopback opened, streams unbounded, no redirects.
func Loopback() *safehttp.Client {
	return safehttp.New(safehttp.Config{
		AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		Timeout:       -1,
		MaxBodyBytes:  -1,
		MaxRedirects:  -1,
	})
}

// Card is a card declaring ifaces.
func Card(streaming bool, ifaces ...card.Interface) *card.Card {
	return &card.Card{Name: "test", Capabilities: card.Capabilities{Streaming: streaming}, Interfaces: ifaces}
}

// Text is a user message of one text part.
func Text(s string) *a2a.Message {
	return a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(s))
}

// ClosedURL is a loopback URL nothing listens on.
func ClosedURL(t testing.TB) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	return "http://" + addr
}

// TokenServer is an OAuth2 token endpoint for the client credentials
// grant (RFC 6749 §4.4) that mints token for id:secret.
func TokenServer(t testing.TB, id, secret, token string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		// RFC 6749 §2.3.1: the client id and secret are form-encoded
		// before they go into the Basic header.
		u, _ = url.QueryUnescape(u)
		p, _ = url.QueryUnescape(p)
		if err := r.ParseForm(); err != nil || !ok || u != id || p != secret || r.PostForm.Get("grant_type") != "client_credentials" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			// An endpoint that echoes what it got: the proxy must not pass
			// this body on.
			_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_client", "error_description": "bad secret " + p})
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": token, "token_type": "Bearer", "expires_in": 3600})
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/token"
}

// echoForms are the parts of SayEcho's answer: got, and its credential
// (what follows the scheme word), in every form an agent could echo.
func echoForms(got string) []*a2a.Part {
	tok := got
	if i := strings.IndexByte(got, ' '); i >= 0 {
		tok = got[i+1:]
	}
	quoted, _ := json.Marshal(map[string]string{"token": tok})
	return []*a2a.Part{
		a2a.NewTextPart("you sent " + got),
		a2a.NewDataPart(map[string]any{"authorization": got, "token": tok}),
		a2a.NewTextPart("as JSON " + string(quoted)),
		a2a.NewTextPart("https://echo.example/t/" + url.PathEscape(tok) + "?token=" + url.QueryEscape(tok)),
		a2a.NewTextPart(strings.Join([]string{
			base64.StdEncoding.EncodeToString([]byte(tok)), base64.URLEncoding.EncodeToString([]byte(tok)),
			base64.RawStdEncoding.EncodeToString([]byte(tok)), base64.RawURLEncoding.EncodeToString([]byte(tok)),
			base64.StdEncoding.EncodeToString([]byte("header: " + got)),
		}, " ")),
		a2a.NewRawPart([]byte("header: " + got)),
	}
}
