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
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/koord-dev/koord/pkg/descheduler"
	"github.com/koord-dev/koord/pkg/koordlet/collector"
	"github.com/koord-dev/koord/pkg/koordlet/evictor"
	"github.com/koord-dev/koord/pkg/koordlet/prediction"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/cpusuppress"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/resctrl"
	"github.com/koord-dev/koord/pkg/koordlet/runtimehooks"
	"github.com/koord-dev/koord/pkg/manager"
	"github.com/koord-dev/koord/pkg/metrics"
	schedmetrics "github.com/koord-dev/koord/pkg/scheduler/metrics"
	"github.com/koord-dev/koord/pkg/sim"
)

var update = flag.Bool("update", false, "rewrite docs/metrics.md from the components' collectors")

// docPath is the generated table of every metric.
const docPath = "../../docs/metrics.md"

// component is a component's metrics, as its wiring registers them.
type component struct {
	name, served string
	register     func(prometheus.Registerer) error
}

var components = []component{
	{
		name:     "koord-manager",
		served:   "served at `/metrics` on `--metrics-bind-address` (`:8080`), with controller-runtime's own metrics; registered by `pkg/manager`",
		register: func(r prometheus.Registerer) error { return manager.NewMetrics().Register(r) },
	},
	{
		name:     "koord-scheduler",
		served:   "served at kube-scheduler's `/metrics` (`--secure-port`), with kube-scheduler's own metrics; registered by `pkg/scheduler` (`RegisteredMetrics`)",
		register: func(r prometheus.Registerer) error { return schedmetrics.NewMetrics().Register(r) },
	},
	{
		name:   "koordlet",
		served: "served at `/metrics` on `--metrics-bind-address` (`:9316`), with the Go and process collectors; registered by `pkg/koordlet` (`Agent`)",
		register: func(r prometheus.Registerer) error {
			return errors.Join(qosmanager.NewMetrics().Register(r), cpusuppress.NewMetrics().Register(r), evictor.NewMetrics().Register(r),
				prediction.NewMetrics().Register(r), runtimehooks.NewMetrics().Register(r), resctrl.NewMetrics().Register(r),
				collector.NewMetrics().Register(r))
		},
	},
	{
		name:     "koord-descheduler",
		served:   "served at `/metrics` on `metricsBindAddress` (`0.0.0.0:10251`), with controller-runtime's own metrics; registered by `pkg/descheduler`",
		register: func(r prometheus.Registerer) error { return descheduler.NewMetrics().Register(r) },
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
`)
	seen := map[string]string{}
	for _, c := range components {
		infos, err := metrics.Describe(c.register)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		fmt.Fprintf(&b, "\n## %s\n\n%s.\n\n| metric | type | labels | meaning |\n|---|---|---|---|\n", c.name, upperFirst(c.served))
		for _, m := range infos {
			if !strings.HasPrefix(m.Name, metrics.Namespace+"_") {
				t.Errorf("%s: metric %s does not start with %s_", c.name, m.Name, metrics.Namespace)
			}
			if other, ok := seen[m.Name]; ok && !(c.name == "simulated node agents" && other == "koordlet") {
				t.Errorf("metric %s is registered by both %s and %s", m.Name, other, c.name)
			}
			seen[m.Name] = c.name
			labels := "–"
			if len(m.Labels) > 0 {
				labels = "`" + strings.Join(m.Labels, "`, `") + "`"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", m.Name, m.Type, labels, strings.ReplaceAll(m.Help, "|", "\\|"))
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

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
