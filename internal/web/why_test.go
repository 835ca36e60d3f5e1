package web

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/a2aregistry/registry/internal/catalog"
)

// TestWhy: a search result's "why this result" is its own request, as a
// fragment for htmx and a page without script, in the caller's scope.
func TestWhy(t *testing.T) {
	f := newFixture(t, fixtureOptions{opts: Options{Authorizer: headerAuth{}, Principal: callerOf}})
	viewer := map[string]string{testCaller: "vic:viewer"}
	withHX := map[string]string{testCaller: "vic:viewer", hxRequest: "true"}
	page := f.get(t, "/?q=invoices", viewer).Body.String()
	m := regexp.MustCompile(`hx-get="(/agents/[^"/]+/why\?q=invoices)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no why link on the search page: %s", page)
	}
	why := m[1]
	for _, tc := range []struct {
		name, target string
		header       map[string]string
		wantStatus   int
		want         []string
		notWant      []string
	}{
		{"fragment", why, withHX, http.StatusOK, []string{"<code>invoic</code>", "— in name, "}, []string{"<html", "<h1>"}},
		{"page without script", why, viewer, http.StatusOK, []string{"<html", "<h1>", "<code>invoic</code>", `href="/?q=invoices"`}, nil},
		{"a related word names the word met", strings.Replace(why, "q=invoices", "q=bill", 1), withHX, http.StatusOK,
			[]string{"<code>bill</code>", "(a related word  <code>invoic</code>"}, nil},
		{"words it does not match", strings.Replace(why, "q=invoices", "q=zzzzqqq", 1), withHX, http.StatusOK,
			[]string{"no longer matches"}, nil},
		{"no words", strings.Replace(why, "q=invoices", "q=+", 1), viewer, http.StatusBadRequest, []string{"Nothing to explain"}, nil},
		{"text the search refuses", strings.Replace(why, "q=invoices", "q="+strings.Repeat("a", catalog.MaxQueryTextLen+1), 1), viewer,
			http.StatusBadRequest, []string{"Nothing to explain"}, nil},
		{"unknown agent", "/agents/no-such-agent/why?q=invoices", viewer, http.StatusNotFound, nil, nil},
	} {
		rec := f.get(t, tc.target, tc.header)
		body := rec.Body.String()
		if rec.Code != tc.wantStatus {
			t.Errorf("%s: status %d, want %d", tc.name, rec.Code, tc.wantStatus)
		}
		for _, w := range tc.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s: body lacks %q", tc.name, w)
			}
		}
		for _, w := range tc.notWant {
			if strings.Contains(body, w) {
				t.Errorf("%s: body has %q", tc.name, w)
			}
		}
	}
	// An agent the caller does not see is not found, whatever its words.
	id := strings.TrimSuffix(strings.TrimPrefix(why, "/agents/"), "/why?q=invoices")
	if _, err := f.store.SetListing(context.Background(), catalog.System("test"), catalog.ScopeAll, id,
		catalog.ListingChange{State: catalog.ListingPending, Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	if rec := f.get(t, why, withHX); rec.Code != http.StatusNotFound || strings.Contains(rec.Body.String(), "invoic") {
		t.Errorf("why of a hidden agent = %d %s, want 404 without its words", rec.Code, rec.Body)
	}
}

// TestComplete: the search box offers the tags and skill names of the
// agents the caller sees, as <datalist> options (htmx) or a page of
// links; a word only a hidden agent holds is never offered.
func TestComplete(t *testing.T) {
	f := newFixture(t, fixtureOptions{opts: Options{Authorizer: headerAuth{}, Principal: callerOf}})
	viewer := map[string]string{testCaller: "vic:viewer"}
	withHX := map[string]string{testCaller: "vic:viewer", hxRequest: "true"}
	hidden := f.upsert(t, "https://hidden.example/card.json", []byte(`{"name": "Hidden", "description": "d",
		"url": "https://hidden.example/a2a", "version": "1", "protocolVersion": "0.3.0", "capabilities": {},
		"defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
		"skills": [{"id": "s", "name": "Quokka census", "description": "d", "tags": ["quokkas"]}]}`), t0)
	admin := map[string]string{testCaller: "ada:admin", hxRequest: "true"}
	if body := f.get(t, "/complete?q=quok", admin).Body.String(); !strings.Contains(body, `<option value="quokkas">Tag · 1 agent</option>`) {
		t.Fatalf("an admin is not offered the tag: %s", body)
	}
	if _, err := f.store.SetListing(context.Background(), catalog.System("test"), catalog.ScopeAll, hidden,
		catalog.ListingChange{State: catalog.ListingPending, Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	if body := f.get(t, "/complete?q=quok", withHX).Body.String(); strings.Contains(body, "quokka") || strings.Contains(body, "Quokka") {
		t.Errorf("a viewer is offered a hidden agent's word: %s", body)
	}
	rec := f.get(t, "/complete?q=inv", withHX)
	if body := rec.Body.String(); rec.Code != http.StatusOK || !strings.Contains(body, `<option value="`) || strings.Contains(body, "<html") {
		t.Errorf("completion fragment = %d %s", rec.Code, body)
	}
	if body := f.get(t, "/complete?q=inv", viewer).Body.String(); !strings.Contains(body, "<html") || !strings.Contains(body, `<a href="/?tag=`) {
		t.Errorf("completion page without script lacks links: %s", body)
	}
	if page := f.get(t, "/", viewer).Body.String(); !strings.Contains(page, `list="q-completions"`) || !strings.Contains(page, `hx-get="/complete"`) {
		t.Error("the search box asks for no completions")
	}
	for _, bad := range []string{"/complete?q=" + strings.Repeat("a", catalog.MaxQueryTextLen+1), "/complete?q=%zz", "/complete?q=a;b", "/complete?q=%ff"} {
		if rec := f.get(t, bad, withHX); rec.Code != http.StatusOK {
			t.Errorf("%.40s = %d, want an empty answer", bad, rec.Code)
		}
	}
}
