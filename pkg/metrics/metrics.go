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

// Package metrics holds what Koord's components share about their Prometheus metrics: the namespace and
// subsystems their names start with, and Describe, which reads what a component's collectors export; the
// table of every metric in docs/metrics.md is generated from it and checked by a test.
//
// Every component package with metrics follows one pattern, in one metrics.go: a Metrics struct of its
// collectors (Namespace and Subsystem always set), NewMetrics() creating them unregistered, and
// Register(prometheus.Registerer) error. Nothing registers at import time: a component's wiring registers
// the Metrics it builds in the registry it serves (its own, or controller-runtime's or kube-scheduler's), and
// hands them to the code that records, which keeps private unregistered ones when given none.
package metrics

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Namespace starts the name of every Koord metric.
const Namespace = "koord"

// Subsystems: the component a metric belongs to, the second part of its name.
const (
	SubsystemManager     = "manager"
	SubsystemScheduler   = "scheduler"
	SubsystemKoordlet    = "koordlet"
	SubsystemSim         = "sim"
	SubsystemDescheduler = "descheduler"
)

// Info describes one metric a component exports.
type Info struct {
	// Name is the metric's full name.
	Name string
	// Type is counter, gauge, histogram or summary.
	Type string
	// Labels are its variable labels, in order.
	Labels []string
	// Help is its help text.
	Help string
}

// SelfDescribing is a collector that says what it exports, for Describe: one whose series exist only once its
// sources have data (computed at scrape time), so that their type cannot be read from what it collects.
type SelfDescribing interface {
	prometheus.Collector
	// MetricInfos describes the metrics the collector exports.
	MetricInfos() ([]Info, error)
}

// Describe registers a component's collectors, through register, with a registry that only records them, and
// returns the metrics they export, sorted by name.
func Describe(register func(prometheus.Registerer) error) ([]Info, error) {
	var r recorder
	if err := register(&r); err != nil {
		return nil, err
	}
	var out []Info
	for _, c := range r.collectors {
		if d, ok := c.(SelfDescribing); ok {
			infos, err := d.MetricInfos()
			if err != nil {
				return nil, err
			}
			out = append(out, infos...)
			continue
		}
		infos, err := describe(c)
		if err != nil {
			return nil, err
		}
		out = append(out, infos...)
	}
	slices.SortFunc(out, func(a, b Info) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// recorder is a prometheus.Registerer that keeps what is registered.
type recorder struct{ collectors []prometheus.Collector }

func (r *recorder) Register(c prometheus.Collector) error {
	r.collectors = append(r.collectors, c)
	return nil
}

func (r *recorder) MustRegister(cs ...prometheus.Collector) {
	r.collectors = append(r.collectors, cs...)
}

func (r *recorder) Unregister(prometheus.Collector) bool { return false }

// descPattern parses prometheus.Desc.String().
var descPattern = regexp.MustCompile(`^Desc\{fqName: ("(?:[^"\\]|\\.)*"), help: ("(?:[^"\\]|\\.)*"), .*variableLabels: \{([^{}]*)\}\}$`)

// describe returns the metrics of one collector.
func describe(c prometheus.Collector) ([]Info, error) {
	ch := make(chan *prometheus.Desc, 16)
	go func() {
		c.Describe(ch)
		close(ch)
	}()
	var out []Info
	for d := range ch {
		info, err := infoOf(d)
		if err != nil {
			return nil, err
		}
		info.Type, err = typeOf(c)
		if err != nil {
			return nil, fmt.Errorf("metric %s: %w", info.Name, err)
		}
		out = append(out, info)
	}
	return out, nil
}

// GaugeInfos describes the gauges of descs, for a SelfDescribing collector whose gauges are computed at scrape
// time.
func GaugeInfos(descs ...*prometheus.Desc) ([]Info, error) {
	out := make([]Info, 0, len(descs))
	for _, d := range descs {
		info, err := infoOf(d)
		if err != nil {
			return nil, err
		}
		info.Type = "gauge"
		out = append(out, info)
	}
	return out, nil
}

// infoOf reads the name, help and variable labels of d.
func infoOf(d *prometheus.Desc) (Info, error) {
	m := descPattern.FindStringSubmatch(d.String())
	if m == nil {
		return Info{}, fmt.Errorf("cannot read the description %s", d)
	}
	name, err := strconv.Unquote(m[1])
	if err != nil {
		return Info{}, fmt.Errorf("metric name in %s: %w", d, err)
	}
	help, err := strconv.Unquote(m[2])
	if err != nil {
		return Info{}, fmt.Errorf("help of %s: %w", name, err)
	}
	info := Info{Name: name, Help: help}
	if m[3] != "" {
		info.Labels = strings.Split(m[3], ",")
	}
	return info, nil
}

// typeOf returns the type of the metrics of c: by its Go type for vectors, by what it collects otherwise.
func typeOf(c prometheus.Collector) (string, error) {
	switch c.(type) {
	case *prometheus.CounterVec:
		return "counter", nil
	case *prometheus.GaugeVec:
		return "gauge", nil
	case *prometheus.HistogramVec:
		return "histogram", nil
	case *prometheus.SummaryVec:
		return "summary", nil
	}
	ch := make(chan prometheus.Metric, 1)
	go func() {
		c.Collect(ch)
		close(ch)
	}()
	var typ string
	for m := range ch {
		var pb dto.Metric
		if err := m.Write(&pb); err != nil {
			return "", err
		}
		switch {
		case pb.Counter != nil:
			typ = "counter"
		case pb.Gauge != nil:
			typ = "gauge"
		case pb.Histogram != nil:
			typ = "histogram"
		case pb.Summary != nil:
			typ = "summary"
		}
	}
	if typ == "" {
		return "", fmt.Errorf("collector %T exports nothing to tell its type by", c)
	}
	return typ, nil
}
