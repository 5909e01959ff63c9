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

package cluster_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/koord-dev/koord/pkg/monitoring"
	"github.com/koord-dev/koord/pkg/monitoring/query"
)

// TestDashboardsAndAlertsOnPrometheus runs the chart's dashboards and alert rules on the local cluster's real
// Prometheus: every component is scraped; every alert rule evaluates without error; every dashboard query
// runs, and returns data whenever Prometheus has series of every metric it reads and it does not filter by
// value (koordlet's metrics of a real node are not served by the simulated node agents, so those queries only
// have to run).
func TestDashboardsAndAlertsOnPrometheus(t *testing.T) {
	ctx := t.Context()
	client, err := promapi.NewClient(promapi.Config{Address: env.c.PrometheusURL()})
	if err != nil {
		t.Fatal(err)
	}
	api := promv1.NewAPI(client)

	jobs := []string{"koord-manager", "koord-scheduler", "koord-descheduler", "koordlet"}
	eventually(ctx, t, time.Minute, "every component scraped", func(ctx context.Context) (bool, string) {
		v, _, err := api.Query(ctx, "up", time.Time{})
		if err != nil {
			return false, err.Error()
		}
		up := map[string]bool{}
		for _, s := range v.(model.Vector) {
			up[string(s.Metric["job"])] = s.Value == 1
		}
		for _, j := range jobs {
			if !up[j] {
				return false, fmt.Sprintf("up by job: %v", up)
			}
		}
		return true, ""
	})

	eventually(ctx, t, time.Minute, "every alert rule evaluated without error", func(ctx context.Context) (bool, string) {
		rules, err := api.Rules(ctx, nil)
		if err != nil {
			return false, err.Error()
		}
		evaluated, bad := 0, []string{}
		for _, g := range rules.Groups {
			for _, r := range g.Rules {
				a, ok := r.(promv1.AlertingRule)
				if !ok {
					continue
				}
				switch {
				case a.Health == promv1.RuleHealthGood:
					evaluated++
				case a.LastEvaluation.IsZero():
					bad = append(bad, a.Name+" not evaluated yet")
				default:
					bad = append(bad, fmt.Sprintf("%s: %s %s", a.Name, a.Health, a.LastError))
				}
			}
		}
		want := len(monitoring.Queries(monitoring.RuleGroups()))
		return evaluated == want, fmt.Sprintf("%d of %d rules good; %s", evaluated, want, strings.Join(bad, "; "))
	})

	// rate() and increase() need two samples in their window: the queries are retried until the scrapes since
	// the cluster started give them.
	var withData, onlyRun int
	eventually(ctx, t, time.Minute, "every dashboard query runs, with data where its metrics have series", func(ctx context.Context) (bool, string) {
		problems, data, run, err := runDashboardQueries(ctx, api)
		if err != nil {
			return false, err.Error()
		}
		withData, onlyRun = data, run
		return len(problems) == 0, strings.Join(problems, "\n")
	})
	t.Logf("Dashboard queries on the local cluster: %d returned data, %d ran without data to show (metrics of a real koordlet, or filters)", withData, onlyRun)
	if withData == 0 {
		t.Error("no dashboard query returned data")
	}
}

// runDashboardQueries runs every dashboard query on Prometheus and returns the queries that failed, or returned
// no data although Prometheus has series of every metric they read and they do not filter by value, and how
// many returned data and how many only ran.
func runDashboardQueries(ctx context.Context, api promv1.API) (problems []string, withData, onlyRun int, err error) {
	names, _, err := api.LabelValues(ctx, model.MetricNameLabel, nil, time.Time{}, time.Time{})
	if err != nil {
		return nil, 0, 0, err
	}
	served := map[string]bool{}
	for _, n := range names {
		served[string(n)] = true
	}
	for _, d := range monitoring.Dashboards() {
		for _, p := range d.Panels {
			for _, q := range p.Queries {
				where := fmt.Sprintf("dashboard %s, panel %q: %q", d.UID, p.Title, q.Expr)
				info, err := query.Inspect(q.Expr)
				if err != nil {
					return nil, 0, 0, fmt.Errorf("%s: %w", where, err)
				}
				v, _, err := api.Query(ctx, q.Expr, time.Time{})
				switch {
				case err != nil:
					problems = append(problems, fmt.Sprintf("%s failed: %v", where, err))
				case info.Filters || !allServed(info.Metrics, served):
					onlyRun++
				case empty(v):
					problems = append(problems, fmt.Sprintf("%s returned no data although Prometheus has its metrics %v", where, info.Metrics))
				default:
					withData++
				}
			}
		}
	}
	return problems, withData, onlyRun, nil
}

// allServed reports whether every metric has series in Prometheus.
func allServed(metrics []string, served map[string]bool) bool {
	return !slices.ContainsFunc(metrics, func(m string) bool { return !served[m] })
}

// empty reports whether a query result holds no sample.
func empty(v model.Value) bool {
	switch r := v.(type) {
	case model.Vector:
		return len(r) == 0
	case model.Matrix:
		return len(r) == 0
	case *model.Scalar, *model.String:
		return false
	}
	return true
}
