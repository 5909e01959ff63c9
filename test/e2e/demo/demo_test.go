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

package demo_test

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/klog/v2/ktesting"

	"github.com/koord-dev/koord/pkg/koordctl/cluster"
	"github.com/koord-dev/koord/pkg/koordctl/demo"
	"github.com/koord-dev/koord/test/testenv"
)

// tinyScenario runs in well under a minute: 4 simulated hours at speed 1800 are 8 s. TestDemoTinyScenario runs it
// with a mid-tier job (midScenario).
//
// One web pod per node requests far more CPU than it uses: koord-scheduler's load-aware plugin counts it at its
// estimate (85 % of 21 cores, with the system's 1.6 cores 61 % of a node) until its node reports it, and a BE
// pod's estimate on top (2.55 cores) passes the 65 % threshold. The jobs' pods run only because the web pods are
// counted at their reported usage (about 4 cores) a report interval (1 s of wall time) after their placement.
const tinyScenario = `
name: e2e-tiny
cluster:
  nodes: 3
  speed: 1800
  reportInterval: 1s
duration: 4h
sampleInterval: 10m
startTime: "10:00"
services:
  - name: web
    replicas: 3
    requests: {cpu: "21", memory: 8Gi}
    usage:
      cpu: {type: diurnal, base: "4", amplitude: 1500m, peak: 12h}
jobs:
  - name: batch
    arrival: 30m
    count: 12
    parallelism: 6
    runDuration: 1h
    requests: {cpu: "3", memory: 4Gi}
    usage:
      cpu: {type: constant, value: 2500m}
`

// midScenario is tinyScenario with the web pods' peaks predicted after a 30-minute cold start and a job on the
// mid tier arriving at 11:30: each node's web pod reserves 21 cores and uses about 4 to 5.5, so its predicted
// reclaimable is above 14 cores, and the node's mid-cpu follows once koord-manager reads the prediction. The web
// pods use 70 % of their 8Gi (the default): about 0.7Gi of memory is reclaimable per node, enough for the mid
// pods' 256Mi.
var midScenario = strings.Replace(tinyScenario, "  reportInterval: 1s\n", "  reportInterval: 1s\n  prediction: {coldStartDuration: 30m}\n", 1) + `
  - name: stream
    tier: mid
    arrival: 90m
    count: 6
    parallelism: 3
    runDuration: 1h
    requests: {cpu: "2", memory: 256Mi}
    usage:
      cpu: {type: constant, value: 1500m}
`

// timeout bounds the whole run: the cluster's start, the scenario and the stop.
const timeout = 3 * time.Minute

// runDemo runs `koordctl demo` through the command's own code with f's scenario and speed, in a temporary
// directory, within timeout, setting f's directories (f.ReportDir then holds the report), and returns its
// output. It fails the test when the command fails.
func runDemo(t *testing.T, f *demo.Flags) string {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	tmp := t.TempDir()
	binDir, err := testenv.LocalClusterBinDir(ctx, tmp)
	if err != nil {
		t.Fatal(err)
	}
	f.ReportDir = filepath.Join(tmp, "report")
	f.BinDir = binDir
	f.StateDir = filepath.Join(tmp, "state")
	f.KubeconfigOut = ""

	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var out strings.Builder
	started := time.Now()
	err = demo.RunCommand(ctx, f, &out, false)
	t.Logf("koordctl demo took %s; output:\n%s", time.Since(started).Round(time.Second), out.String())
	if err != nil {
		t.Fatalf("koordctl demo: %v; logs in %s", err, filepath.Join(f.StateDir, cluster.LogDir))
	}
	return out.String()
}

