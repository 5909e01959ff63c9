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
	"encoding/csv"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// testReport is a report of three samples on two nodes, the second node without batch resources at first.
func testReport(t *testing.T) *Report {
	t.Helper()
	s, err := Load([]byte(validScenario))
	if err != nil {
		t.Fatal(err)
	}
	s.Name = `day <b>"&"</b>`
	s.Description = `LS & BE <script>alert(1)</script>`
	return &Report{
		Scenario: s,
		Source:   []byte(validScenario),
		Nodes:    []string{"kwok-node-0", "kwok-node-1"},
		Samples: []Sample{
			{Elapsed: 0, Nodes: 2, CPUCapacity: 64, NodeCPU: 16, LSCPU: 12.8, BECPU: 0, BatchCPU: []float64{10, math.NaN()}, NodeUtil: []float64{80, 20}, LSRunning: 6},
			{Elapsed: 10 * time.Minute, Nodes: 2, CPUCapacity: 64, NodeCPU: 32, LSCPU: 12.8, BECPU: 16, BEDemandCPU: 18, BatchCPU: []float64{10, 12}, NodeUtil: []float64{70, 30}, Migrations: 2, LSRunning: 6, BERunning: 6, BEPending: 2, Suppressed: 120, Evictions: 1},
			{Elapsed: 20 * time.Minute, Nodes: 2, CPUCapacity: 64, NodeCPU: 24, LSCPU: 16, BECPU: 4.8, BEDemandCPU: 4.8, BatchCPU: []float64{6, 7.5}, NodeUtil: []float64{60, 40}, Migrations: 3, MigrationsSucceeded: 2, MigrationsFailed: 1, LSRunning: 6, BERunning: 2, BECompleted: 6, LSBreaches: 60},
		},
		Started: time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC),
		Wall:    2 * time.Minute,
	}
}

func TestSummarize(t *testing.T) {
	r := testReport(t)
	want := Summary{
		Samples: 3, Simulated: 20 * time.Minute,
		AvgUtilWith: (25 + 50 + 37.5) / 3, AvgUtilWithout: (25.0 + 25 + 30) / 3,
		PeakUtilWith: 50, PeakUtilWithout: 30,
		Gain: (25 + 50 + 37.5 - 25 - 25 - 30) / 3,
		// Each sample stands for the 10 minutes to the next, the last for the 10 minutes since the previous.
		BECPUHours:    (0 + 16 + 4.8) / 6,
		AvgBatchCPU:   (10 + 22 + 13.5) / 3,
		BatchCPUHours: (10 + 22 + 13.5) / 6,
		BECompleted:   6, PeakBERunning: 6, PeakBEPending: 2,
		SuppressedMoments: 120, Evictions: 1, LSBreaches: 60,
		// 80/20 around a mean of 50, then 60/40.
		FirstHottest: 80, LastHottest: 60, FirstSpread: 30, LastSpread: 10,
		Migrations: 3, MigrationsSucceeded: 2, MigrationsFailed: 1,
	}
	if diff := cmp.Diff(want, Summarize(r.Samples), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("Summarize (-want,+got):\n%s", diff)
	}
	empty := Summarize(nil)
	if empty.Samples != 0 || empty.BECompleted != 0 {
		t.Errorf("Summarize(nil) = %+v, want zero counts", empty)
	}
}

// TestSummarizeMid: the mid tier's CPU offered and used, its pods, and its share of the gain. Two samples 30
// minutes apart, each standing for 30 minutes.
func TestSummarizeMid(t *testing.T) {
	samples := []Sample{
		{Elapsed: 0, CPUCapacity: 64, NodeCPU: 16, LSCPU: 12.8, MidCPU: []float64{0, math.NaN()}, MidPending: 4},
		// Mid pods use 6.4 cores of the 9 offered: 10 % of the capacity, out of the cluster's 40 %.
		{Elapsed: 30 * time.Minute, CPUCapacity: 64, NodeCPU: 25.6, LSCPU: 19.2, MidUsedCPU: 6.4, MidCPU: []float64{5, 4}, MidRunning: 4, MidCompleted: 1},
	}
	got := Summarize(samples)
	want := Summary{
		Samples: 2, Simulated: 30 * time.Minute,
		// With: 25 % and 40 %; without (prod + system): 25 % and (25.6 − 6.4) / 64 = 30 %.
		AvgUtilWith: 32.5, AvgUtilWithout: 27.5, PeakUtilWith: 40, PeakUtilWithout: 30, Gain: 5, MidGain: 5,
		AvgMidCPU: 4.5, MidCPUHours: 9 * 0.5, MidUsedCPUHours: 6.4 * 0.5,
		MidCompleted: 1, PeakMidRunning: 4, PeakMidPending: 4,
		FirstHottest: math.NaN(), LastHottest: math.NaN(), FirstSpread: math.NaN(), LastSpread: math.NaN(),
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9), cmpopts.EquateNaNs()); diff != "" {
		t.Errorf("Summarize (-want,+got):\n%s", diff)
	}
}

