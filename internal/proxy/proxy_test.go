package proxy

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/proxy/proxytest"
)

// TestSendEveryBindingAndVersion runs a streamed and a blocking task
// against an honest a2asrv agent over each binding and version.
func TestSendEveryBindingAndVersion(t *testing.T) {
	p := New(Options{Client: proxytest.Loopback()})
	for _, binding := range []string{card.BindingJSONRPC, card.BindingHTTPJSON, card.BindingGRPC} {
		for _, version := range []string{"1.0", "0.3"} {
			for _, stream := range []bool{true, false} {
				t.Run(binding+"/"+version+"/stream="+map[bool]string{true: "yes", false: "no"}[stream], func(t *testing.T) {
					pe := proxytest.Start(t, binding, version, proxytest.Options{})
					var relayed []Event
					x, err := p.Send(t.Context(), Call{Card: proxytest.Card(true, pe.Interface)}, proxytest.Text("hello world"), stream, func(e Event) { relayed = append(relayed, e) })
					if err != nil {
						t.Fatalf("Send: %v", err)
					}
					if x.Endpoint.Interface != pe.Interface || x.Endpoint.Speaks != version {
						t.Errorf("endpoint = %+v, want %+v speaking %s", x.Endpoint, pe.Interface, version)
					}
					if got := x.State(); got != string(a2a.TaskStateCompleted) {
						t.Errorf("state = %q, want completed", got)
					}
					if len(relayed) != len(x.Events) {
						t.Errorf("relayed %d events, recorded %d", len(relayed), len(x.Events))
					}
					if stream && len(x.Events) < 4 {
						t.Errorf("streamed %d events, want task, working, artifacts, completed", len(x.Events))
					}
					if !stream && len(x.Events) != 1 {
						t.Errorf("blocking send recorded %d events, want 1", len(x.Events))
					}
					if len(x.Violations) != 0 {
						t.Errorf("violations from an honest agent: %+v", x.Violations)
					}
					if got := artifactText(x.Task); got != "done: hello world" {
						t.Errorf("artifact text = %q", got)
					}
				})
			}
		}
	}
}

func artifactText(t *a2a.Task) string {
	if t == nil {
		return ""
	}
	var b strings.Builder
	for _, a := range t.Artifacts {
		for _, p := range a.Parts {
			b.WriteString(p.Text())
		}
	}
	return b.String()
}

// TestMultiTurn answers an input request on the same task.
func TestMultiTurn(t *testing.T) {
	p := New(Options{Client: proxytest.Loopback()})
	for _, version := range []string{"1.0", "0.3"} {
		t.Run(version, func(t *testing.T) {
			pe := proxytest.Start(t, card.BindingJSONRPC, version, proxytest.Options{})
			call := Call{Card: proxytest.Card(true, pe.Interface)}
			x, err := p.Send(t.Context(), call, proxytest.Text(proxytest.SayAsk), true, nil)
			if err != nil {
				t.Fatal(err)
			}
			if x.State() != string(a2a.TaskStateInputRequired) {
				t.Fatalf("state = %q, want input-required", x.State())
			}
			reply := proxytest.Text("Paris")
			reply.TaskID, reply.ContextID = x.Task.ID, x.Task.ContextID
			y, err := p.Send(t.Context(), call, reply, true, nil)
			if err != nil {
				t.Fatal(err)
			}
			if y.Task == nil || y.Task.ID != x.Task.ID || y.State() != string(a2a.TaskStateCompleted) {
				t.Fatalf("second turn: task %+v state %q", y.Task, y.State())
			}
			got, err := p.GetTask(t.Context(), call, string(x.Task.ID))
			if err != nil {
				t.Fatal(err)
			}
			if got.State() != string(a2a.TaskStateCompleted) {
				t.Errorf("GetTask state = %q", got.State())
			}
		})
	}
}

