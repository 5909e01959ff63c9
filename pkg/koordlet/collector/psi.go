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

package collector

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/pkg/koordlet/metriccache"
)

// psiResource is a resource whose pressure is sampled, with its series and its metric label.
type psiResource struct {
	r          cgroup.PressureResource
	some, full corev1.ResourceName
	// label is the psi_resource_type of the metrics, Koordinator's value.
	label string
}

// psiResources are the sampled resources, in the order of the arrays indexed by resource.
var psiResources = [...]psiResource{
	{cgroup.PressureCPU, metriccache.ResourcePSICPUSomeAvg10, metriccache.ResourcePSICPUFullAvg10, "cpu"},
	{cgroup.PressureMemory, metriccache.ResourcePSIMemorySomeAvg10, metriccache.ResourcePSIMemoryFullAvg10, "mem"},
	{cgroup.PressureIO, metriccache.ResourcePSIIOSomeAvg10, metriccache.ResourcePSIIOFullAvg10, "io"},
}

// PSIRetryRounds is how many rounds the collector leaves a cgroup's pressure of a resource unread after the
// cgroup manager found it not supported there (a kernel without PSI, or on cgroup v1 a cgroup missing from the
// cgroup v2 hierarchy), so that an unsupported node costs one failed read per pod and resource a minute at
// the default interval.
const PSIRetryRounds = 60

// WithPSI makes the collector sample pressure stall information (PSI) in every round: the avg10 of the some
// and full lines of cpu, memory and io, of the node from <procRoot>/pressure and of each pod and host
// application from its cgroup (cgroup.Manager.Pressure), as series of the metriccache.ResourcePSI* resources,
// and into the Metrics given with WithMetrics. Containers are not sampled.
func WithPSI() Option {
	return func(c *Collector) { c.psi = true }
}

// psiState is the pressure sampling state of one cgroup.
type psiState struct {
	// retryAt is, per resource, the first round in which the pressure is read again after it was not
	// supported.
	retryAt [len(psiResources)]uint64
	// gauges are the Prometheus gauges of a pod, some and full per resource, created on first use.
	gauges [len(psiResources)][2]prometheus.Gauge
}

// nodePSI is the node's pressure sampling state.
type nodePSI struct {
	// off is, per resource, whether the kernel lacks its pressure; it is then never read again.
	off [len(psiResources)]bool
	// gauges are the node's Prometheus gauges, some and full per resource, created on first use.
	gauges [len(psiResources)][2]prometheus.Gauge
}

// collectNodePSI samples the node's pressure. A resource the kernel has no pressure for is logged once and not
// read again.
func (c *Collector) collectNodePSI(ctx context.Context, now time.Time) error {
	var errs []error
	for i := range psiResources {
		res := &psiResources[i]
		if c.nodePSI.off[i] {
			continue
		}
		p, err := cgroup.NodePressure(c.procRoot, res.r)
		if errors.Is(err, cgroup.ErrNotSupported) {
			c.nodePSI.off[i] = true
			klog.FromContext(ctx).Info("Found node pressure stall information unsupported, not sampling it", "resource", string(res.r), "err", err)
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		c.appendPSI(metriccache.KindNode, "", res, p, now)
		if c.metrics != nil {
			g := &c.nodePSI.gauges[i]
			if g[0] == nil {
				g[0] = c.metrics.nodePSI.WithLabelValues(res.label, precisionAvg10, degreeSome)
			}
			g[0].Set(p.Some.Avg10)
			if p.HasFull {
				if g[1] == nil {
					g[1] = c.metrics.nodePSI.WithLabelValues(res.label, precisionAvg10, degreeFull)
				}
				g[1].Set(p.Full.Avg10)
			}
		}
	}
	return errors.Join(errs...)
}

// collectPSI samples the pressure of the cgroup of ct into the series of kind and id, and into the pod's gauges
// when pod is not nil. A gone cgroup is skipped quietly; a resource not supported there is left unread for
// PSIRetryRounds rounds.
func (c *Collector) collectPSI(ctx context.Context, kind metriccache.Kind, id string, pod *corev1.Pod, ct *counter, now time.Time) error {
	if ct.psi == nil {
		ct.psi = &psiState{}
	}
	var errs []error
	for i := range psiResources {
		res := &psiResources[i]
		if c.round < ct.psi.retryAt[i] {
			continue
		}
		p, err := c.cg.Pressure(ctx, ct.dir, res.r)
		switch {
		case errors.Is(err, cgroup.ErrNotFound):
			return errors.Join(errs...)
		case errors.Is(err, cgroup.ErrNotSupported):
			ct.psi.retryAt[i] = c.round + PSIRetryRounds
			continue
		case err != nil:
			errs = append(errs, err)
			continue
		}
		c.appendPSI(kind, id, res, p, now)
		if pod != nil && c.metrics != nil {
			c.setPodGauges(pod, ct.psi, i, p)
		}
	}
	return errors.Join(errs...)
}

// appendPSI appends the avg10 of the some line of p, and of the full line when there is one.
func (c *Collector) appendPSI(kind metriccache.Kind, id string, res *psiResource, p cgroup.Pressure, now time.Time) {
	c.cache.Append(key(kind, id, res.some), now, p.Some.Avg10)
	if p.HasFull {
		c.cache.Append(key(kind, id, res.full), now, p.Full.Avg10)
		if res.r == cgroup.PressureCPU && c.metrics != nil {
			c.metrics.cpuFull.Store(true)
		}
	}
}

// setPodGauges sets the gauges of resource i of pod to p.
func (c *Collector) setPodGauges(pod *corev1.Pod, st *psiState, i int, p cgroup.Pressure) {
	g := &st.gauges[i]
	label := psiResources[i].label
	if g[0] == nil {
		g[0] = c.metrics.podPSI.WithLabelValues(string(pod.UID), pod.Name, pod.Namespace, label, precisionAvg10, degreeSome)
	}
	g[0].Set(p.Some.Avg10)
	if p.HasFull {
		if g[1] == nil {
			g[1] = c.metrics.podPSI.WithLabelValues(string(pod.UID), pod.Name, pod.Namespace, label, precisionAvg10, degreeFull)
		}
		g[1].Set(p.Full.Avg10)
	}
}

// deletePodGauges removes the gauges of a pod that finished or left the node, if it has any.
func (c *Collector) deletePodGauges(uid string, st *psiState) {
	if c.metrics == nil || st == nil || st.gauges == ([len(psiResources)][2]prometheus.Gauge{}) {
		return
	}
	c.metrics.podPSI.DeletePartialMatch(prometheus.Labels{labelPodUID: uid})
	st.gauges = [len(psiResources)][2]prometheus.Gauge{}
}