func TestNiceCeil(t *testing.T) {
	tests := map[string]struct {
		tc      float64
		integer bool
		want    float64
	}{
		"zero":         {tc: 0, want: 1},
		"130 cores":    {tc: 130, want: 150},
		"exact":        {tc: 50, want: 50},
		"small":        {tc: 0.7, want: 0.75},
		"count of one": {tc: 1, integer: true, want: 5},
		"count of 7":   {tc: 7, integer: true, want: 10},
		"count of 48":  {tc: 48, integer: true, want: 50},
		"count of 51":  {tc: 51, integer: true, want: 100},
		"count of 120": {tc: 120, integer: true, want: 250},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := niceCeil(tc.tc)
			if tc.integer {
				got = niceCeilInt(tc.tc)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("(-want,+got):\n%s", diff)
			}
		})
	}
}

func TestChartSVG(t *testing.T) {
	tests := map[string]struct {
		tc         Chart
		wantLines  int
		wantTexts  []string
		wantAbsent []string
	}{
		"two series over a day": {
			tc: Chart{
				Title: `CPU <util> & "more"`, YLabel: "CPU utilization (%)", StartOfDay: 6 * time.Hour,
				X: []time.Duration{0, 6 * time.Hour, 12 * time.Hour, 18 * time.Hour, 24 * time.Hour},
				Series: []Series{
					{Name: "with <colocation>", Values: []float64{20, 40, 60, 40, 20}},
					{Name: "without", Values: []float64{10, 20, 30, 20, 10}, Dashed: true},
				},
			},
			wantLines: 2,
			wantTexts: []string{`CPU <util> & "more"`, "CPU utilization (%)", "time of day (simulated)",
				"06:00", "08:00", "12:00", "18:00", "with <colocation>", "without", "0", "60"},
		},
		"a gap splits a line": {
			tc: Chart{
				Title: "gap", YLabel: "cores",
				X:      []time.Duration{0, time.Hour, 2 * time.Hour, 3 * time.Hour, 4 * time.Hour},
				Series: []Series{{Name: "n", Values: []float64{1, 2, math.NaN(), 3, 4}}},
			},
			wantLines: 2,
			wantTexts: []string{"00:00", "04:00"},
		},
		"no samples": {
			tc:         Chart{Title: "empty", YLabel: "pods", Series: []Series{{Name: "running"}}},
			wantLines:  0,
			wantTexts:  []string{"no samples", "running"},
			wantAbsent: []string{"NaN", "Inf"},
		},
		"a sample just past a day shows no days": {
			tc: Chart{
				Title: "day", YLabel: "pods", Span: 24 * time.Hour,
				X:      []time.Duration{0, 12 * time.Hour, 24*time.Hour + time.Minute},
				Series: []Series{{Name: "running", Values: []float64{1, 2, 3}}},
			},
			wantLines:  1,
			wantTexts:  []string{"00:00", "12:00"},
			wantAbsent: []string{"d1 ", "d2 "},
		},
		"more than a day shows days": {
			tc: Chart{
				Title: "week", YLabel: "pods",
				X:      []time.Duration{0, 36 * time.Hour, 72 * time.Hour},
				Series: []Series{{Name: "running", Values: []float64{1, 2, 3}}},
			},
			wantLines: 1,
			wantTexts: []string{"d1 00:00", "d2 12:00", "d4 00:00"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			svg := string(tc.tc.SVG())
			texts, lines := parseSVG(t, svg)
			if lines != tc.wantLines {
				t.Errorf("%d polylines, want %d", lines, tc.wantLines)
			}
			for _, w := range tc.wantTexts {
				if !slices.Contains(texts, w) {
					t.Errorf("no text %q in %q", w, texts)
				}
			}
			for _, a := range append(tc.wantAbsent, "NaN", "Inf") {
				if strings.Contains(svg, a) {
					t.Errorf("SVG contains %q", a)
				}
			}
		})
	}
}

