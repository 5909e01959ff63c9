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

package koordlet

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/koord-dev/koord/pkg/koordlet/collector"
	"github.com/koord-dev/koord/pkg/koordlet/evictor"
	"github.com/koord-dev/koord/pkg/koordlet/metriccache"
	"github.com/koord-dev/koord/pkg/koordlet/prediction"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/cpusuppress"
	koordmetrics "github.com/koord-dev/koord/pkg/metrics"
)

// TestKoordletAliasSources: every alias names a metric koordlet registers, of the alias's type, and has
// Koordinator's node label first.
func TestKoordletAliasSources(t *testing.T) {
	infos, err := koordmetrics.Describe(func(r prometheus.Registerer) error {
		return errors.Join(evictor.NewMetrics().Register(r), cpusuppress.NewMetrics().Register(r), prediction.NewMetrics().Register(r),
			collector.NewMetrics().Register(r))
	})
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]string{}
	labels := map[string][]string{}
	for _, i := range infos {
		types[i.Name] = i.Type
		labels[i.Name] = i.Labels
	}
	for _, a := range koordletAliases("n1", func() bool { return false }) {
		for _, l := range a.Labels {
			if l.From != "" && !slices.Contains(labels[a.Source], l.From) {
				t.Errorf("alias %s: label %s copies %s, which source %s does not have (%v)", a.Name, l.Name, l.From, a.Source, labels[a.Source])
			}
		}
		want := "gauge"
		if a.Type == prometheus.CounterValue {
			want = "counter"
		}
		if got, ok := types[a.Source]; !ok {
			t.Errorf("alias %s: source %s is not a koordlet metric", a.Name, a.Source)
		} else if got != want {
			t.Errorf("alias %s: source %s is a %s, the alias a %s", a.Name, a.Source, got, want)
		}
		if len(a.Labels) == 0 || a.Labels[0].Name != "node" {
			t.Errorf("alias %s: the first label is not node", a.Name)
		}
	}
}

