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
	"bytes"
	"encoding/csv"
	"fmt"
	"html/template"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/koord-dev/koord/pkg/sim"
)

// Files of a report directory.
const (
	// ReportHTML is the report with its charts.
	ReportHTML = "report.html"
	// ReportCSV holds the raw samples.
	ReportCSV = "data.csv"
	// ReportScenario is a copy of the scenario that ran.
	ReportScenario = "scenario.yaml"
)

// Report is what a run recorded, for WriteReport.
type Report struct {
	// Scenario is the scenario that ran, after the overrides.
	Scenario *Scenario
	// Source is the scenario's YAML as it was read.
	Source []byte
	// Nodes are the node names, in the order of Sample.BatchCPU.
	Nodes []string
	// Samples are the samples, in order.
	Samples []Sample
	// Started is the wall-clock time the scenario started.
	Started time.Time
	// Wall is how long the scenario ran on the wall clock.
	Wall time.Duration
	// Stopped, when not empty, says why the run ended before the scenario's duration.
	Stopped string
}

// momentsPerMinute turns the agents' moments (one per collection interval of one node) into node-minutes.
var momentsPerMinute = float64(time.Minute / sim.DefaultCollectInterval)

// WriteReport writes report.html, data.csv and scenario.yaml of r into dir, creating it.
func WriteReport(dir string, r *Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create report directory: %w", err)
	}
	page, err := RenderHTML(r)
	if err != nil {
		return err
	}
	data, err := RenderCSV(r)
	if err != nil {
		return err
	}
	for name, content := range map[string][]byte{ReportHTML: page, ReportCSV: data, ReportScenario: r.Source} {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
			return fmt.Errorf("write report: %w", err)
		}
	}
	return nil
}

