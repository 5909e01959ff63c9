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

package metrics_test

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/koord-dev/koord/pkg/metrics"
	"github.com/koord-dev/koord/pkg/metrics/catalog"
)

var update = flag.Bool("update", false, "rewrite docs/metrics.md from the components' collectors")

// docPath is the generated table of every metric.
const docPath = "../../docs/metrics.md"

// TestMetricsDoc: docs/metrics.md lists every metric of every component as its collectors describe it. Run
// with -update (make generate) to rewrite it.
func TestMetricsDoc(t *testing.T) {
	var b strings.Builder
	b.WriteString(`# Metrics

<!-- Generated from the components' collectors by "go test ./pkg/metrics -run TestMetricsDoc -update" (make
generate); that test fails when this file is stale. Edit the Help texts in the metrics.go files instead. -->

Every Koord metric is named ` + "`koord_<component>_<name>`" + `, in base units (seconds, bytes, cores), with ` + "`_total`" + `
counters and labels that take a bounded set of values (the node label of koord-manager's per-node gauges is
bounded by the cluster's nodes; their series go with the node). Counters whose labels take a fixed set of
values (koordlet's evictions by the reasons of its enabled strategies and rejections by cause, runtime hook
calls, QoS strategy errors; gang preemptions by result; migration evictions by policy and result) export every
combination from the start, at 0, so that a dashboard shows 0 rather than no data. Each component's documentation says which alerts are worth having.

Where Koord and Koordinator measure the same thing, the component also exports it under Koordinator's name,
labels and units (its second table), so that dashboards and alerts written for Koordinator work unchanged. The
dashboards and alert rules in ` + "`charts/koord/dashboards`" + ` and ` + "`charts/koord/templates/prometheusrule.yaml`" + ` use Koord's names.
`)
	seen := map[string]string{}
	for _, c := range catalog.Components {
		infos, err := metrics.Describe(c.Register)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		var own, koordinator []metrics.Info
		for _, m := range infos {
			switch {
			case strings.HasPrefix(m.Name, metrics.Namespace+"_"):
				own = append(own, m)
			case c.KoordinatorPrefix != "" && strings.HasPrefix(m.Name, c.KoordinatorPrefix):
				koordinator = append(koordinator, m)
			default:
				t.Errorf("%s: metric %s starts with neither %s_ nor Koordinator's %q", c.Name, m.Name, metrics.Namespace, c.KoordinatorPrefix)
			}
			if other, ok := seen[m.Name]; ok && !(c.Name == catalog.SimulatedNodeAgents && other == "koordlet") {
				t.Errorf("metric %s is registered by both %s and %s", m.Name, other, c.Name)
			}
			seen[m.Name] = c.Name
		}
		fmt.Fprintf(&b, "\n## %s\n\n%s.\n", c.Name, upperFirst(c.Served))
		writeTable(&b, own)
		if len(koordinator) > 0 {
			fmt.Fprintf(&b, "\nUnder Koordinator's names, for its dashboards and alerts:\n")
			writeTable(&b, koordinator)
		}
	}
	want := b.String()
	if *update {
		if err := os.WriteFile(docPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatalf("%v (run: go test ./pkg/metrics -run TestMetricsDoc -update)", err)
	}
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("docs/metrics.md is stale; run make generate (-want,+got):\n%s", diff)
	}
}

// writeTable writes the table of infos.
func writeTable(b *strings.Builder, infos []metrics.Info) {
	b.WriteString("\n| metric | type | labels | meaning |\n|---|---|---|---|\n")
	for _, m := range infos {
		labels := "–"
		if len(m.Labels) > 0 {
			labels = "`" + strings.Join(m.Labels, "`, `") + "`"
		}
		fmt.Fprintf(b, "| `%s` | %s | %s | %s |\n", m.Name, m.Type, labels, strings.ReplaceAll(m.Help, "|", "\\|"))
	}
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