// TestKoordinatorMetrics: the start time is exported under Koordinator's name with the node label, and the
// aliases register beside it (pkg/metrics tests how they map series).
func TestKoordinatorMetrics(t *testing.T) {
	source := prometheus.NewRegistry()
	ev := evictor.NewMetrics()
	if err := ev.Register(source); err != nil {
		t.Fatal(err)
	}
	sup := cpusuppress.NewMetrics()
	if err := sup.Register(source); err != nil {
		t.Fatal(err)
	}
	km, err := newKoordinatorMetrics(source, "n1", func() bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	if err := km.Register(reg); err != nil {
		t.Fatal(err)
	}
	km.started(1.7e9)
	want := `
# HELP koordlet_start_time Koordinator's name: when koordlet started, as a Unix timestamp in seconds.
# TYPE koordlet_start_time gauge
koordlet_start_time{node="n1"} 1.7e+09
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "koordlet_start_time"); err != nil {
		t.Error(err)
	}
}

// TestPodPSIAlias: Koordinator's koordlet_pod_psi carries the node and cpu_full_supported, true for memory and
// io, and for cpu once the kernel showed a full cpu line.
func TestPodPSIAlias(t *testing.T) {
	source := prometheus.NewRegistry()
	psi := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "koord_koordlet_pod_psi", Help: "pod psi"},
		[]string{"pod_uid", "pod_name", "pod_namespace", "psi_resource_type", "psi_precision", "psi_degree"})
	source.MustRegister(psi)
	psi.WithLabelValues("u1", "web", "default", "cpu", "avg10", "some").Set(1.5)
	psi.WithLabelValues("u1", "web", "default", "mem", "avg10", "full").Set(0.25)
	var cpuFull bool
	km, err := newKoordinatorMetrics(source, "n1", func() bool { return cpuFull })
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	if err := km.Register(reg); err != nil {
		t.Fatal(err)
	}
	want := func(cpu string) string {
		return `
# HELP koordlet_pod_psi Koordinator's name: pressure stall information of each running pod's cgroup, in percent of wall time, with cpu_full_supported (koord_koordlet_pod_psi).
# TYPE koordlet_pod_psi gauge
koordlet_pod_psi{cpu_full_supported="` + cpu + `",node="n1",pod_name="web",pod_namespace="default",pod_uid="u1",psi_degree="some",psi_precision="avg10",psi_resource_type="cpu"} 1.5
koordlet_pod_psi{cpu_full_supported="true",node="n1",pod_name="web",pod_namespace="default",pod_uid="u1",psi_degree="full",psi_precision="avg10",psi_resource_type="mem"} 0.25
`
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want("false")), "koordlet_pod_psi"); err != nil {
		t.Errorf("before a full cpu line: %v", err)
	}
	cpuFull = true
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want("true")), "koordlet_pod_psi"); err != nil {
		t.Errorf("after a full cpu line: %v", err)
	}
}

// TestUsageCollector: the latest node, pod and container usage is exported for running pods only, with
// Koordinator's node gauges.
func TestUsageCollector(t *testing.T) {
	cache := metriccache.New(metriccache.Options{NodeSamples: 4, PodSamples: 4, ContainerSamples: 4})
	now := time.Unix(1.7e9, 0)
	add := func(kind metriccache.Kind, id string, cpu, memory float64) {
		cache.Append(metriccache.SeriesKey{Kind: kind, ID: id, Resource: corev1.ResourceCPU}, now, cpu)
		cache.Append(metriccache.SeriesKey{Kind: kind, ID: id, Resource: corev1.ResourceMemory}, now, memory)
	}
	add(metriccache.KindNode, "", 3.5, 8e9)
	add(metriccache.KindPod, "uid-web", 1.25, 1e9)
	add(metriccache.KindContainer, "containerd://c1", 1, 9e8)
	add(metriccache.KindPod, "uid-done", 1, 1e9)
	pods := []*corev1.Pod{
		{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-web"},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
				{Name: "app", ContainerID: "containerd://c1"}, {Name: "starting"},
			}},
		},
		{ObjectMeta: metav1.ObjectMeta{Name: "done", Namespace: "default", UID: "uid-done"}, Status: corev1.PodStatus{Phase: corev1.PodSucceeded}},
	}
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(newUsageCollector(cache, func() []*corev1.Pod { return pods }, "n1")); err != nil {
		t.Fatal(err)
	}
	want := `
# HELP koord_koordlet_container_usage Each container's latest usage as koordlet collected it from its cgroup, by resource: cpu in cores, memory in bytes without the inactive page cache. A container's series go with it.
# TYPE koord_koordlet_container_usage gauge
koord_koordlet_container_usage{container_id="containerd://c1",container_name="app",pod_name="web",pod_namespace="default",pod_uid="uid-web",resource="cpu"} 1
koord_koordlet_container_usage{container_id="containerd://c1",container_name="app",pod_name="web",pod_namespace="default",pod_uid="uid-web",resource="memory"} 9e+08
# HELP koord_koordlet_node_usage The node's latest usage as koordlet collected it, by resource: cpu in cores, memory in bytes without the inactive page cache.
# TYPE koord_koordlet_node_usage gauge
koord_koordlet_node_usage{resource="cpu"} 3.5
koord_koordlet_node_usage{resource="memory"} 8e+09
# HELP koord_koordlet_pod_usage Each pod's latest usage as koordlet collected it from its cgroup, by resource: cpu in cores, memory in bytes without the inactive page cache. A pod's series go with it.
# TYPE koord_koordlet_pod_usage gauge
koord_koordlet_pod_usage{pod_name="web",pod_namespace="default",pod_uid="uid-web",resource="cpu"} 1.25
koord_koordlet_pod_usage{pod_name="web",pod_namespace="default",pod_uid="uid-web",resource="memory"} 1e+09
# HELP koordlet_node_used_cpu_cores Koordinator's name: cpu the node uses, in cores (koord_koordlet_node_usage{resource="cpu"}).
# TYPE koordlet_node_used_cpu_cores gauge
koordlet_node_used_cpu_cores{node="n1"} 3.5
# HELP koordlet_node_used_memory_bytes Koordinator's name: memory the node uses, in bytes (koord_koordlet_node_usage{resource="memory"}).
# TYPE koordlet_node_used_memory_bytes gauge
koordlet_node_used_memory_bytes{node="n1"} 8e+09
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}