// parseSVG parses svg as XML, failing the test when it is not well formed, and returns the character data of
// its text and title elements and the number of polylines.
func parseSVG(t *testing.T, svg string) (texts []string, polylines int) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(svg))
	var inText bool
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v\n%s", err, svg)
		}
		switch v := tok.(type) {
		case xml.StartElement:
			inText = v.Name.Local == "text" || v.Name.Local == "title"
			if v.Name.Local == "polyline" {
				polylines++
			}
		case xml.EndElement:
			inText = false
		case xml.CharData:
			if inText {
				texts = append(texts, string(v))
			}
		}
	}
	return texts, polylines
}

func TestRenderHTML(t *testing.T) {
	r := testReport(t)
	r.Stopped = "interrupted (Ctrl-C or SIGTERM)"
	page, err := RenderHTML(r)
	if err != nil {
		t.Fatal(err)
	}
	html := string(page)
	for _, want := range []string{
		"<title>Koord demo: day &lt;b&gt;&#34;&amp;&#34;&lt;/b&gt;</title>",
		"LS &amp; BE &lt;script&gt;alert(1)&lt;/script&gt;",
		"The run ended early: interrupted (Ctrl-C or SIGTERM)",
		// Mean utilization with and without colocation, and the gain.
		"37.5%", "26.7%", "10.8 points",
		"50.0%", "30.0%",
		// Suppressed: 120 moments are 2 node-minutes; LS breaches 60 are 1.
		"2.0 node-minutes", "1.0 node-minutes",
		`href="data.csv"`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	for _, bad := range []string{"<script", "http://", "https://", "NaN"} {
		if strings.Contains(strings.ReplaceAll(html, `xmlns="http://www.w3.org/2000/svg"`, ""), bad) {
			t.Errorf("report contains %q", bad)
		}
	}
	if got := len(regexp.MustCompile(`<svg `).FindAllString(html, -1)); got != len(Charts(r)) {
		t.Errorf("%d charts in the page, want %d", got, len(Charts(r)))
	}
	for _, svg := range regexp.MustCompile(`(?s)<svg .*?</svg>`).FindAllString(html, -1) {
		parseSVG(t, svg)
	}
}

func TestRenderCSV(t *testing.T) {
	r := testReport(t)
	data, err := RenderCSV(r)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(string(data))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 {
		t.Fatalf("%d rows, want a header and 3 samples", len(rows))
	}
	get := func(row int, column string) string {
		for i, h := range rows[0] {
			if h == column {
				return rows[row][i]
			}
		}
		t.Fatalf("no column %q in %v", column, rows[0])
		return ""
	}
	tests := map[string]struct {
		tc   [2]any // row, column
		want string
	}{
		"time of day":            {tc: [2]any{1, "time_of_day"}, want: "10:00"},
		"time of day later":      {tc: [2]any{3, "time_of_day"}, want: "10:20"},
		"elapsed":                {tc: [2]any{2, "elapsed_seconds"}, want: "600"},
		"utilization with":       {tc: [2]any{2, "util_with_colocation_pct"}, want: "50.00"},
		"utilization without":    {tc: [2]any{2, "util_without_colocation_pct"}, want: "25.00"},
		"system":                 {tc: [2]any{1, "system_cpu_cores"}, want: "3.200"},
		"missing batch is empty": {tc: [2]any{1, "batch_cpu_cores:kwok-node-1"}, want: ""},
		"batch per node":         {tc: [2]any{3, "batch_cpu_cores:kwok-node-1"}, want: "7.500"},
		"batch total":            {tc: [2]any{3, "batch_cpu_total_cores"}, want: "13.500"},
		"BE running":             {tc: [2]any{2, "be_pods_running"}, want: "6"},
		"evictions":              {tc: [2]any{2, "evictions"}, want: "1"},
		"breaches":               {tc: [2]any{3, "ls_threshold_breach_moments"}, want: "60"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, get(tc.tc[0].(int), tc.tc[1].(string))); diff != "" {
				t.Errorf("(-want,+got):\n%s", diff)
			}
		})
	}
}

func TestWriteReport(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "report")
	r := testReport(t)
	if err := WriteReport(dir, r); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{ReportHTML, ReportCSV, ReportScenario} {
		info, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if info.Size() == 0 {
			t.Errorf("%s is empty", name)
		}
	}
	got, err := os.ReadFile(filepath.Join(dir, ReportScenario))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(validScenario, string(got)); diff != "" {
		t.Errorf("scenario copy (-want,+got):\n%s", diff)
	}
}

func TestPrintSummary(t *testing.T) {
	r := testReport(t)
	var b strings.Builder
	PrintSummary(&b, r)
	for _, want := range []string{"20m of simulated time in 2m0s, 3 samples, 2 nodes", "37.5%", "26.7%", "gain 10.8 points",
		"BE pods completed       6 (at most 6 running and 2 pending at once)", "BE pods evicted         1"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
}
