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

package monitoring

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/model"

	"github.com/koord-dev/koord/pkg/metrics/catalog"
	"github.com/koord-dev/koord/pkg/monitoring/query"
)

var update = flag.Bool("update", false, "rewrite the chart's dashboards and alert rules from this package")

// Where the chart keeps the generated files.
const (
	dashboardDir = "../../charts/koord/files/dashboards"
	rulesPath    = "../../charts/koord/files/alerts/koord.rules.yaml"
)

// synthesized are series Prometheus makes itself, which no component registers.
var synthesized = map[string]bool{"up": true}

// TestGeneratedFiles: the chart's dashboards and alert rules are those this package defines. Run with -update
// (make generate) to rewrite them.
func TestGeneratedFiles(t *testing.T) {
	want := map[string][]byte{}
	for _, d := range Dashboards() {
		b, err := d.JSON()
		if err != nil {
			t.Fatal(err)
		}
		want[filepath.Join(dashboardDir, d.UID+".json")] = b
	}
	rules, err := RulesYAML(RuleGroups())
	if err != nil {
		t.Fatal(err)
	}
	want[rulesPath] = rules

	if *update {
		if err := os.RemoveAll(dashboardDir); err != nil {
			t.Fatal(err)
		}
		for path, b := range want {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	existing, err := filepath.Glob(filepath.Join(dashboardDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range existing {
		if _, ok := want[path]; !ok {
			t.Errorf("%s is no dashboard of pkg/monitoring; run make generate", path)
		}
	}
	for path, b := range want {
		got, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%v; run make generate", err)
			continue
		}
		if diff := cmp.Diff(string(b), string(got)); diff != "" {
			t.Errorf("%s is stale; run make generate (-want,+got):\n%s", path, diff)
		}
	}
}

// TestQueries: every dashboard query and alert expression parses as PromQL and names only metrics some
// component serves.
func TestQueries(t *testing.T) {
	served, err := catalog.Series()
	if err != nil {
		t.Fatal(err)
	}
	check := func(where, expr string) {
		t.Helper()
		info, err := query.Inspect(expr)
		if err != nil {
			t.Errorf("%s: %q does not parse: %v", where, expr, err)
			return
		}
		names := info.Metrics
		if len(names) == 0 {
			t.Errorf("%s: %q names no metric", where, expr)
		}
		for _, n := range names {
			if !served[n] && !synthesized[n] {
				t.Errorf("%s: %q names %s, which no component serves", where, expr, n)
			}
		}
	}
	for _, d := range Dashboards() {
		for _, p := range d.Panels {
			if len(p.Queries) == 0 {
				t.Errorf("dashboard %s, panel %q: no query", d.UID, p.Title)
			}
			for _, q := range p.Queries {
				check("dashboard "+d.UID+", panel "+p.Title, q.Expr)
			}
		}
	}
	seen := map[string]bool{}
	for _, g := range RuleGroups() {
		for _, r := range g.Rules {
			where := "alert " + r.Alert
			check(where, r.Expr)
			if seen[r.Alert] {
				t.Errorf("%s: defined twice", where)
			}
			seen[r.Alert] = true
			if _, err := model.ParseDuration(r.For); err != nil {
				t.Errorf("%s: for %q: %v", where, r.For, err)
			}
			if s := r.Labels["severity"]; s != SeverityCritical && s != SeverityWarning {
				t.Errorf("%s: severity %q, want critical or warning", where, s)
			}
			if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
				t.Errorf("%s: no summary or description", where)
			}
		}
	}
}
