package sse

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestAccepts(t *testing.T) {
	for _, tc := range []struct {
		accept string
		want   bool
	}{
		{"text/event-stream", true},
		{"application/json, text/event-stream;q=0.9", true},
		{" TEXT/EVENT-STREAM ", true},
		{"application/json", false},
		{"text/*", false},
		{"", false},
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Accept", tc.accept)
		if got := Accepts(r); got != tc.want {
			t.Errorf("Accepts(%q) = %v, want %v", tc.accept, got, tc.want)
		}
	}
}

func TestStreamFraming(t *testing.T) {
	rec := httptest.NewRecorder()
	s := Start(rec, time.Second)
	s.Send("event", "<p>one\r\ntwo</p>")
	s.SendJSON("done", map[string]int{"n": 1})
	if got := rec.Header().Get("Content-Type"); got != ContentType {
		t.Errorf("Content-Type = %q", got)
	}
	if got := rec.Header().Get("Cache-Control"); got != "no-store" {
		t.Errorf("Cache-Control = %q", got)
	}
	want := "event: event\nid: 1\ndata: <p>one\ndata: two</p>\n\n" +
		"event: done\nid: 2\ndata: {\"n\":1}\n\n"
	if got := rec.Body.String(); got != want {
		t.Errorf("body = %q\nwant %q", got, want)
	}
	if !rec.Flushed {
		t.Error("events were not flushed")
	}
}