func TestDemoTinyScenario(t *testing.T) {
	scenario := filepath.Join(t.TempDir(), "tiny.yaml")
	if err := os.WriteFile(scenario, []byte(midScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	f := demo.NewFlags()
	f.Scenario = scenario
	out := runDemo(t, f)

	for _, name := range []string{demo.ReportHTML, demo.ReportCSV, demo.ReportScenario} {
		if info, err := os.Stat(filepath.Join(f.ReportDir, name)); err != nil || info.Size() == 0 {
			t.Errorf("report file %s: %v (empty: %t)", name, err, err == nil && info.Size() == 0)
		}
	}
	rows := readCSV(t, filepath.Join(f.ReportDir, demo.ReportCSV))
	// 4h every 10m: 25 samples; a slow machine may drop one when a sample is late.
	if len(rows) < 20 {
		t.Errorf("%d samples, want about 25", len(rows))
	}
	var maxRunning, completed float64
	var maxBatch, sumWith, sumWithout float64
	for _, r := range rows {
		maxRunning = max(maxRunning, r["be_pods_running"])
		completed = max(completed, r["be_pods_completed"])
		maxBatch = max(maxBatch, r["batch_cpu_total_cores"])
		sumWith += r["util_with_colocation_pct"]
		sumWithout += r["util_without_colocation_pct"]
	}
	if maxRunning < 1 {
		t.Errorf("no sample saw a BE pod running")
	}
	// The job arrives at 30m; its pods are placed at once, not when their estimates run out.
	firstRunning := -1.0
	for _, r := range rows {
		if r["be_pods_running"] >= 1 {
			firstRunning = r["elapsed_seconds"]
			break
		}
	}
	if firstRunning < 0 || firstRunning > (2*time.Hour).Seconds() {
		t.Errorf("the first sample with a BE pod running is at %vs of simulated time, want one within 90 minutes of the job's arrival at 1800s", firstRunning)
	}
	if completed < 1 {
		t.Errorf("no BE pod completed")
	}
	if maxBatch <= 0 {
		t.Errorf("no sample saw batch-cpu allocatable on a node")
	}
	if sumWith <= sumWithout {
		t.Errorf("mean utilization with colocation %.1f%% is not above without %.1f%%", sumWith/float64(len(rows)), sumWithout/float64(len(rows)))
	}
	// The mid tier: the simulated nodes report a prediction, koord-manager offers mid-cpu from it, and the
	// koord-mid pods run on it and complete.
	var maxMid, maxMidRunning, midCompleted, maxMidUsed float64
	for _, r := range rows {
		maxMid = max(maxMid, r["mid_cpu_total_cores"])
		maxMidRunning = max(maxMidRunning, r["mid_pods_running"])
		midCompleted = max(midCompleted, r["mid_pods_completed"])
		maxMidUsed = max(maxMidUsed, r["mid_used_cpu_cores"])
	}
	t.Logf("mid CPU offered at most %.1f cores, %v mid pods running at most, %v completed, mid pods used at most %.1f cores",
		maxMid, maxMidRunning, midCompleted, maxMidUsed)
	if maxMid <= 0 {
		t.Errorf("no sample saw mid-cpu allocatable on a node")
	}
	if maxMidRunning < 1 || midCompleted < 1 || maxMidUsed <= 0 {
		t.Errorf("mid pods: at most %v running, %v completed, %.1f cores used; want some of each", maxMidRunning, midCompleted, maxMidUsed)
	}
	html, err := os.ReadFile(filepath.Join(f.ReportDir, demo.ReportHTML))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(html), "<svg "); n < 5 {
		t.Errorf("report has %d charts, want at least 5", n)
	}
	if !strings.Contains(out, "Report: ") {
		t.Errorf("the output names no report")
	}
}

// TestDemoHotNodes runs the built-in hot-nodes scenario at twice its speed (an hour in 30 s): a service starts
// packed on two of ten nodes, and koord-descheduler must have cooled both under LowNodeLoad's 75 % CPU threshold
// by the end through PodMigrationJobs that succeeded, with the spread of node usage smaller than at the start
// and every pod of the services running.
func TestDemoHotNodes(t *testing.T) {
	f := demo.NewFlags()
	f.Scenario = "hot-nodes"
	f.Speed = 120
	runDemo(t, f)
	rows := readCSV(t, filepath.Join(f.ReportDir, demo.ReportCSV))
	if len(rows) < 2 {
		t.Fatalf("%d samples, want about 60", len(rows))
	}
	first, last := rows[0], rows[len(rows)-1]
	t.Logf("hottest node %.1f%% -> %.1f%%, spread %.1f -> %.1f points, %v migrations (%v succeeded, %v failed)",
		first["node_cpu_max_pct"], last["node_cpu_max_pct"], first["node_cpu_stddev_pct"], last["node_cpu_stddev_pct"],
		last["migrations"], last["migrations_succeeded"], last["migrations_failed"])
	if first["node_cpu_max_pct"] <= 75 {
		t.Errorf("the hottest node is at %.1f%% at the start, want above the 75%% threshold", first["node_cpu_max_pct"])
	}
	if last["node_cpu_max_pct"] >= 75 {
		t.Errorf("the hottest node is at %.1f%% at the end, want under the 75%% threshold", last["node_cpu_max_pct"])
	}
	if last["node_cpu_stddev_pct"] >= first["node_cpu_stddev_pct"] {
		t.Errorf("spread of node CPU %.1f at the end, want below %.1f at the start", last["node_cpu_stddev_pct"], first["node_cpu_stddev_pct"])
	}
	if last["migrations_succeeded"] < 1 || last["migrations_failed"] > 0 {
		t.Errorf("%v migrations succeeded and %v failed, want some and none", last["migrations_succeeded"], last["migrations_failed"])
	}
	// checkout's 16 pods and web's 30, all running again once their migrations ended.
	if last["ls_pods_running"] != 46 {
		t.Errorf("%v service pods running at the end, want 46", last["ls_pods_running"])
	}
}

// readCSV reads the samples of data.csv as maps from column to value; empty cells are left out.
func readCSV(t *testing.T, path string) []map[string]float64 {
	t.Helper()
	file, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = file.Close() }()
	records, err := csv.NewReader(file).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(records) < 1 {
		t.Fatal("data.csv has no header")
	}
	var rows []map[string]float64
	for _, rec := range records[1:] {
		row := map[string]float64{}
		for i, h := range records[0] {
			if v, err := strconv.ParseFloat(rec[i], 64); err == nil {
				row[h] = v
			}
		}
		rows = append(rows, row)
	}
	return rows
}