// Charts returns the report's charts, built from the samples only.
func Charts(r *Report) []Chart {
	n := len(r.Samples)
	x := make([]time.Duration, n)
	col := func(f func(*Sample) float64) []float64 {
		v := make([]float64, n)
		for i := range r.Samples {
			v[i] = f(&r.Samples[i])
		}
		return v
	}
	for i := range r.Samples {
		x[i] = r.Samples[i].Elapsed
	}
	sod, span := r.Scenario.StartOfDay(), r.Scenario.Duration.Duration
	perNode := func(f func(*Sample) []float64) []Series {
		series := make([]Series, len(r.Nodes))
		for k, name := range r.Nodes {
			series[k] = Series{Name: name, Values: col(func(s *Sample) float64 {
				if v := f(s); k < len(v) {
					return v[k]
				}
				return math.NaN()
			})}
		}
		return series
	}
	batch := perNode(func(s *Sample) []float64 { return s.BatchCPU })
	mid := perNode(func(s *Sample) []float64 { return s.MidCPU })
	nodeUtil := perNode(func(s *Sample) []float64 { return s.NodeUtil })
	return []Chart{
		{
			Title: "Cluster CPU utilization, with and without colocation", YLabel: "CPU utilization (%)", StartOfDay: sod, Span: span, X: x,
			Series: []Series{
				{Name: "with colocation (prod + mid + BE + system)", Values: col((*Sample).UtilWith)},
				{Name: "without colocation (prod + system)", Values: col((*Sample).UtilWithout), Dashed: true},
			},
		},
		{
			Title: "CPU usage by class", YLabel: "CPU (cores)", StartOfDay: sod, Span: span, X: x,
			Series: []Series{
				{Name: "prod pods (LS)", Values: col((*Sample).ProdCPU)},
				{Name: "mid pods", Values: col(func(s *Sample) float64 { return s.MidUsedCPU })},
				{Name: "BE pods (after suppression)", Values: col(func(s *Sample) float64 { return s.BECPU })},
				{Name: "BE pods' demand", Values: col(func(s *Sample) float64 { return s.BEDemandCPU }), Dashed: true},
				{Name: "system", Values: col(func(s *Sample) float64 { return s.NodeCPU - s.LSCPU - s.BECPU })},
			},
		},
		{Title: "Batch CPU allocatable per node (kubernetes.io/batch-cpu)", YLabel: "batch CPU (cores)", StartOfDay: sod, Span: span, X: x, Series: batch},
		{
			Title: "Mid CPU allocatable per node (kubernetes.io/mid-cpu, from the predicted prod reclaimable)", YLabel: "mid CPU (cores)",
			StartOfDay: sod, Span: span, X: x, Series: mid,
		},
		{
			Title: "Mid CPU offered and used, cluster", YLabel: "CPU (cores)", StartOfDay: sod, Span: span, X: x,
			Series: []Series{
				{Name: "mid-cpu allocatable", Values: col((*Sample).MidCPUTotal)},
				{Name: "used by mid pods", Values: col(func(s *Sample) float64 { return s.MidUsedCPU }), Dashed: true},
			},
		},
		{
			Title: "Mid pods", YLabel: "pods", StartOfDay: sod, Span: span, X: x, Integer: true,
			Series: []Series{
				{Name: "running", Values: col(func(s *Sample) float64 { return float64(s.MidRunning) })},
				{Name: "pending", Values: col(func(s *Sample) float64 { return float64(s.MidPending) }), Dashed: true},
			},
		},
		{Title: "CPU utilization per node", YLabel: "CPU utilization (%)", StartOfDay: sod, Span: span, X: x, YMax: 100, Series: nodeUtil},
		{
			Title: "Spread of node CPU utilization", YLabel: "CPU utilization (%)", StartOfDay: sod, Span: span, X: x, YMax: 100,
			Series: []Series{
				{Name: "hottest node", Values: col((*Sample).HottestNode)},
				{Name: "coolest node", Values: col((*Sample).CoolestNode), Dashed: true},
				{Name: "standard deviation over the nodes (points)", Values: col((*Sample).NodeSpread)},
			},
		},
		{
			Title: "Pod migrations by koord-descheduler (PodMigrationJobs, cumulative)", YLabel: "jobs", StartOfDay: sod, Span: span, X: x, Integer: true,
			Series: []Series{
				{Name: "created", Values: col(func(s *Sample) float64 { return float64(s.Migrations) })},
				{Name: "succeeded", Values: col(func(s *Sample) float64 { return float64(s.MigrationsSucceeded) })},
				{Name: "failed or aborted", Values: col(func(s *Sample) float64 { return float64(s.MigrationsFailed) }), Dashed: true},
			},
		},
		{
			Title: "BE pods", YLabel: "pods", StartOfDay: sod, Span: span, X: x, Integer: true,
			Series: []Series{
				{Name: "running", Values: col(func(s *Sample) float64 { return float64(s.BERunning) })},
				{Name: "pending", Values: col(func(s *Sample) float64 { return float64(s.BEPending) }), Dashed: true},
			},
		},
		{
			Title: "BE CPU suppression and LS threshold breaches, per sample interval", YLabel: "node-minutes", StartOfDay: sod, Span: span, X: x,
			Series: []Series{
				{Name: "BE CPU suppressed", Values: col(func(s *Sample) float64 { return float64(s.Suppressed) / momentsPerMinute })},
				{Name: "LS usage above threshold", Values: col(func(s *Sample) float64 { return float64(s.LSBreaches) / momentsPerMinute }), Dashed: true},
			},
		},
		{
			Title: "BE pods evicted (memory), per sample interval", YLabel: "pods", StartOfDay: sod, Span: span, X: x, Integer: true,
			Series: []Series{{Name: "evictions", Values: col(func(s *Sample) float64 { return float64(s.Evictions) })}},
		},
	}
}

// reportPage is the data of the HTML template.
type reportPage struct {
	R        *Report
	S        Summary
	Charts   []template.HTML
	NodeCPU  string
	NodeMem  string
	Generate string
}

