package query

import (
	"errors"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/catalog"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name      string
		raw       string
		want      Request
		wantParam string // "" with wantErr: the request as a whole
		wantErr   bool
		cursorErr bool
	}{
		{name: "defaults", raw: "", want: Request{Limit: catalog.DefaultLimit}},
		{name: "text, limit, cursor, filters", raw: "q=invoice+pdf&limit=5&cursor=abc&tag=a&tag=b&health=up",
			want: Request{Text: "invoice pdf", Limit: 5, Cursor: "abc", Filters: map[string][]string{"tag": {"a", "b"}, "health": {"up"}}}},
		{name: "explain", raw: "q=x&explain=true", want: Request{Text: "x", Limit: catalog.DefaultLimit, Explain: true}},
		{name: "explain false", raw: "explain=false", want: Request{Limit: catalog.DefaultLimit}},
		{name: "explain not a boolean", raw: "explain=yes", wantErr: true, wantParam: "explain"},
		{name: "unknown parameter", raw: "tags=x", wantErr: true, wantParam: "tags"},
		{name: "repeated text", raw: "q=a&q=b", wantErr: true, wantParam: "q"},
		{name: "limit zero", raw: "limit=0", wantErr: true, wantParam: "limit"},
		{name: "limit signed", raw: "limit=%2B5", wantErr: true, wantParam: "limit"},
		{name: "text too long", raw: "q=" + strings.Repeat("x", catalog.MaxQueryTextLen+1), wantErr: true, wantParam: "q"},
		{name: "empty filter value", raw: "tag=", wantErr: true, wantParam: "tag"},
		{name: "too many values", raw: strings.Repeat("tag=x&", MaxFilterValues+1), wantErr: true, wantParam: "tag"},
		{name: "unknown enum value", raw: "signature=trusted", wantErr: true, wantParam: "signature"},
		{name: "publisher written as the index holds it", raw: "publisher=Agents.B%C3%BCcher.de&publisher_verified=true",
			want: Request{Limit: catalog.DefaultLimit, Filters: map[string][]string{"publisher": {"xn--bcher-kva.de"}, "publisher_verified": {"true"}}}},
		{name: "publisher not a host", raw: "publisher=acme.co.uk%2Fpath", wantErr: true, wantParam: "publisher"},
		{name: "publisher_verified not a boolean", raw: "publisher_verified=yes", wantErr: true, wantParam: "publisher_verified"},
		{name: "malformed label", raw: "label=BAD KEY", wantErr: true, wantParam: "label"},
		{name: "oversized cursor is an invalid cursor", raw: "cursor=" + strings.Repeat("c", MaxCursorLen+1),
			wantErr: true, wantParam: "cursor", cursorErr: true},
		{name: "malformed query string", raw: "q=%zz", wantErr: true},
		{name: "key changes since a day", raw: "key_changed_since=2026-10-28",
			want: Request{Limit: catalog.DefaultLimit, KeyChangedSince: time.Date(2026, 10, 28, 0, 0, 0, 0, time.UTC)}},
		{name: "key changes since no day", raw: "key_changed_since=2026-13-01", wantErr: true, wantParam: "key_changed_since"},
		{name: "key changes since twice", raw: "key_changed_since=2026-10-28&key_changed_since=2026-10-29", wantErr: true, wantParam: "key_changed_since"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseString(tc.raw)
			if !tc.wantErr {
				if err != nil || !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("ParseString(%q) = %+v, %v; want %+v", tc.raw, got, err, tc.want)
				}
				return
			}
			var qe *Error
			if !errors.As(err, &qe) {
				t.Fatalf("ParseString(%q) error = %v, want *Error", tc.raw, err)
			}
			if qe.Parameter != tc.wantParam || qe.Message == "" {
				t.Errorf("error names %q (%q), want %q", qe.Parameter, qe.Message, tc.wantParam)
			}
			if errors.Is(err, catalog.ErrInvalidCursor) != tc.cursorErr {
				t.Errorf("errors.Is(ErrInvalidCursor) = %v, want %v", !tc.cursorErr, tc.cursorErr)
			}
		})
	}
}

func TestRequestQueryCarriesScope(t *testing.T) {
	r, err := Parse(url.Values{"q": {"x"}, "tag": {"t"}, "explain": {"true"}})
	if err != nil {
		t.Fatal(err)
	}
	sc := catalog.Scope{Groups: []string{"g"}}
	q := r.Query(sc)
	if q.Text != "x" || q.Filters["tag"][0] != "t" || q.Limit != catalog.DefaultLimit || !reflect.DeepEqual(q.Scope, sc) || !q.Explain {
		t.Errorf("Query = %+v", q)
	}
}

// key_changed_since becomes the days from that day to today.
func TestRequestQueryKeyChangedSince(t *testing.T) {
	since := time.Now().UTC().AddDate(0, 0, -2)
	r, err := ParseString("key_changed_since=" + since.Format(time.DateOnly))
	if err != nil {
		t.Fatal(err)
	}
	q := r.Query(catalog.Scope{})
	if len(q.AnyOf) != 1 || q.AnyOf[0].Field != catalog.FilterKeyChangedDay || len(q.AnyOf[0].Values) != 3 ||
		q.AnyOf[0].Values[0] != since.Format(time.DateOnly) {
		t.Errorf("Query.AnyOf = %+v", q.AnyOf)
	}
	if q := (Request{}).Query(catalog.Scope{}); q.AnyOf != nil {
		t.Errorf("without the parameter AnyOf = %+v", q.AnyOf)
	}
}
