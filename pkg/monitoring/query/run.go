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

package query

import (
	"context"
	"fmt"
	"slices"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// Check is one expression to run on a Prometheus; Where says where it comes from, for messages.
type Check struct {
	Where, Expr string
}

// Outcome is what running checks found.
type Outcome struct {
	// WithData are the checks that returned data.
	WithData []Check
	// OnlyRun are the checks that ran without data, and were not expected to have any: Prometheus has no
	// series of a metric they read, or they filter by value.
	OnlyRun []Check
	// Problems are the checks that failed, or returned no data although Prometheus has series of every metric
	// they read and they do not filter by value.
	Problems []string
}

// Run runs every check on api at the current time.
func Run(ctx context.Context, api promv1.API, checks []Check) (Outcome, error) {
	var out Outcome
	names, _, err := api.LabelValues(ctx, model.MetricNameLabel, nil, time.Time{}, time.Time{})
	if err != nil {
		return out, fmt.Errorf("list the metric names Prometheus has: %w", err)
	}
	served := make(map[string]bool, len(names))
	for _, n := range names {
		served[string(n)] = true
	}
	for _, c := range checks {
		info, err := Inspect(c.Expr)
		if err != nil {
			return out, fmt.Errorf("%s: %w", c.Where, err)
		}
		v, _, err := api.Query(ctx, c.Expr, time.Time{})
		switch {
		case err != nil:
			out.Problems = append(out.Problems, fmt.Sprintf("%s: %q failed: %v", c.Where, c.Expr, err))
		case info.Filters || slices.ContainsFunc(info.Metrics, func(m string) bool { return !served[m] }):
			out.OnlyRun = append(out.OnlyRun, c)
		case empty(v):
			out.Problems = append(out.Problems, fmt.Sprintf("%s: %q returned no data although Prometheus has its metrics %v", c.Where, c.Expr, info.Metrics))
		default:
			out.WithData = append(out.WithData, c)
		}
	}
	return out, nil
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
