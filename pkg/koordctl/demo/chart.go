/*
Copyright 2026 The Koord Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package demo

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
	"time"
)

// Chart is a line chart over simulated time, rendered by SVG as a self-contained <svg> element.
type Chart struct {
	// Title is shown above the plot.
	Title string
	// YLabel names the values and their unit, e.g. "CPU utilization (%)".
	YLabel string
	// StartOfDay is the time of day at X = 0; the x axis shows the time of day.
	StartOfDay time.Duration
	// X are the sample times, counted from the scenario's start, ascending.
	X []time.Duration
	// Span is the length of the x axis (the scenario's duration); the last X when zero or shorter. The x
	// labels show the day when it is longer than a day.
	Span time.Duration
	// Series are the lines, each with one value per X.
	Series []Series
	// YMax, when above zero, is the least top of the y axis (e.g. 100 for percentages).
	YMax float64
	// Integer puts the y ticks on whole numbers, for counts.
	Integer bool
}

// Series is one line of a Chart.
type Series struct {
	// Name is shown in the legend.
	Name string
	// Values are the y values, one per X of the chart; NaN leaves a gap.
	Values []float64
	// Dashed draws the line dashed.
	Dashed bool
}

// Chart geometry, in SVG user units.
const (
	chartWidth  = 960
	plotHeight  = 240
	marginLeft  = 70
	marginRight = 24
	marginTop   = 40
	axisBand    = 48 // below the plot: tick labels and the x axis title
	legendRow   = 20
	// legendCharWidth is the width of a legend character, on the safe side for a 12px sans-serif font.
	legendCharWidth = 7
	// legendGap is the space between two legend entries.
	legendGap = 24
)

// palette are the series colours, distinguishable and readable on white.
var palette = []string{
	"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
	"#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939",
}

// esc escapes text for SVG content and attribute values.
func esc(s string) string { return template.HTMLEscapeString(s) }

// num formats a coordinate with at most one decimal.
func num(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) }

// SVG renders the chart: title, y axis with its label and grid, x axis with times of day, one polyline per
// series, and a legend below.
func (c *Chart) SVG() template.HTML {
	plotW := float64(chartWidth - marginLeft - marginRight)
	legend, rows := legendLayout(c.Series, plotW)
	height := marginTop + plotHeight + axisBand + rows*legendRow + 8

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s" font-family="sans-serif" font-size="12">`,
		chartWidth, height, chartWidth, height, esc(c.Title))
	fmt.Fprintf(&b, `<title>%s</title>`, esc(c.Title))
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="15" font-weight="bold">%s</text>`, marginLeft, esc(c.Title))

	x0, y0 := float64(marginLeft), float64(marginTop)
	axis := c.Span
	span := axis
	if len(c.X) > 0 {
		span = max(span, c.X[len(c.X)-1])
	}
	if span <= 0 {
		span = time.Hour
	}
	if axis <= 0 {
		axis = span
	}
	xOf := func(d time.Duration) float64 { return x0 + plotW*float64(d)/float64(span) }

	top := niceCeil(max(c.YMax, c.maxValue()))
	if c.Integer {
		top = niceCeilInt(max(c.YMax, c.maxValue()))
	}
	yOf := func(v float64) float64 { return y0 + plotHeight*(1-v/top) }

	// Y grid, ticks and label.
	step := top / 5
	for i := range 6 {
		v := step * float64(i)
		y := yOf(v)
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#e0e0e0"/>`, num(x0), num(y), num(x0+plotW), num(y))
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="end" dy="4">%s</text>`, num(x0-6), num(y), esc(formatTick(v, step)))
	}
	fmt.Fprintf(&b, `<text transform="translate(16 %s) rotate(-90)" text-anchor="middle">%s</text>`, num(y0+plotHeight/2), esc(c.YLabel))

	// X ticks at round times of day.
	tick := xTickStep(span)
	first := (tick - c.StartOfDay%tick) % tick
	for d := first; d <= span; d += tick {
		x := xOf(d)
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#f0f0f0"/>`, num(x), num(y0), num(x), num(y0+plotHeight))
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#333"/>`, num(x), num(y0+plotHeight), num(x), num(y0+plotHeight+4))
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle">%s</text>`, num(x), num(y0+plotHeight+17), esc(clockLabel(c.StartOfDay+d, axis)))
	}
	fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle">%s</text>`, num(x0+plotW/2), num(y0+plotHeight+36), "time of day (simulated)")
	// Axes.
	fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#333"/>`, num(x0), num(y0), num(x0), num(y0+plotHeight))
	fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#333"/>`, num(x0), num(y0+plotHeight), num(x0+plotW), num(y0+plotHeight))

	if len(c.X) == 0 {
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle" fill="#777">no samples</text>`, num(x0+plotW/2), num(y0+plotHeight/2))
	}
	for i, s := range c.Series {
		color := palette[i%len(palette)]
		dash := ""
		if s.Dashed {
			dash = ` stroke-dasharray="6 4"`
		}
		for _, seg := range segments(c.X, s.Values) {
			pts := make([]string, 0, len(seg))
			for _, k := range seg {
				pts = append(pts, num(xOf(c.X[k]))+","+num(yOf(s.Values[k])))
			}
			if len(seg) == 1 {
				fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="2.5" fill="%s"/>`, num(xOf(c.X[seg[0]])), num(yOf(s.Values[seg[0]])), color)
				continue
			}
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"><title>%s</title></polyline>`,
				color, dash, strings.Join(pts, " "), esc(s.Name))
		}
		// Legend entry.
		lx := x0 + legend[i].x
		ly := y0 + plotHeight + axisBand + float64(legend[i].row*legendRow)
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="3"%s/>`, num(lx), num(ly), num(lx+22), num(ly), color, dash)
		fmt.Fprintf(&b, `<text x="%s" y="%s" dy="4">%s</text>`, num(lx+28), num(ly), esc(s.Name))
	}
	b.WriteString(`</svg>`)
	// Every text above went through esc and every number through num.
	return template.HTML(b.String()) //nolint:gosec // built from escaped text only
}

// legendPos is where a legend entry goes: its x offset from the plot's left edge and its row.
type legendPos struct {
	x   float64
	row int
}

// legendLayout places the legend entries left to right, wrapping to a new row when an entry would pass width,
// and returns their positions and the number of rows.
func legendLayout(series []Series, width float64) ([]legendPos, int) {
	pos := make([]legendPos, len(series))
	x, row := 0.0, 0
	for i, s := range series {
		w := float64(28 + legendCharWidth*len([]rune(s.Name)) + legendGap)
		if x > 0 && x+w > width {
			x, row = 0, row+1
		}
		pos[i] = legendPos{x: x, row: row}
		x += w
	}
	if len(series) == 0 {
		return pos, 0
	}
	return pos, row + 1
}

// maxValue returns the largest finite value of the series, 0 when there is none.
func (c *Chart) maxValue() float64 {
	m := 0.0
	for _, s := range c.Series {
		for _, v := range s.Values {
			if !math.IsNaN(v) && !math.IsInf(v, 0) && v > m {
				m = v
			}
		}
	}
	return m
}

// segments returns the runs of indexes at which values has finite values (at most len(x) of them).
func segments(x []time.Duration, values []float64) [][]int {
	var segs [][]int
	var cur []int
	for k := range min(len(x), len(values)) {
		if math.IsNaN(values[k]) || math.IsInf(values[k], 0) {
			if len(cur) > 0 {
				segs = append(segs, cur)
				cur = nil
			}
			continue
		}
		cur = append(cur, k)
	}
	if len(cur) > 0 {
		segs = append(segs, cur)
	}
	return segs
}

// niceCeil returns a round number (five ticks of 1, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times a power of ten) at or above v, 1 for
// v <= 0.
func niceCeil(v float64) float64 {
	if !(v > 0) || math.IsInf(v, 0) {
		return 1
	}
	raw := v / 5
	pow := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10} {
		if step := m * pow; step*5 >= v*(1-1e-9) {
			return step * 5
		}
	}
	return 10 * pow * 5
}

// niceCeilInt returns five whole ticks (1, 2 or 5 times a power of ten each) reaching v, at least 5.
func niceCeilInt(v float64) float64 {
	step := 1.0
	for 5*step < v && !math.IsInf(v, 0) {
		switch {
		case isPowerOf10(step):
			step *= 2
		case isPowerOf10(step / 2):
			step = step / 2 * 5
		default:
			step *= 2
		}
	}
	return 5 * step
}

// isPowerOf10 reports whether v is 1, 10, 100, ...
func isPowerOf10(v float64) bool {
	l := math.Log10(v)
	return math.Abs(l-math.Round(l)) < 1e-9
}

// formatTick formats a y tick with as many decimals as the step needs.
func formatTick(v, step float64) string {
	decimals := 0
	for s := step; decimals < 3 && math.Abs(s-math.Round(s)) > 1e-9; s *= 10 {
		decimals++
	}
	return strconv.FormatFloat(v, 'f', decimals, 64)
}

// xTickStep returns the spacing of the x ticks for a span of simulated time: about 4 to 12 ticks at round
// hours.
func xTickStep(span time.Duration) time.Duration {
	for _, s := range []time.Duration{15 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour} {
		if span/s <= 12 {
			return s
		}
	}
	return 24 * time.Hour
}

// clockLabel formats a time of day ("14:00"), prefixed by the day ("d2 14:00") when the span covers more than
// a day.
func clockLabel(t, span time.Duration) string {
	day := int(t / (24 * time.Hour))
	tod := t % (24 * time.Hour)
	s := fmt.Sprintf("%02d:%02d", int(tod/time.Hour), int(tod%time.Hour/time.Minute))
	if span > 24*time.Hour {
		return fmt.Sprintf("d%d %s", day+1, s)
	}
	return s
}
