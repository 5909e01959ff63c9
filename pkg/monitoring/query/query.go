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

// Package query reads PromQL expressions with Prometheus's own parser, for the checks of Koord's dashboards and
// alert rules. It is a package of its own so that the parser is linked only where those checks run.
package query

import (
	"slices"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// Info is what an expression reads and does.
type Info struct {
	// Metrics are the metric names its selectors read, sorted.
	Metrics []string
	// Filters is set when it drops series by value (a comparison without bool), so that it may return
	// nothing while its metrics have series.
	Filters bool
}

// Inspect parses expr as Prometheus does by default (no experimental functions or syntax).
func Inspect(expr string) (Info, error) {
	parsed, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		return Info{}, err
	}
	var info Info
	parser.Inspect(parsed, func(node parser.Node, _ []parser.Node) error {
		switch n := node.(type) {
		case *parser.VectorSelector:
			if n.Name != "" {
				info.Metrics = append(info.Metrics, n.Name)
				return nil
			}
			for _, m := range n.LabelMatchers {
				if m.Name == model.MetricNameLabel && m.Type == labels.MatchEqual {
					info.Metrics = append(info.Metrics, m.Value)
				}
			}
		case *parser.BinaryExpr:
			if n.Op.IsComparisonOperator() && !n.ReturnBool {
				info.Filters = true
			}
		}
		return nil
	})
	slices.Sort(info.Metrics)
	info.Metrics = slices.Compact(info.Metrics)
	return info, nil
}
