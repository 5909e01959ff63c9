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
	"encoding/json"
	"fmt"
)

// Dashboard is a Grafana dashboard: panels laid out left to right, top to bottom, each of PromQL queries
// against the dashboard's Prometheus data source (chosen in its datasource variable).
type Dashboard struct {
	// UID is Grafana's identifier, also the file name.
	UID string
	// Title and Description are shown in Grafana.
	Title, Description string
	// Panels are the dashboard's graphs and figures.
	Panels []Panel
}

// Panel is one graph (PanelTimeSeries) or figure (PanelStat).
type Panel struct {
	Title, Description string
	// Kind is PanelTimeSeries or PanelStat.
	Kind string
	// Unit is Grafana's unit of the values, e.g. "short", "bytes", "percent", "s", "reqps".
	Unit string
	// Width is the panel's width in Grafana's 24 columns; 12 when 0.
	Width int
	// Queries are the PromQL queries the panel draws.
	Queries []Query
}

// Query is one PromQL query of a panel.
type Query struct {
	// Expr is the PromQL expression.
	Expr string
	// Legend is Grafana's legend format, e.g. "{{node}}".
	Legend string
}

// Panel kinds.
const (
	PanelTimeSeries = "timeseries"
	PanelStat       = "stat"
)

// panelHeight is the height of every panel, in Grafana's grid units.
const panelHeight = 8

// JSON returns the dashboard in Grafana's JSON model, indented, with a trailing newline.
func (d Dashboard) JSON() ([]byte, error) {
	panels := make([]map[string]any, 0, len(d.Panels))
	x, y := 0, 0
	for i, p := range d.Panels {
		width := p.Width
		if width == 0 {
			width = 12
		}
		if width > 24 {
			return nil, fmt.Errorf("dashboard %s: panel %q is %d columns wide, more than 24", d.UID, p.Title, width)
		}
		if x+width > 24 {
			x, y = 0, y+panelHeight
		}
		targets := make([]map[string]any, 0, len(p.Queries))
		for j, q := range p.Queries {
			targets = append(targets, map[string]any{
				"datasource":   datasourceRef,
				"expr":         q.Expr,
				"legendFormat": q.Legend,
				"refId":        string(rune('A' + j)),
			})
		}
		panel := map[string]any{
			"id":          i + 1,
			"type":        p.Kind,
			"title":       p.Title,
			"description": p.Description,
			"datasource":  datasourceRef,
			"gridPos":     map[string]int{"x": x, "y": y, "w": width, "h": panelHeight},
			"targets":     targets,
			"fieldConfig": map[string]any{"defaults": map[string]any{"unit": p.Unit}, "overrides": []any{}},
		}
		switch p.Kind {
		case PanelTimeSeries:
			panel["options"] = map[string]any{"legend": map[string]any{"displayMode": "list", "placement": "bottom"}, "tooltip": map[string]any{"mode": "multi"}}
		case PanelStat:
			panel["options"] = map[string]any{"reduceOptions": map[string]any{"calcs": []string{"lastNotNull"}}, "colorMode": "value"}
		default:
			return nil, fmt.Errorf("dashboard %s: panel %q has kind %q, want %s or %s", d.UID, p.Title, p.Kind, PanelTimeSeries, PanelStat)
		}
		panels = append(panels, panel)
		x += width
	}
	model := map[string]any{
		"uid":           d.UID,
		"title":         d.Title,
		"description":   d.Description,
		"tags":          []string{"koord"},
		"editable":      true,
		"schemaVersion": 39,
		"time":          map[string]string{"from": "now-1h", "to": "now"},
		"refresh":       "30s",
		"timezone":      "browser",
		"panels":        panels,
		"templating": map[string]any{"list": []any{map[string]any{
			"name": "datasource", "label": "Data source", "type": "datasource", "query": "prometheus",
			"current": map[string]any{},
		}}},
	}
	out, err := json.MarshalIndent(model, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("dashboard %s: %w", d.UID, err)
	}
	return append(out, '\n'), nil
}

// datasourceRef points queries at the data source the datasource variable names.
var datasourceRef = map[string]string{"type": "prometheus", "uid": "${datasource}"}

// Queries returns every PromQL expression of the dashboard.
func (d Dashboard) Queries() []string {
	var out []string
	for _, p := range d.Panels {
		for _, q := range p.Queries {
			out = append(out, q.Expr)
		}
	}
	return out
}
