package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/sergi/go-diff/diffmatchpatch"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/web/view"
)

// diffContext is how many unchanged lines a diff shows around a change;
// longer unchanged runs fold into one row.
const diffContext = 3

// versionDiff compares the versions named by the from and to parameters;
// by default the one before the current and the current.
func (h *Console) versionDiff(c echo.Context, a view.Agent) view.Diff {
	d := diffForm(a)
	d.Shown = true
	if s := c.QueryParam("from"); s != "" {
		d.From = versionNumber(s)
	}
	if s := c.QueryParam("to"); s != "" {
		d.To = versionNumber(s)
	}
	ctx := c.Request().Context()
	from, err := h.opts.Agents.Version(ctx, h.scope(c), a.ID, d.From)
	if err == nil {
		var to catalog.Version
		to, err = h.opts.Agents.Version(ctx, h.scope(c), a.ID, d.To)
		if err == nil {
			d.Rows, d.Same = sideBySide(prettyJSON(from.Raw)+"\n", prettyJSON(to.Raw)+"\n")
			return d
		}
	}
	if !errors.Is(err, catalog.ErrNotFound) {
		h.log.ErrorContext(ctx, "console diff failed", "agent_id", a.ID, "err", err)
		d.Error = "The registry could not load these versions."
		return d
	}
	d.Error = fmt.Sprintf("Pick two of the stored versions (1 to %d).", a.Current)
	if a.Current < 2 {
		d.Error = "This agent has only one version so far: there is nothing to compare."
	}
	return d
}

// diffForm is the comparison form of an agent's page, set to compare the
// version before the current one with the current one.
func diffForm(a view.Agent) view.Diff {
	return view.Diff{To: a.Current, From: max(a.Current-1, 1), Versions: a.Versions, Action: a.URL + "/diff"}
}

// versionNumber reads a version parameter; 0 (which no version has) when
// it is not a positive number.
func versionNumber(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0
	}
	return n
}

// prettyJSON indents a card with sorted object keys (encoding/json sorts
// map keys), so two versions that differ only in key order or spacing
// compare equal and a real change shows up on its own lines. Numbers
// keep their exact text, and <, > and & stay as written: a reader audits
// what the card says. Bytes that are not JSON are shown as they are.
func prettyJSON(raw []byte) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return string(raw)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return string(raw)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// sideBySide diffs two texts line by line (diff-match-patch over lines)
// and pairs removed with added lines into changed rows; unchanged runs
// longer than the context around them fold into skip rows. same reports
// that the texts are equal.
func sideBySide(left, right string) (rows []view.DiffRow, same bool) {
	dmp := diffmatchpatch.New()
	a, b, lines := dmp.DiffLinesToChars(left, right)
	diffs := dmp.DiffCharsToLines(dmp.DiffMain(a, b, false), lines)

	var all []view.DiffRow
	ln, rn := 0, 0
	var removed []string
	flush := func(added []string) {
		for i := 0; i < max(len(removed), len(added)); i++ {
			r := view.DiffRow{Kind: view.DiffChanged}
			if i < len(removed) {
				ln++
				r.LeftNo, r.Left = ln, removed[i]
			} else {
				r.Kind = view.DiffAdded
			}
			if i < len(added) {
				rn++
				r.RightNo, r.Right = rn, added[i]
			} else {
				r.Kind = view.DiffRemoved
			}
			all = append(all, r)
		}
		removed = nil
	}
	same = true
	for _, d := range diffs {
		ls := splitLines(d.Text)
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			same = false
			removed = append(removed, ls...)
		case diffmatchpatch.DiffInsert:
			same = false
			flush(ls)
		case diffmatchpatch.DiffEqual:
			flush(nil)
			for _, l := range ls {
				ln++
				rn++
				all = append(all, view.DiffRow{Kind: view.DiffSame, LeftNo: ln, RightNo: rn, Left: l, Right: l})
			}
		}
	}
	flush(nil)
	return fold(all), same
}

// splitLines splits diff text into lines without their newlines.
func splitLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// fold replaces unchanged lines farther than diffContext from any change
// with one skip row per run.
func fold(rows []view.DiffRow) []view.DiffRow {
	near := make([]bool, len(rows))
	for i, r := range rows {
		if r.Kind == view.DiffSame {
			continue
		}
		for j := max(0, i-diffContext); j <= min(len(rows)-1, i+diffContext); j++ {
			near[j] = true
		}
	}
	var out []view.DiffRow
	for i := 0; i < len(rows); {
		if rows[i].Kind != view.DiffSame || near[i] {
			out = append(out, rows[i])
			i++
			continue
		}
		j := i
		for j < len(rows) && rows[j].Kind == view.DiffSame && !near[j] {
			j++
		}
		out = append(out, view.DiffRow{Kind: view.DiffSkip, Skipped: j - i, LeftNo: rows[i].LeftNo, RightNo: rows[i].RightNo})
		i = j
	}
	return out
}