// TestCancelAndResubscribe cancels a working task from another call while
// a resubscription watches it.
func TestCancelAndResubscribe(t *testing.T) {
	p := New(Options{Client: proxytest.Loopback()})
	for _, binding := range []string{card.BindingJSONRPC, card.BindingGRPC} {
		t.Run(binding, func(t *testing.T) {
			pe := proxytest.Start(t, binding, "1.0", proxytest.Options{})
			pe.Agent.Started = make(chan struct{})
			call := Call{Card: proxytest.Card(true, pe.Interface)}
			msg := proxytest.Text(proxytest.SayWait)
			taskIDs := make(chan a2a.TaskID, 1)
			done := make(chan *Exchange, 1)
			go func() {
				x, _ := p.Send(context.Background(), call, msg, true, func(e Event) {
					if e.Kind == KindTask {
						var tk a2a.Task
						if err := json.Unmarshal(e.Data, &tk); err == nil {
							taskIDs <- tk.ID
						}
					}
				})
				done <- x
			}()
			id := <-taskIDs
			<-pe.Agent.Started
			resub := make(chan *Exchange, 1)
			subscribed := make(chan struct{})
			go func() {
				x, _ := p.Resubscribe(context.Background(), call, string(id), func(Event) {
					select {
					case <-subscribed:
					default:
						close(subscribed)
					}
				})
				resub <- x
			}()
			<-subscribed
			c, err := p.Cancel(t.Context(), call, string(id))
			if err != nil {
				t.Fatalf("Cancel: %v", err)
			}
			if c.State() != string(a2a.TaskStateCanceled) {
				t.Errorf("cancel state = %q", c.State())
			}
			x := <-done
			if x.State() != string(a2a.TaskStateCanceled) {
				t.Errorf("stream ended in %q, want canceled", x.State())
			}
			if r := <-resub; r == nil || r.State() != string(a2a.TaskStateCanceled) {
				t.Errorf("resubscription ended in %+v, want canceled", r)
			}
		})
	}
}

// TestFallback tries the next declared interface when the preferred one
// does not answer, and the exchange says so; a caller's pick is tried
// alone.
func TestFallback(t *testing.T) {
	p := New(Options{Client: proxytest.Loopback()})
	pe := proxytest.Start(t, card.BindingJSONRPC, "1.0", proxytest.Options{})
	dead := card.Interface{URL: proxytest.ClosedURL(t), Binding: card.BindingJSONRPC, ProtocolVersion: "1.0"}
	c := proxytest.Card(true, dead, pe.Interface)

	x, err := p.Send(t.Context(), Call{Card: c}, proxytest.Text("hi"), true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Attempts) != 1 || x.Attempts[0].Interface != dead {
		t.Errorf("attempts = %+v, want the dead interface", x.Attempts)
	}
	if x.Endpoint.Interface != pe.Interface {
		t.Errorf("answered by %+v", x.Endpoint)
	}

	_, err = p.Send(t.Context(), Call{Card: c, Choice: Choice{URL: dead.URL}}, proxytest.Text("hi"), true, nil)
	if !errors.Is(err, ErrUnreachable) {
		t.Errorf("picked dead interface: err = %v, want ErrUnreachable", err)
	}
}

