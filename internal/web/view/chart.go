package view

import (
	"strconv"
	"strings"
)

// Chart is a line chart drawn as SVG on the server: no script, every
// label text the template escapes, a title and description for screen
// readers and the numbers again in a table.
type Chart struct {
	// ID makes the SVG's title and description ids unique on the page.
	ID, Title, Desc string
	// Width and Height are the drawing's viewBox.
	Width, Height int
	Series        []ChartSeries
	XLabels       []ChartLabel
	YTicks        []ChartLabel
	// Days are the table's rows, oldest first; Values[i][j] is series j
	// on day i.
	Days   []string
	Values [][]int
}

// ChartSeries is one line: Class picks its colour in the stylesheet.
type ChartSeries struct {
	Name, Class string
	// Points is the polyline's points attribute; one point draws a dot.
	Points string
	// Dot is the one point of a one-day series.
	Dot  *ChartLabel
	Last int
}

// ChartLabel is a piece of text at a position of the drawing.
type ChartLabel struct {
	X, Y int
	Text string
}

// SeriesInput is one line of a chart before it is laid out.
type SeriesInput struct {
	Name, Class string
	Values      []int
}

// Layout of a chart, in viewBox units.
const (
	chartWidth, chartHeight = 640, 220
	chartLeft, chartRight   = 48, 12
	chartTop, chartBottom   = 12, 28
)

// NewChart lays out series over days (YYYY-MM-DD, oldest first; every
// series has one value per day): the y axis from 0 to a round maximum
// with five ticks, the x axis labelled at its ends and middle.
func NewChart(id, title, desc string, days []string, series ...SeriesInput) Chart {
	c := Chart{ID: id, Title: title, Desc: desc, Width: chartWidth, Height: chartHeight, Days: days}
	peak := 0
	for _, s := range series {
		for _, v := range s.Values {
			peak = max(peak, v)
		}
	}
	top := niceCeil(peak)
	plotW, plotH := chartWidth-chartLeft-chartRight, chartHeight-chartTop-chartBottom
	x := func(i int) int {
		if len(days) <= 1 {
			return chartLeft + plotW/2
		}
		return chartLeft + i*plotW/(len(days)-1)
	}
	y := func(v int) int { return chartTop + plotH - v*plotH/top }
	for k := 0; k <= 4; k++ {
		v := top * k / 4
		c.YTicks = append(c.YTicks, ChartLabel{X: chartLeft - 6, Y: y(v), Text: strconv.Itoa(v)})
	}
	if len(days) > 0 {
		for _, i := range uniqueInts(0, (len(days)-1)/2, len(days)-1) {
			c.XLabels = append(c.XLabels, ChartLabel{X: x(i), Y: chartHeight - 8, Text: days[i]})
		}
	}
	c.Values = make([][]int, len(days))
	for i := range days {
		c.Values[i] = make([]int, len(series))
	}
	for j, s := range series {
		cs := ChartSeries{Name: s.Name, Class: s.Class}
		var pts []string
		for i, v := range s.Values {
			if i >= len(days) {
				break
			}
			c.Values[i][j] = v
			pts = append(pts, strconv.Itoa(x(i))+","+strconv.Itoa(y(v)))
			cs.Last = v
		}
		if len(pts) == 1 {
			cs.Dot = &ChartLabel{X: x(0), Y: y(s.Values[0])}
		}
		cs.Points = strings.Join(pts, " ")
		c.Series = append(c.Series, cs)
	}
	return c
}

// niceCeil is the smallest of 1, 2, 4, 5 or 8 times a power of ten, at
// least 4, that is at least v: a round top for the y axis.
func niceCeil(v int) int {
	if v <= 4 {
		return 4
	}
	for p := 1; ; p *= 10 {
		for _, m := range []int{1, 2, 4, 5, 8} {
			if n := m * p; n >= v {
				return n
			}
		}
	}
}

func uniqueInts(vs ...int) []int {
	var out []int
	for _, v := range vs {
		if len(out) == 0 || out[len(out)-1] != v {
			out = append(out, v)
		}
	}
	return out
}
