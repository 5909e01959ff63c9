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
	"github.com/prometheus/client_golang/prometheus"

	"github.com/koord-dev/koord/pkg/descheduler"
	"github.com/koord-dev/koord/pkg/koordlet"
	"github.com/koord-dev/koord/pkg/manager"
	"github.com/koord-dev/koord/pkg/metrics"
	schedmetrics "github.com/koord-dev/koord/pkg/scheduler/metrics"
	"github.com/koord-dev/koord/pkg/sim"
)

var update = flag.Bool("update", false, "rewrite docs/metrics.md from the components' collectors")

// docPath is the generated table of every metric.
const docPath = "../../docs/metrics.md"

// component is a component's metrics, as its wiring registers them. Besides Koord's own (koord_...), a
// component may export Koordinator's names of what both have, starting with koordinatorPrefix.
type component struct {
	name, served      string
	koordinatorPrefix string
	register          func(prometheus.Registerer) error
}

var components = []component{
	{
		name:              "koord-manager",
		koordinatorPrefix: "slo_controller_",
		served:            "served at `/metrics` on `--metrics-bind-address` (`:8080`), with controller-runtime's own metrics; registered by `pkg/manager`",
		register:          func(r prometheus.Registerer) error { return manager.NewMetrics().Register(r) },
	},
	{
		name:              "koord-scheduler",
		koordinatorPrefix: "scheduler_",
		served:            "served at kube-scheduler's `/metrics` (`--secure-port`), with kube-scheduler's own metrics; registered by `pkg/scheduler` (`RegisteredMetrics`)",
		register:          func(r prometheus.Registerer) error { return schedmetrics.NewMetrics().Register(r) },
	},
	{
		name:              "koordlet",
		koordinatorPrefix: "koordlet_",
		served:            "served at `/metrics` on `--metrics-bind-address` (`:9316`), with the Go and process collectors; registered by `pkg/koordlet` (`Agent`)",
		register:          koordlet.RegisterAllMetrics,
	},
	{
		name:              "koord-descheduler",
		koordinatorPrefix: "descheduler_",
		served:            "served at `/metrics` on `metricsBindAddress` (`0.0.0.0:10251`), with controller-runtime's own metrics; registered by `pkg/descheduler`",
		register:          func(r prometheus.Registerer) error { return descheduler.NewMetrics().Register(r) },
	},
	{
		name:     "simulated node agents",
		served:   "served by `koordctl up` and `koordctl demo` for the nodes they simulate (their evictions count under koordlet's names); registered by `pkg/sim`",
		register: func(r prometheus.Registerer) error { return sim.NewMetrics().Register(r) },
	},
}

// TestMetricsDoc: docs/metrics.md lists every metric of every component as its collectors describe it. Run
// with -update (make generate) to rewrite it.
func TestMetricsDoc(t *testing.T) {
	var b strings.Builder
	b.WriteString(`# Metrics

<!-- Generated from the components' collectors by "go test ./pkg/metrics -run TestMetricsDoc -update" (make
generate); that test fails when this file is stale. Edit the Help texts in the metrics.go files instead. -->

Every Koord metric is named ` + "`koord_<component>_<name>`" + `, in base units (seconds, bytes, cores), with ` + "`_total`" + `
counters and labels that take a bounded set of values (the node label of koord-manager's per-node gauges is
bounded by the cluster's nodes; their series go with the node). Each component's documentation says which
alerts are worth having.

Where Koord and Koordinator measure the same thing, the component also exports it under Koordinator's name,
labels and units (its second table), so that dashboards and alerts written for Koordinator work unchanged. The
dashboards and alert rules in ` + "`charts/koord/dashboards`" + ` and ` + "`charts/koord/templates/prometheusrule.yaml`" + ` use Koord's names.
`)
	seen := map[string]string{}
	for _, c := range components {
		infos, err := metrics.Describe(c.register)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var own, koordinator []metrics.Info
		for _, m := range infos {
			switch {
			case strings.HasPrefix(m.Name, metrics.Namespace+"_"):
				own = append(own, m)
			case c.koordinatorPrefix != "" && strings.HasPrefix(m.Name, c.koordinatorPrefix):
				koordinator = append(koordinator, m)
			default:
				t.Errorf("%s: metric %s starts with neither %s_ nor Koordinator's %q", c.name, m.Name, metrics.Namespace, c.koordinatorPrefix)
			}
			if other, ok := seen[m.Name]; ok && !(c.name == "simulated node agents" && other == "koordlet") {
				t.Errorf("metric %s is registered by both %s and %s", m.Name, other, c.name)
			}
			seen[m.Name] = c.name
		}
		fmt.Fprintf(&b, "\n## %s\n\n%s.\n", c.name, upperFirst(c.served))
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
