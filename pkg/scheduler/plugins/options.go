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

package plugins

import (
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	plfeature "k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/utils/clock"

	"github.com/koord-dev/koord/pkg/scheduler/leadership"
	"github.com/koord-dev/koord/pkg/scheduler/metrics"
)

// Options are what every plugin's factory may be given.
type Options struct {
	// Clock is how the plugin tells time: the age of NodeMetrics and assignments, waiting times, ttls. The
	// real clock unless WithClock.
	Clock clock.WithTickerAndDelayedExecution
	// Metrics records what the plugin counts: private, unregistered metrics unless WithMetrics (the scheduler
	// passes the ones it registered).
	Metrics *metrics.Metrics
	// Features are kube-scheduler's feature gates, resolved once (plugins that reuse kube-scheduler's own
	// algorithms, such as preemption, pass them on): the process's gates unless WithFeatures.
	Features plfeature.Features
	// Leadership tells the plugin's controllers (what writes to the API outside a scheduling cycle) when the
	// replica leads; nil, unless WithLeadership, leads from the start.
	Leadership *leadership.Leadership
	// featuresSet records WithFeatures: a Features value cannot tell "unset" from "all off".
	featuresSet bool
}

// Option sets Options.
type Option func(*Options)

// WithClock makes the plugin tell time by c.
func WithClock(c clock.WithTickerAndDelayedExecution) Option {
	return func(o *Options) { o.Clock = c }
}

// WithMetrics makes the plugin record its metrics in m, which the scheduler registers.
func WithMetrics(m *metrics.Metrics) Option {
	return func(o *Options) { o.Metrics = m }
}

// WithFeatures gives the plugin kube-scheduler's feature gates fts instead of the process's.
func WithFeatures(fts plfeature.Features) Option {
	return func(o *Options) { o.Features, o.featuresSet = fts, true }
}

// WithLeadership makes the plugin's controllers wait until l says the replica leads.
func WithLeadership(l *leadership.Leadership) Option {
	return func(o *Options) { o.Leadership = l }
}

// NewOptions returns the defaults with opts applied.
func NewOptions(opts ...Option) Options {
	o := Options{Clock: clock.RealClock{}}
	for _, opt := range opts {
		opt(&o)
	}
	if o.Metrics == nil {
		o.Metrics = metrics.NewMetrics()
	}
	if !o.featuresSet {
		o.Features = plfeature.NewSchedulerFeaturesFromGates(utilfeature.DefaultFeatureGate)
	}
	return o
}
