package auth

import (
	"reflect"
	"testing"

	"github.com/a2aregistry/registry/internal/catalog"
)

func TestScopeOf(t *testing.T) {
	groups := []string{"finance"}
	for _, tc := range []struct {
		name string
		p    Principal
		want catalog.Scope
	}{
		{"development mode sees all", devPrincipal, catalog.ScopeAll},
		{"admin sees all", Principal{Role: Admin, Source: SourceSession, Groups: groups}, catalog.ScopeAll},
		{"editor reviews within their groups", Principal{Role: Editor, Source: SourceBearer, Groups: groups},
			catalog.Scope{Review: true, Groups: groups}},
		{"tester sees listed agents of their groups", Principal{Role: Tester, Source: SourceSession, Groups: groups},
			catalog.Scope{Groups: groups}},
		{"anonymous sees open listed agents", Principal{Role: Viewer}, catalog.Scope{}},
	} {
		if got := ScopeOf(tc.p); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: ScopeOf = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestActorOf(t *testing.T) {
	req := catalog.Request{ID: "req-1", ClientAddr: "192.0.2.7"}
	for _, tc := range []struct {
		name string
		p    Principal
		want catalog.Actor
	}{
		{"signed-in user by subject", Principal{Subject: "u1", Email: "a@b.example", Name: "Ann", Role: Editor, Source: SourceSession},
			catalog.User("u1").For(catalog.Request{Email: "a@b.example", DisplayName: "Ann", Role: "editor", ID: "req-1", ClientAddr: "192.0.2.7"})},
		{"bearer user by subject", Principal{Subject: "svc", Role: Tester, Source: SourceBearer},
			catalog.User("svc").For(catalog.Request{Role: "tester", ID: "req-1", ClientAddr: "192.0.2.7"})},
		{"development mode is the local admin", devPrincipal,
			catalog.System("local-admin").For(catalog.Request{DisplayName: "local user", Role: "admin", ID: "req-1", ClientAddr: "192.0.2.7"})},
		{"anonymous without a role", Principal{},
			catalog.System("anonymous").For(req)},
	} {
		if got := ActorOf(tc.p, req); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: ActorOf = %+v (%+v), want %+v (%+v)", tc.name, got, got.Request, tc.want, tc.want.Request)
		}
	}
}
