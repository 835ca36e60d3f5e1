package api

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/catalog"
)

// feed has a gap (4) and every kind, as a real feed may.
func feed() []catalog.Change {
	at := func(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }
	return []catalog.Change{
		{Seq: 1, Kind: catalog.ChangeCreated, AgentID: "a1", CardURL: "https://agent.example/.well-known/agent-card.json", Version: 1, At: at(1)},
		{Seq: 2, Kind: catalog.ChangeCreated, AgentID: "sparse", CardURL: "http://old.example/.well-known/agent.json", Version: 1, At: at(2)},
		{Seq: 3, Kind: catalog.ChangeUpdated, AgentID: "a1", CardURL: "https://agent.example/.well-known/agent-card.json", Version: 2, At: at(3)},
		{Seq: 5, Kind: catalog.ChangeRemoved, AgentID: "sparse", CardURL: "http://old.example/.well-known/agent.json", Version: 1, At: at(4)},
	}
}

func wantChanges(since int64, limit int, seqs []int64, next int64) func(*testing.T, *httptest.ResponseRecorder, *fakeCatalog, *fakeRegistrar) {
	return func(t *testing.T, rec *httptest.ResponseRecorder, cat *fakeCatalog, _ *fakeRegistrar) {
		t.Helper()
		if cat.changesCall == nil || *cat.changesCall != (changesCall{since: since, limit: limit}) {
			t.Errorf("catalog asked for %+v, want since %d limit %d", cat.changesCall, since, limit)
		}
		l := decodeJSON[ChangeList](t, rec)
		got := []int64{}
		for _, c := range l.Items {
			got = append(got, c.Seq)
		}
		if !reflect.DeepEqual(got, seqs) || l.NextSince != next {
			t.Errorf("items %v next_since %d, want %v and %d", got, l.NextSince, seqs, next)
		}
		if !strings.Contains(rec.Body.String(), `"items":[`) {
			t.Errorf("items is not an array: %s", rec.Body)
		}
	}
}

func wantNoFeedRead(t *testing.T, _ *httptest.ResponseRecorder, cat *fakeCatalog, _ *fakeRegistrar) {
	t.Helper()
	if cat.changesCall != nil {
		t.Errorf("invalid request reached the catalog: %+v", cat.changesCall)
	}
}

func TestChanges(t *testing.T) {
	withFeed := func(c *fakeCatalog, _ *fakeRegistrar) { c.changes = feed() }
	bad := func(name, target string) apiCase {
		return apiCase{name: name, target: target, setup: withFeed, wantStatus: http.StatusBadRequest,
			wantCode: CodeInvalidParameter, check: wantNoFeedRead}
	}
	runCases(t, []apiCase{
		{name: "defaults on an empty feed", target: "/api/v1/changes", wantStatus: http.StatusOK,
			check: wantChanges(0, defaultChangesLimit, []int64{}, 0)},
		{name: "whole feed", target: "/api/v1/changes", setup: withFeed, wantStatus: http.StatusOK,
			check: wantChanges(0, defaultChangesLimit, []int64{1, 2, 3, 5}, 5)},
		{name: "page after since", target: "/api/v1/changes?since=1&limit=2", setup: withFeed, wantStatus: http.StatusOK,
			check: wantChanges(1, 2, []int64{2, 3}, 3)},
		{name: "over a gap", target: "/api/v1/changes?since=3", setup: withFeed, wantStatus: http.StatusOK,
			check: wantChanges(3, defaultChangesLimit, []int64{5}, 5)},
		{name: "caught up keeps since", target: "/api/v1/changes?since=5", setup: withFeed, wantStatus: http.StatusOK,
			check: wantChanges(5, defaultChangesLimit, []int64{}, 5)},
		{name: "since beyond the feed keeps since", target: "/api/v1/changes?since=9223372036854775807", setup: withFeed,
			wantStatus: http.StatusOK, check: wantChanges(1<<63-1, defaultChangesLimit, []int64{}, 1<<63-1)},
		{name: "leading zeros", target: "/api/v1/changes?since=0002&limit=0001", setup: withFeed, wantStatus: http.StatusOK,
			check: wantChanges(2, 1, []int64{3}, 3)},
		{name: "maximum limit", target: "/api/v1/changes?limit=1000", setup: withFeed, wantStatus: http.StatusOK,
			check: wantChanges(0, maxChangesLimit, []int64{1, 2, 3, 5}, 5)},
		{name: "store answering out of order never moves the cursor back", target: "/api/v1/changes?since=1",
			setup: func(c *fakeCatalog, _ *fakeRegistrar) {
				f := feed()
				c.changes = []catalog.Change{f[2], f[1]}
			},
			wantStatus: http.StatusOK, check: wantChanges(1, defaultChangesLimit, []int64{3, 2}, 3)},
		bad("negative since", "/api/v1/changes?since=-1"),
		bad("signed since", "/api/v1/changes?since=%2B1"),
		bad("fractional since", "/api/v1/changes?since=1.5"),
		bad("hex since", "/api/v1/changes?since=0x10"),
		bad("empty since", "/api/v1/changes?since="),
		bad("since above int64", "/api/v1/changes?since=9223372036854775808"),
		bad("since of 20 digits", "/api/v1/changes?since=00000000000000000001"),
		bad("since not a number", "/api/v1/changes?since=latest"),
		bad("repeated since", "/api/v1/changes?since=1&since=2"),
		bad("limit zero", "/api/v1/changes?limit=0"),
		bad("limit over max", "/api/v1/changes?limit=1001"),
		bad("limit empty", "/api/v1/changes?limit="),
		bad("limit signed", "/api/v1/changes?limit=%2B5"),
		bad("limit overflows int", "/api/v1/changes?limit=99999999999999999999"),
		bad("unknown parameter", "/api/v1/changes?cursor=abc"),
		bad("misspelled since", "/api/v1/changes?since_seq=4"),
		bad("malformed query string", "/api/v1/changes?since=%zz"),
		{name: "catalog failure is internal", target: "/api/v1/changes?since=1",
			setup: func(c *fakeCatalog, _ *fakeRegistrar) {
				c.changesErr = errors.New("SELECT seq FROM changes: disk I/O error")
			},
			wantStatus: http.StatusInternalServerError, wantCode: CodeInternal,
			check: func(t *testing.T, rec *httptest.ResponseRecorder, _ *fakeCatalog, _ *fakeRegistrar) {
				if strings.Contains(rec.Body.String(), "SELECT") {
					t.Errorf("internal detail leaked: %s", rec.Body)
				}
			}},
		{name: "POST not allowed", method: http.MethodPost, target: "/api/v1/changes",
			wantStatus: http.StatusMethodNotAllowed, wantCode: CodeMethodNotAllowed},
	}, nil)
}

func TestChangesErrorNamesParameter(t *testing.T) {
	for target, want := range map[string]string{
		"/api/v1/changes?since=-1":        paramSince,
		"/api/v1/changes?since=1&since=1": paramSince,
		"/api/v1/changes?limit=0":         paramLimit,
		"/api/v1/changes?sinc=1":          "sinc",
	} {
		env := newTestEnv(t, nil)
		rec := env.do(t, http.MethodGet, target, "", nil)
		if e := decodeError(t, rec); e.Parameter != want {
			t.Errorf("%s: parameter = %q, want %q", target, e.Parameter, want)
		}
	}
}
