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

// Package catalog lists every component's metrics, as the component's wiring registers them: the source of
// docs/metrics.md and of the check that the dashboards and alert rules only use metrics some component serves.
package catalog

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/koord-dev/koord/pkg/descheduler"
	"github.com/koord-dev/koord/pkg/koordlet"
	"github.com/koord-dev/koord/pkg/manager"
	"github.com/koord-dev/koord/pkg/metrics"
	schedmetrics "github.com/koord-dev/koord/pkg/scheduler/metrics"
	"github.com/koord-dev/koord/pkg/sim"
)

// Component is one component's metrics. Besides Koord's own (koord_...), a component may export Koordinator's
// names of what both have, starting with KoordinatorPrefix.
type Component struct {
	// Name is the component's name; Served says where its metrics are served.
	Name, Served string
	// KoordinatorPrefix starts the names of the metrics it exports under Koordinator's names; "" for none.
	KoordinatorPrefix string
	// Register registers its collectors with a registry.
	Register func(prometheus.Registerer) error
}

// Components are Koord's components with metrics.
var Components = []Component{
	{
		Name:              "koord-manager",
		KoordinatorPrefix: "slo_controller_",
		Served:            "served at `/metrics` on `--metrics-bind-address` (`:8080`), with controller-runtime's own metrics; registered by `pkg/manager`",
		Register:          func(r prometheus.Registerer) error { return manager.NewMetrics().Register(r) },
	},
	{
		Name:              "koord-scheduler",
		KoordinatorPrefix: "scheduler_",
		Served:            "served at kube-scheduler's `/metrics` (`--secure-port`), with kube-scheduler's own metrics; registered by `pkg/scheduler` (`RegisteredMetrics`)",
		Register:          func(r prometheus.Registerer) error { return schedmetrics.NewMetrics().Register(r) },
	},
	{
		Name:              "koordlet",
		KoordinatorPrefix: "koordlet_",
		Served:            "served at `/metrics` on `--metrics-bind-address` (`:9316`), with the Go and process collectors; registered by `pkg/koordlet` (`Agent`)",
		Register:          koordlet.RegisterAllMetrics,
	},
	{
		Name:              "koord-descheduler",
		KoordinatorPrefix: "descheduler_",
		Served:            "served at `/metrics` on `metricsBindAddress` (`0.0.0.0:10251`), with controller-runtime's own metrics; registered by `pkg/descheduler`",
		Register:          func(r prometheus.Registerer) error { return descheduler.NewMetrics().Register(r) },
	},
	{
		Name:              SimulatedNodeAgents,
		KoordinatorPrefix: "koordlet_",
		Served: "served by `koordctl up` and `koordctl demo` for the nodes they simulate: their usage, BE CPU suppression and " +
			"evictions under koordlet's names, with a `node` label (which a Prometheus scraping real koordlets adds by relabelling); registered by `pkg/sim`",
		Register: func(r prometheus.Registerer) error { return sim.NewMetrics().Register(r) },
	},
}

// SimulatedNodeAgents names the component of the simulated nodes, which serves some of koordlet's metrics.
const SimulatedNodeAgents = "simulated node agents"

// Series returns the names of every series the components serve: each counter and gauge by its name, each
// histogram and summary by its _bucket (histograms), _sum and _count series and its name.
func Series() (map[string]bool, error) {
	out := map[string]bool{}
	for _, c := range Components {
		infos, err := metrics.Describe(c.Register)
		if err != nil {
			return nil, err
		}
		for _, i := range infos {
			out[i.Name] = true
			switch i.Type {
			case "histogram":
				out[i.Name+"_bucket"], out[i.Name+"_sum"], out[i.Name+"_count"] = true, true, true
			case "summary":
				out[i.Name+"_sum"], out[i.Name+"_count"] = true, true
			}
		}
	}
	return out, nil
}