// TestInterfaceRules: undeclared URLs are refused, unknown versions are
// never guessed.
func TestInterfaceRules(t *testing.T) {
	p := New(Options{Client: proxytest.Loopback()})
	pe := proxytest.Start(t, card.BindingJSONRPC, "1.0", proxytest.Options{})
	unknown := pe.Interface
	unknown.ProtocolVersion = card.VersionUnknown
	tests := []struct {
		name   string
		card   *card.Card
		choice Choice
		want   error
	}{
		{"undeclared url", proxytest.Card(true, pe.Interface), Choice{URL: "http://127.0.0.1:1/elsewhere"}, ErrInterfaceNotDeclared},
		{"unknown version", proxytest.Card(true, unknown), Choice{}, ErrVersionUnknown},
		{"extension binding", proxytest.Card(true, card.Interface{URL: pe.Interface.URL, Binding: "WEBSOCKET", ProtocolVersion: "1.0"}), Choice{}, ErrNoUsableInterface},
		{"unknown version picked", proxytest.Card(true, unknown), Choice{SpeakVersion: "1.0"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := p.Send(t.Context(), Call{Card: tt.card, Choice: tt.choice}, proxytest.Text("hi"), false, nil)
			if !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

// TestCredentials sends each kind of credential the way the card's scheme
// asks, and never lets a secret into what the proxy returns, in any form
// the agent echoes it (proxytest.SayEcho): the secret holds characters
// that JSON, URL and base64 encodings each change.
func TestCredentials(t *testing.T) {
	const secret = `s3<cr>&3t "v\a+l/u=e% x y z`
	p := New(Options{Client: proxytest.Loopback()})
	tokenURL := proxytest.TokenServer(t, "client-1", secret, "minted-"+secret)
	schemes := []card.SecurityScheme{
		{Name: "bearer", Type: card.SchemeHTTP, Scheme: "Bearer"},
		{Name: "key", Type: card.SchemeAPIKey, In: "header", ParamName: "X-Api-Key"},
		{Name: "basic", Type: card.SchemeHTTP, Scheme: "basic"},
		{Name: "oauth", Type: card.SchemeOAuth2, Flows: []card.OAuthFlow{{Name: "clientCredentials", TokenURL: tokenURL}}},
	}
	keyGuard := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("X-Api-Key") != secret {
				http.Error(w, "no key", http.StatusUnauthorized)
				return
			}
			h.ServeHTTP(w, r)
		})
	}
	tests := []struct {
		name   string
		wrap   func(http.Handler) http.Handler
		creds  Credentials
		scheme string
		want   error
	}{
		{"bearer", func(h http.Handler) http.Handler { return proxytest.Guard("Bearer "+secret, h) }, Credentials{Bearer: secret}, "bearer", nil},
		{"missing bearer", func(h http.Handler) http.Handler { return proxytest.Guard("Bearer "+secret, h) }, Credentials{}, "", ErrAgent},
		{"api key header", keyGuard, Credentials{APIKey: secret}, "key", nil},
		{"basic", func(h http.Handler) http.Handler {
			return proxytest.Guard("Basic "+base64.StdEncoding.EncodeToString([]byte("ann:"+secret)), h)
		}, Credentials{Basic: &Basic{Username: "ann", Password: secret}}, "basic", nil},
		{"oauth2 client credentials", func(h http.Handler) http.Handler { return proxytest.Guard("Bearer minted-"+secret, h) },
			Credentials{OAuth2ClientCredentials: &ClientCredentials{ClientID: "client-1", ClientSecret: secret}}, "oauth", nil},
		{"oauth2 wrong secret", nil,
			Credentials{OAuth2ClientCredentials: &ClientCredentials{ClientID: "client-1", ClientSecret: "wrong-" + secret}}, "", ErrTokenRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pe := proxytest.Start(t, card.BindingJSONRPC, "1.0", proxytest.Options{Wrap: tt.wrap})
			c := proxytest.Card(true, pe.Interface)
			c.SecuritySchemes = schemes
			x, err := p.Send(t.Context(), Call{Card: c, Credentials: tt.creds}, proxytest.Text(proxytest.SayEcho), true, nil)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if err == nil && x.Scheme != tt.scheme {
				t.Errorf("scheme = %q, want %q", x.Scheme, tt.scheme)
			}
			var all bytes.Buffer
			if err != nil {
				all.WriteString(err.Error())
			}
			if x != nil {
				for _, e := range x.Events {
					all.Write(e.Data)
					all.WriteString(e.TaskID + e.ContextID + e.State)
				}
				for _, a := range x.Attempts {
					all.WriteString(a.Error)
				}
				for _, v := range x.Violations {
					all.WriteString(v.Detail)
				}
				all.Write(x.Result)
			}
			if tt.want == nil && !strings.Contains(all.String(), "[redacted]") {
				t.Errorf("the agent echoed the credential, the events should show it redacted: %s", all.String())
			}
			basic := base64.StdEncoding.EncodeToString([]byte("ann:" + secret))
			for _, s := range []string{secret, "header: Bearer " + secret, "header: Bearer minted-" + secret, "header: Basic " + basic, "header: " + secret} {
				for _, f := range encodedForms(s) {
					if strings.Contains(all.String(), f) {
						t.Errorf("the secret leaked as %q: %s", f, all.String())
					}
				}
			}
		})
	}
}