// reportTemplate is the HTML report: no scripts, no external resources.
var reportTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"pct":   fmtPct,
	"pp":    func(v float64) string { return fmtFloat(v, 1) + " points" },
	"cores": func(v float64) string { return fmtFloat(v, 1) },
	"dur":   func(d time.Duration) string { return shortDuration(d.Round(time.Second)) },
	"nodemin": func(moments int64) string {
		return fmtFloat(float64(moments)/momentsPerMinute, 1)
	},
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Koord demo: {{.R.Scenario.Name}}</title>
<style>
body { font-family: sans-serif; margin: 2em auto; max-width: 1000px; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
td, th { border: 1px solid #ccc; padding: 4px 10px; text-align: left; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.note { color: #555; font-size: 90%; }
.warn { background: #fff3cd; padding: 8px; border: 1px solid #e0c060; }
figure { margin: 2em 0; }
</style>
</head>
<body>
<h1>Koord demo: {{.R.Scenario.Name}}</h1>
{{with .R.Scenario.Description}}<p>{{.}}</p>{{end}}
{{with .R.Stopped}}<p class="warn">The run ended early: {{.}}. The report covers what was recorded until then.</p>{{end}}
<p class="note">{{len .R.Nodes}} nodes of {{.NodeCPU}} CPU and {{.NodeMem}} memory; {{dur .S.Simulated}} of simulated time from
{{.R.Scenario.StartTime}}, at speed {{.R.Scenario.Cluster.Speed}} ({{dur .R.Wall}} of wall time), one sample every
{{dur .R.Scenario.SampleInterval.Duration}}; started {{.Generate}}. Every number below was read from the running
cluster: node usage from the simulated node agents, batch and mid allocatable from the Nodes' status, pods from
the apiserver. Raw samples: <a href="data.csv">data.csv</a>; the scenario: <a href="scenario.yaml">scenario.yaml</a>.</p>

<h2>Summary</h2>
<table>
<tr><th></th><th>with colocation</th><th>without colocation</th></tr>
<tr><td>average CPU utilization</td><td class="n">{{pct .S.AvgUtilWith}}</td><td class="n">{{pct .S.AvgUtilWithout}}</td></tr>
<tr><td>peak CPU utilization</td><td class="n">{{pct .S.PeakUtilWith}}</td><td class="n">{{pct .S.PeakUtilWithout}}</td></tr>
</table>
<table>
<tr><td>utilization gain (average)</td><td class="n">{{pp .S.Gain}}, of which mid pods {{pp .S.MidGain}}</td></tr>
<tr><td>CPU used by BE pods</td><td class="n">{{cores .S.BECPUHours}} core-hours</td></tr>
<tr><td>batch CPU offered (average over the cluster)</td><td class="n">{{cores .S.AvgBatchCPU}} cores ({{cores .S.BatchCPUHours}} core-hours)</td></tr>
<tr><td>mid CPU offered (average over the cluster)</td><td class="n">{{cores .S.AvgMidCPU}} cores ({{cores .S.MidCPUHours}} core-hours)</td></tr>
<tr><td>CPU used by mid pods</td><td class="n">{{cores .S.MidUsedCPUHours}} core-hours</td></tr>
<tr><td>mid pods completed; running / pending, at most</td><td class="n">{{.S.MidCompleted}}; {{.S.PeakMidRunning}} / {{.S.PeakMidPending}}</td></tr>
<tr><td>BE pods completed</td><td class="n">{{.S.BECompleted}}</td></tr>
<tr><td>BE pods running / pending, at most</td><td class="n">{{.S.PeakBERunning}} / {{.S.PeakBEPending}}</td></tr>
<tr><td>BE CPU suppressed</td><td class="n">{{nodemin .S.SuppressedMoments}} node-minutes</td></tr>
<tr><td>BE pods evicted</td><td class="n">{{.S.Evictions}}</td></tr>
<tr><td>LS usage above the suppression threshold</td><td class="n">{{nodemin .S.LSBreaches}} node-minutes</td></tr>
</table>
<table>
<tr><th></th><th>first sample</th><th>last sample</th></tr>
<tr><td>hottest node's CPU utilization</td><td class="n">{{pct .S.FirstHottest}}</td><td class="n">{{pct .S.LastHottest}}</td></tr>
<tr><td>spread of node CPU utilization (standard deviation)</td><td class="n">{{pp .S.FirstSpread}}</td><td class="n">{{pp .S.LastSpread}}</td></tr>
</table>
<table>
<tr><td>pod migrations (PodMigrationJobs)</td><td class="n">{{.S.Migrations}}: {{.S.MigrationsSucceeded}} succeeded, {{.S.MigrationsFailed}} failed or aborted</td></tr>
{{range .S.FailedMigrations}}<tr><td colspan="2">{{.}}</td></tr>
{{end}}</table>
<p class="note">"Without colocation" is the same cluster's usage minus the BE and mid pods' usage: what the prod
pods and the system used. Mid CPU is what koord-manager offered from the node agents' peak prediction
(prodReclaimableMetric) and midUnallocatedPercent. Suppression and threshold counts are in node-minutes of simulated time: one node for one minute.</p>

<h2>Over the day</h2>
{{range .Charts}}<figure>{{.}}</figure>
{{end}}
</body>
</html>
`))

// RenderHTML renders the report page.
func RenderHTML(r *Report) ([]byte, error) {
	charts := Charts(r)
	page := reportPage{R: r, S: Summarize(r.Samples), Charts: make([]template.HTML, len(charts))}
	for i := range charts {
		page.Charts[i] = charts[i].SVG()
	}
	if q := r.Scenario.Cluster.NodeCPU; q != nil {
		page.NodeCPU = q.String()
	}
	if q := r.Scenario.Cluster.NodeMemory; q != nil {
		page.NodeMem = q.String()
	}
	page.Generate = r.Started.UTC().Format(time.RFC3339)
	var b bytes.Buffer
	if err := reportTemplate.Execute(&b, page); err != nil {
		return nil, fmt.Errorf("render report: %w", err)
	}
	return b.Bytes(), nil
}

// RenderCSV renders the samples as CSV, one row per sample, with a header.
func RenderCSV(r *Report) ([]byte, error) {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	header := []string{
		"time_of_day", "elapsed_seconds", "sim_time", "nodes", "cpu_capacity_cores", "node_cpu_cores", "ls_cpu_cores",
		"be_cpu_cores", "be_demand_cpu_cores", "system_cpu_cores", "util_with_colocation_pct",
		"util_without_colocation_pct", "batch_cpu_total_cores", "mid_cpu_total_cores", "mid_used_cpu_cores",
	}
	for _, n := range r.Nodes {
		header = append(header, "batch_cpu_cores:"+n)
	}
	for _, n := range r.Nodes {
		header = append(header, "mid_cpu_cores:"+n)
	}
	for _, n := range r.Nodes {
		header = append(header, "node_cpu_pct:"+n)
	}
	header = append(header, "node_cpu_max_pct", "node_cpu_min_pct", "node_cpu_stddev_pct",
		"ls_pods_running", "be_pods_running", "be_pods_pending", "be_pods_completed",
		"mid_pods_running", "mid_pods_pending", "mid_pods_completed",
		"suppressed_moments", "evictions", "ls_threshold_breach_moments",
		"migrations", "migrations_succeeded", "migrations_failed")
	if err := w.Write(header); err != nil {
		return nil, fmt.Errorf("write csv: %w", err)
	}
	sod := r.Scenario.StartOfDay()
	for i := range r.Samples {
		s := &r.Samples[i]
		row := []string{
			clockLabel(sod+s.Elapsed, r.Scenario.Duration.Duration), strconv.FormatInt(int64(s.Elapsed/time.Second), 10),
			s.SimTime.UTC().Format(time.RFC3339), strconv.Itoa(s.Nodes), fmtFloat(s.CPUCapacity, 3),
			fmtFloat(s.NodeCPU, 3), fmtFloat(s.LSCPU, 3), fmtFloat(s.BECPU, 3), fmtFloat(s.BEDemandCPU, 3),
			fmtFloat(s.NodeCPU-s.LSCPU-s.BECPU, 3), fmtFloat(s.UtilWith(), 2), fmtFloat(s.UtilWithout(), 2),
			fmtFloat(s.BatchCPUTotal(), 3), fmtFloat(s.MidCPUTotal(), 3), fmtFloat(s.MidUsedCPU, 3),
		}
		for _, values := range []struct {
			v        []float64
			decimals int
		}{{s.BatchCPU, 3}, {s.MidCPU, 3}, {s.NodeUtil, 2}} {
			for k := range r.Nodes {
				v := math.NaN()
				if k < len(values.v) {
					v = values.v[k]
				}
				row = append(row, fmtFloat(v, values.decimals))
			}
		}
		row = append(row, fmtFloat(s.HottestNode(), 2), fmtFloat(s.CoolestNode(), 2), fmtFloat(s.NodeSpread(), 2),
			strconv.Itoa(s.LSRunning), strconv.Itoa(s.BERunning), strconv.Itoa(s.BEPending),
			strconv.Itoa(s.BECompleted), strconv.Itoa(s.MidRunning), strconv.Itoa(s.MidPending), strconv.Itoa(s.MidCompleted),
			strconv.FormatInt(s.Suppressed, 10), strconv.FormatInt(s.Evictions, 10),
			strconv.FormatInt(s.LSBreaches, 10),
			strconv.Itoa(s.Migrations), strconv.Itoa(s.MigrationsSucceeded), strconv.Itoa(s.MigrationsFailed))
		if err := w.Write(row); err != nil {
			return nil, fmt.Errorf("write csv: %w", err)
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return nil, fmt.Errorf("write csv: %w", err)
	}
	return b.Bytes(), nil
}

// fmtFloat formats v with decimals; empty for NaN (a missing value).
func fmtFloat(v float64, decimals int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', decimals, 64)
}
