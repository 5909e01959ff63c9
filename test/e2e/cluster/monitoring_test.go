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
// value (the simulated node agents serve koordlet's usage, suppression and eviction metrics, not those of its
// strategies, hooks, PSI and prediction: test/realnode runs koordlet's queries against a real koordlet).
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
	var checks []query.Check
	for _, d := range monitoring.Dashboards() {
		for _, p := range d.Panels {
			for _, q := range p.Queries {
				checks = append(checks, query.Check{Where: fmt.Sprintf("dashboard %s, panel %q", d.UID, p.Title), Expr: q.Expr})
			}
		}
	}
	var outcome query.Outcome
	eventually(ctx, t, time.Minute, "every dashboard query runs, with data where its metrics have series", func(ctx context.Context) (bool, string) {
		var err error
		if outcome, err = query.Run(ctx, api, checks); err != nil {
			return false, err.Error()
		}
		return len(outcome.Problems) == 0, strings.Join(outcome.Problems, "\n")
	})
	var onlyRun []string
	for _, c := range outcome.OnlyRun {
		onlyRun = append(onlyRun, c.Expr)
	}
	t.Logf("Dashboard queries on the local cluster: %d returned data, %d ran without data to show (metrics only a real koordlet serves, "+
		"counters nothing has counted yet, or filters; test/realnode runs koordlet's on a real node): %s",
		len(outcome.WithData), len(outcome.OnlyRun), strings.Join(onlyRun, "; "))
	if len(outcome.WithData) == 0 {
		t.Error("no dashboard query returned data")
	}
}