// TestCredentialsNotDeclared refuses to hand a secret to an agent whose
// card asks for none of that kind.
func TestCredentialsNotDeclared(t *testing.T) {
	p := New(Options{Client: proxytest.Loopback()})
	pe := proxytest.Start(t, card.BindingJSONRPC, "1.0", proxytest.Options{})
	c := proxytest.Card(true, pe.Interface)
	c.SecuritySchemes = []card.SecurityScheme{{Name: "key", Type: card.SchemeAPIKey, In: "header", ParamName: "X-Key"}}
	for _, cr := range []Credentials{
		{Bearer: "tok"},
		{Basic: &Basic{Username: "a", Password: "b"}},
		{OAuth2ClientCredentials: &ClientCredentials{ClientID: "a", ClientSecret: "b"}},
		{Bearer: "tok", APIKey: "k"},
	} {
		if _, err := p.Send(t.Context(), Call{Card: c, Credentials: cr}, proxytest.Text("hi"), false, nil); !errors.Is(err, ErrCredentials) {
			t.Errorf("%+v: err = %v, want ErrCredentials", cr, err)
		}
	}
}

// TestMessageLimits refuses oversized messages before anything is sent.
func TestMessageLimits(t *testing.T) {
	p := New(Options{Client: proxytest.Loopback(), MaxFileBytes: 10, MaxMessageBytes: 200})
	c := proxytest.Card(true, card.Interface{URL: proxytest.ClosedURL(t), Binding: card.BindingJSONRPC, ProtocolVersion: "1.0"})
	tests := []struct {
		name string
		msg  *a2a.Message
		want error
	}{
		{"file too large", a2a.NewMessage(a2a.MessageRoleUser, a2a.NewRawPart(make([]byte, 11))), ErrMessageTooLarge},
		{"message too large", proxytest.Text(strings.Repeat("x", 300)), ErrMessageTooLarge},
		{"no parts", a2a.NewMessage(a2a.MessageRoleUser), ErrInvalidMessage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := p.Send(t.Context(), Call{Card: c}, tt.msg, false, nil); !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

// TestMaxEvents stops recording a stream past the limit, as an agent
// error.
func TestMaxEvents(t *testing.T) {
	p := New(Options{Client: proxytest.Loopback(), MaxEvents: 3})
	pe := proxytest.Start(t, card.BindingJSONRPC, "1.0", proxytest.Options{})
	x, err := p.Send(t.Context(), Call{Card: proxytest.Card(true, pe.Interface)}, proxytest.Text("one two three four"), true, nil)
	if !errors.Is(err, ErrAgent) || len(x.Events) != 3 {
		t.Errorf("err = %v with %d events, want ErrAgent after 3", err, len(x.Events))
	}
}

// TestTenantAndExtensions: the interface's tenant and the activated
// extensions reach the agent.
func TestTenantAndExtensions(t *testing.T) {
	p := New(Options{Client: proxytest.Loopback()})
	tenanted := proxytest.Start(t, card.BindingHTTPJSON, "1.0", proxytest.Options{Tenant: true})
	tenanted.Interface.Tenant = "acme"
	plain := proxytest.Start(t, card.BindingJSONRPC, "1.0", proxytest.Options{})
	tests := []struct {
		name  string
		iface card.Interface
		say   string
		exts  []string
		want  string
	}{
		{"tenant", tenanted.Interface, proxytest.SayTenant, nil, "done: tenant acme"},
		{"extensions", plain.Interface, proxytest.SayExtensions, []string{"https://example.com/ext/v1"}, "done: extensions https://example.com/ext/v1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x, err := p.Send(t.Context(), Call{Card: proxytest.Card(true, tt.iface), Extensions: tt.exts}, proxytest.Text(tt.say), false, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := artifactText(x.Task); got != tt.want {
				t.Errorf("agent saw %q, want %q", got, tt.want)
			}
		})
	}
}

// TestNoRedirects: an interface that redirects elsewhere does not get the
// proxy to call a URL the card does not declare.
func TestNoRedirects(t *testing.T) {
	p := New(Options{Client: proxytest.Loopback()})
	var called atomic.Bool
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { called.Store(true) }))
	defer elsewhere.Close()
	redirector := httptest.NewServer(http.RedirectHandler(elsewhere.URL, http.StatusTemporaryRedirect))
	defer redirector.Close()
	c := proxytest.Card(true, card.Interface{URL: redirector.URL, Binding: card.BindingJSONRPC, ProtocolVersion: "1.0"})
	if _, err := p.Send(t.Context(), Call{Card: c}, proxytest.Text("hi"), false, nil); !errors.Is(err, ErrAgent) && !errors.Is(err, ErrUnreachable) {
		t.Errorf("err = %v, want the redirect refused", err)
	}
	if called.Load() {
		t.Error("the proxy followed the redirect to an undeclared URL")
	}
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
