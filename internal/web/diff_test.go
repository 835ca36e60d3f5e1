package web

import (
	"slices"
	"strings"
	"testing"

	"github.com/a2aregistry/registry/internal/web/view"
)

func TestPrettyJSON(t *testing.T) {
	tests := []struct {
		name, raw, want string
	}{
		{name: "keys sorted, indented", raw: `{"b":1,"a":{"d":[1,2],"c":null}}`,
			want: "{\n  \"a\": {\n    \"c\": null,\n    \"d\": [\n      1,\n      2\n    ]\n  },\n  \"b\": 1\n}"},
		{name: "numbers keep their text", raw: `{"n":1.50,"big":12345678901234567890}`,
			want: "{\n  \"big\": 12345678901234567890,\n  \"n\": 1.50\n}"},
		{name: "markup stays as written", raw: `{"d":"<b>&</b>"}`, want: "{\n  \"d\": \"<b>&</b>\"\n}"},
		{name: "not JSON shown as is", raw: `{"a":`, want: `{"a":`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := prettyJSON([]byte(tt.raw)); got != tt.want {
				t.Errorf("prettyJSON(%s) =\n%s\nwant\n%s", tt.raw, got, tt.want)
			}
		})
	}
}

// row is a compact form of a DiffRow for comparisons.
type row struct {
	kind        view.DiffKind
	left, right string
	skipped     int
}

func rowsOf(rs []view.DiffRow) []row {
	out := make([]row, len(rs))
	for i, r := range rs {
		out[i] = row{r.Kind, r.Left, r.Right, r.Skipped}
	}
	return out
}

func lines(n int, prefix string) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(prefix)
		b.WriteByte(byte('a' + i))
		b.WriteByte('\n')
	}
	return b.String()
}

func TestSideBySide(t *testing.T) {
	tests := []struct {
		name        string
		left, right string
		want        []row
		wantSame    bool
	}{
		{name: "identical", left: "a\nb\n", right: "a\nb\n", wantSame: true,
			want: []row{{view.DiffSame, "a", "a", 0}, {view.DiffSame, "b", "b", 0}}},
		{name: "changed line paired", left: "a\nold\nc\n", right: "a\nnew\nc\n",
			want: []row{{view.DiffSame, "a", "a", 0}, {view.DiffChanged, "old", "new", 0}, {view.DiffSame, "c", "c", 0}}},
		{name: "added and removed", left: "a\nb\n", right: "b\nc\n",
			want: []row{{view.DiffRemoved, "a", "", 0}, {view.DiffSame, "b", "b", 0}, {view.DiffAdded, "", "c", 0}}},
		{name: "more removed than added", left: "x\ny\nz\n", right: "w\n",
			want: []row{{view.DiffChanged, "x", "w", 0}, {view.DiffRemoved, "y", "", 0}, {view.DiffRemoved, "z", "", 0}}},
		{name: "long unchanged runs fold", left: lines(10, "s") + "old\n" + lines(10, "t"), right: lines(10, "s") + "new\n" + lines(10, "t"),
			want: []row{
				{view.DiffSkip, "", "", 7},
				{view.DiffSame, "sh", "sh", 0}, {view.DiffSame, "si", "si", 0}, {view.DiffSame, "sj", "sj", 0},
				{view.DiffChanged, "old", "new", 0},
				{view.DiffSame, "ta", "ta", 0}, {view.DiffSame, "tb", "tb", 0}, {view.DiffSame, "tc", "tc", 0},
				{view.DiffSkip, "", "", 7},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows, same := sideBySide(tt.left, tt.right)
			if same != tt.wantSame {
				t.Errorf("same = %v, want %v", same, tt.wantSame)
			}
			if tt.wantSame {
				// Identical texts fold to nothing but skips; only same matters.
				return
			}
			if got := rowsOf(rows); !slices.Equal(got, tt.want) {
				t.Errorf("rows =\n%v\nwant\n%v", got, tt.want)
			}
		})
	}
}

// TestSideBySideLineNumbers: every line of both texts is numbered once, in
// order, whatever the rows fold.
func TestSideBySideLineNumbers(t *testing.T) {
	left := lines(5, "l") + "x\n" + lines(5, "m")
	right := "new\n" + lines(5, "l") + lines(5, "m") + "end\n"
	rows, _ := sideBySide(left, right)
	nl, nr := 0, 0
	for _, r := range rows {
		switch {
		case r.Kind == view.DiffSkip:
			if r.LeftNo != nl+1 || r.RightNo != nr+1 {
				t.Fatalf("skip row starts at %d/%d, want %d/%d", r.LeftNo, r.RightNo, nl+1, nr+1)
			}
			nl += r.Skipped
			nr += r.Skipped
			continue
		}
		if r.LeftNo != 0 {
			if r.LeftNo != nl+1 {
				t.Fatalf("left line %d after %d", r.LeftNo, nl)
			}
			nl++
		}
		if r.RightNo != 0 {
			if r.RightNo != nr+1 {
				t.Fatalf("right line %d after %d", r.RightNo, nr)
			}
			nr++
		}
	}
	if nl != 11 || nr != 12 {
		t.Errorf("numbered %d left and %d right lines, want 11 and 12", nl, nr)
	}
}
