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

package metrics

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Alias exports a Koord counter or gauge again under another name and labels, for dashboards and alerts
// written for Koordinator: every series of Source becomes a series of Name, each of whose Labels takes its
// value from a label of the source series (renamed, its values mapped) or from a function of them.
type Alias struct {
	// Source is the full name of the Koord metric.
	Source string
	// Name and Help describe the alias; Type is the source's, prometheus.CounterValue or GaugeValue.
	Name, Help string
	Type       prometheus.ValueType
	// Labels are the alias's labels, in order.
	Labels []AliasLabel
}

// AliasLabel is one label of an Alias.
type AliasLabel struct {
	// Name is the label's name.
	Name string
	// From is the source label it copies; "" when Value computes it.
	From string
	// Values maps the source label's values to the alias's; values not in it are kept.
	Values map[string]string
	// Value computes the label from the source series' labels when From is "".
	Value func(source map[string]string) string
}

// Const is the AliasLabel named name that always has value v.
func Const(name, v string) AliasLabel {
	return AliasLabel{Name: name, Value: func(map[string]string) string { return v }}
}

// aliasCollector is a prometheus.Collector of Aliases.
type aliasCollector struct {
	source  prometheus.Gatherer
	aliases map[string]aliasDesc
}

type aliasDesc struct {
	Alias
	desc *prometheus.Desc
}

// NewAliasCollector returns a collector that exports aliases of the metrics source gathers, at every
// scrape. Register it in a registry other than source, and serve both (prometheus.Gatherers). It fails
// when two aliases have one source or a label neither copies nor computes.
func NewAliasCollector(source prometheus.Gatherer, aliases ...Alias) (prometheus.Collector, error) {
	c := &aliasCollector{source: source, aliases: map[string]aliasDesc{}}
	for _, a := range aliases {
		if _, dup := c.aliases[a.Source]; dup {
			return nil, fmt.Errorf("two aliases of %s", a.Source)
		}
		if a.Type != prometheus.CounterValue && a.Type != prometheus.GaugeValue {
			return nil, fmt.Errorf("alias %s: only counters and gauges have aliases", a.Name)
		}
		names := make([]string, 0, len(a.Labels))
		for _, l := range a.Labels {
			if (l.From == "") == (l.Value == nil) {
				return nil, fmt.Errorf("alias %s: label %s needs exactly one of From and Value", a.Name, l.Name)
			}
			names = append(names, l.Name)
		}
		c.aliases[a.Source] = aliasDesc{Alias: a, desc: prometheus.NewDesc(a.Name, a.Help, names, nil)}
	}
	return c, nil
}

// Describe implements prometheus.Collector.
func (c *aliasCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, a := range c.aliases {
		ch <- a.desc
	}
}

// Collect implements prometheus.Collector. A source that fails to gather is skipped: its own scrape shows the
// error.
func (c *aliasCollector) Collect(ch chan<- prometheus.Metric) {
	families, err := c.source.Gather()
	if err != nil && len(families) == 0 {
		return
	}
	for _, f := range families {
		a, ok := c.aliases[f.GetName()]
		if !ok {
			continue
		}
		typ, want := a.Type, dto.MetricType_GAUGE
		if typ == prometheus.CounterValue {
			want = dto.MetricType_COUNTER
		}
		if f.GetType() != want {
			ch <- prometheus.NewInvalidMetric(a.desc, fmt.Errorf("alias %s of %s: the source is a %s", a.Name, a.Source, f.GetType()))
			continue
		}
		for _, m := range f.GetMetric() {
			source := make(map[string]string, len(m.GetLabel()))
			for _, l := range m.GetLabel() {
				source[l.GetName()] = l.GetValue()
			}
			values := make([]string, len(a.Labels))
			for i, l := range a.Labels {
				if l.Value != nil {
					values[i] = l.Value(source)
					continue
				}
				v := source[l.From]
				if mapped, ok := l.Values[v]; ok {
					v = mapped
				}
				values[i] = v
			}
			value := m.GetGauge().GetValue()
			if typ == prometheus.CounterValue {
				value = m.GetCounter().GetValue()
			}
			metric, err := prometheus.NewConstMetric(a.desc, typ, value, values...)
			if err != nil {
				ch <- prometheus.NewInvalidMetric(a.desc, err)
				continue
			}
			ch <- metric
		}
	}
}

// MetricInfos implements SelfDescribing: aliases export nothing until their sources do.
func (c *aliasCollector) MetricInfos() ([]Info, error) {
	out := make([]Info, 0, len(c.aliases))
	for _, a := range c.aliases {
		info := Info{Name: a.Name, Type: "gauge", Help: a.Help}
		if a.Type == prometheus.CounterValue {
			info.Type = "counter"
		}
		for _, l := range a.Labels {
			info.Labels = append(info.Labels, l.Name)
		}
		out = append(out, info)
	}
	return out, nil
}
