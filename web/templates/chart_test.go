package templates

import (
	"context"
	"encoding/xml"
	"io"
	"strings"
	"testing"

	"github.com/a2aregistry/registry/internal/web/view"
)

// TestChartEscapes: every text of a chart — its id, title, description,
// series names, day labels — is escaped in the SVG, its accessible name
// and its table, and the drawing is well-formed XML.
func TestChartEscapes(t *testing.T) {
	const hostile = `"><script>alert(1)</script><text x="0`
	c := view.NewChart(`c"><svg onload=alert(1)>`, hostile, "desc "+hostile,
		[]string{"2026-11-25", hostile, "2026-11-27"},
		view.SeriesInput{Name: hostile, Class: `series-1" onmouseover="alert(1)`, Values: []int{1, 5, 3}},
		view.SeriesInput{Name: "one", Class: "series-2", Values: []int{0, 2, 7}})
	var b strings.Builder
	if err := chart(c).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, bad := range []string{"<script", "<svg onload", `onmouseover="alert`, `<text x="0"`} {
		if strings.Contains(out, bad) {
			t.Errorf("chart output holds %q unescaped", bad)
		}
	}
	for _, want := range []string{`role="img"`, "<title id=", "<desc id=", "&lt;script&gt;alert(1)&lt;/script&gt;", "<polyline"} {
		if !strings.Contains(out, want) {
			t.Errorf("chart output lacks %s", want)
		}
	}
	start, end := strings.Index(out, "<svg"), strings.Index(out, "</svg>")
	if start < 0 || end < 0 {
		t.Fatal("no svg element")
	}
	d := xml.NewDecoder(strings.NewReader(out[start : end+len("</svg>")]))
	for {
		if _, err := d.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v", err)
		}
	}
}

// TestChartOneDay: a history of one day draws a dot, not an empty line.
func TestChartOneDay(t *testing.T) {
	c := view.NewChart("c", "t", "d", []string{"2026-11-27"}, view.SeriesInput{Name: "agents", Class: "series-1", Values: []int{12}})
	var b strings.Builder
	if err := chart(c).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "<circle") || strings.Contains(out, "<polyline") {
		t.Errorf("one day drawn as %s", out)
	}
}
